-- answers: which tables and views, in every database this account can see, are named as a
--          queue table may be: qadmin's catalog (qadmin_queues) or a job-queue library's
--          table; qadmin status starts from here (the library is then told from the columns)
-- params: :names (the table names, comma-separated, bound)
-- min version: MySQL 8.0, MariaDB 10.5
-- privilege: any privilege on the table (information_schema shows only those)
-- cost: data dictionary only; no lock on any table
SELECT TABLE_SCHEMA AS schema_name, TABLE_NAME AS table_name
FROM information_schema.TABLES
WHERE FIND_IN_SET(TABLE_NAME, :names) > 0
  AND TABLE_SCHEMA NOT IN ('mysql', 'sys', 'performance_schema', 'information_schema')
ORDER BY TABLE_SCHEMA, TABLE_NAME
LIMIT 10000
