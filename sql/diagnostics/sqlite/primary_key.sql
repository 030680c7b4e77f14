-- answers: the primary key columns of a table, in key order (to find a hand-built queue's
--          ordering key)
-- params: :table
-- min version: SQLite 3.16
-- privilege: read access to the file
-- cost: reads the schema
SELECT name AS column_name FROM pragma_table_info(:table) WHERE pk > 0 ORDER BY pk
