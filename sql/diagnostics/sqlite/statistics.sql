-- answers: whether ANALYZE gathered statistics for the queue table's indexes (sqlite_stat1
--          rows); without them the planner uses fixed guesses
-- params: :table (rows only)
-- min version: SQLite 3.16
-- privilege: read access to the file
-- cost: reads the schema, then at most the table's few sqlite_stat1 rows (rows runs only
--       when main says sqlite_stat1 exists: a query naming a missing table fails)
-- name: main
SELECT count(*) AS present FROM sqlite_schema WHERE type = 'table' AND name = 'sqlite_stat1'

-- name: rows
SELECT count(*) AS stat_rows FROM sqlite_stat1 WHERE tbl = :table
