-- answers: which tables and views of the file are named as a queue table may be: qadmin's
--          catalog (qadmin_queues) or a job-queue library's table; qadmin status starts here
-- params: :names (the table names, comma-separated, bound)
-- min version: SQLite 3.16
-- privilege: read access to the file
-- cost: reads the schema
SELECT 'main' AS schema_name, name AS table_name
FROM sqlite_master
WHERE type IN ('table', 'view') AND instr(',' || :names || ',', ',' || name || ',') > 0
ORDER BY name
LIMIT 10000
