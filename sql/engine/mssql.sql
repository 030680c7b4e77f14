-- What the SQL Server engine asks of the server itself (outside any queue).

-- name: server_version
SELECT @@VERSION AS v

-- name: default_schema
SELECT SCHEMA_NAME() AS s

-- name: table_exists
SELECT 1 AS x
FROM sys.tables AS t
JOIN sys.schemas AS s ON s.schema_id = t.schema_id
WHERE s.name = :schema AND t.name = :name

-- name: schema_exists
SELECT 1 AS x FROM sys.schemas WHERE name = :schema

-- name: begin
BEGIN TRANSACTION

-- name: commit
COMMIT TRANSACTION

-- name: rollback
IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION

-- name: savepoint
-- pop: a mark before its batch, so a batch the output did not deliver is rolled back.
SAVE TRANSACTION {mark.bare}

-- name: rollback_to_savepoint
ROLLBACK TRANSACTION {mark.bare}
