-- What the SQLite engine asks of the database itself (outside any queue).

-- name: server_version
SELECT sqlite_version() AS v

-- name: table_exists
SELECT 1 AS x FROM sqlite_schema WHERE type = 'table' AND name = :name

-- name: column_types
SELECT name AS column_name, lower(type) AS data_type FROM pragma_table_info(:name)

-- name: savepoint
-- pop: a mark before its batch, so a batch the output did not deliver is rolled back.
SAVEPOINT {mark.bare}

-- name: rollback_to_savepoint
ROLLBACK TO SAVEPOINT {mark.bare}
