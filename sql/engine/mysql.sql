-- What the MySQL / MariaDB engine asks of the server itself (outside any queue).

-- name: server_version
SELECT VERSION() AS v, @@version_comment AS c

-- name: default_schema
SELECT DATABASE() AS s

-- name: table_exists
SELECT 1 AS x FROM information_schema.TABLES
WHERE TABLE_SCHEMA = :schema AND TABLE_NAME = :name AND TABLE_TYPE = 'BASE TABLE'

-- name: schema_exists
SELECT 1 AS x FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = :schema

-- name: column_types
SELECT COLUMN_NAME AS column_name, DATA_TYPE AS data_type FROM information_schema.COLUMNS
WHERE TABLE_SCHEMA = :schema AND TABLE_NAME = :name

-- name: read_only
START TRANSACTION READ ONLY

-- name: snapshot_read
-- qadmin sessions run READ COMMITTED; a consistent snapshot needs REPEATABLE READ (this
-- transaction only).
SET TRANSACTION ISOLATION LEVEL REPEATABLE READ

-- name: snapshot_read
START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY

-- name: naive_utc
-- A library that writes naive UTC DATETIMEs: CURRENT_TIMESTAMP in UTC, so ages are right
-- whatever the session's time_zone (TIMESTAMP columns are converted to it, also right).
SET SESSION time_zone = '+00:00'

-- name: naive_session
SET SESSION time_zone = DEFAULT

-- name: savepoint
-- pop: a mark before its batch, so a batch the output did not deliver is rolled back.
SAVEPOINT {mark.bare}

-- name: rollback_to_savepoint
ROLLBACK TO SAVEPOINT {mark.bare}
