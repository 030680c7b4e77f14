-- answers: which tables and views, in every schema this role can see, are named as a queue
--          table may be: qadmin's catalog (qadmin_queues) or a job-queue library's table;
--          qadmin status starts from here (the library is then told from the columns)
-- params: :names (the table names, comma-separated, bound)
-- min version: PostgreSQL 10
-- privilege: none (pg_class); a schema without USAGE is left out: has_schema_privilege
-- cost: catalog only; no lock on any table
SELECT n.nspname AS schema_name, c.relname AS table_name
FROM pg_catalog.pg_class AS c
JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p', 'v')
  AND c.relname = ANY (string_to_array(:names, ','))
  AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'
  AND NOT c.relispartition
  AND has_schema_privilege(n.oid, 'USAGE')
ORDER BY n.nspname, c.relname
LIMIT 10000
