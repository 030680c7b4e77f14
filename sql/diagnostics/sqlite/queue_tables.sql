-- answers: which tables and views of the file are named as a queue table may be: qadmin's
--          catalog (qadmin_queues) or a job-queue library's table; qadmin status starts here
-- params: :names (the table names, comma-separated, bound); :prefixes (name prefixes of
--         libraries that make a table per named queue, comma-separated, bound: persist-queue's
--         ack_queue_NAME; a candidate's columns are checked by detection after)
-- min version: SQLite 3.16
-- privilege: read access to the file
-- cost: reads the schema
SELECT 'main' AS schema_name, name AS table_name
FROM sqlite_master
WHERE type IN ('table', 'view')
  AND (instr(',' || :names || ',', ',' || name || ',') > 0
       OR EXISTS (WITH RECURSIVE split(p, rest) AS (
                    SELECT '', :prefixes || ','
                    UNION ALL
                    SELECT substr(rest, 1, instr(rest, ',') - 1), substr(rest, instr(rest, ',') + 1)
                    FROM split WHERE rest <> '')
                  SELECT 1 FROM split
                  WHERE p <> '' AND length(name) > length(p) AND substr(name, 1, length(p)) = p))
ORDER BY name
LIMIT 10000
