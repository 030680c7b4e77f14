-- answers: which tables and views, in every schema of the database this login can see, are
--          named as a queue table may be: qadmin's catalog (qadmin_queues) or a job-queue
--          library's table; qadmin status starts from here
-- params: :names (the table names, comma-separated, bound)
-- min version: SQL Server 2016 (STRING_SPLIT)
-- privilege: VIEW DEFINITION, or any permission on the table (metadata visibility)
-- cost: catalog only; no lock on any table
SELECT TOP (10000) s.name AS schema_name, o.name AS table_name
FROM sys.objects AS o
JOIN sys.schemas AS s ON s.schema_id = o.schema_id
WHERE o.type IN ('U', 'V')
  AND o.name IN (SELECT value FROM STRING_SPLIT(:names, ','))
ORDER BY s.name, o.name
