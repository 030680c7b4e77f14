-- What the PostgreSQL engine asks of the server itself (outside any queue).

-- name: server_version
SHOW server_version

-- name: default_schema
SELECT current_schema() AS s

-- name: table_exists
-- Through pg_class's (relname, relnamespace) index: a join on the name alone read every
-- schema's table of that name (each schema's qadmin_queues, in a status of many schemas).
SELECT 1 AS x
FROM pg_catalog.pg_class AS c
WHERE c.relname = :name AND c.relkind IN ('r', 'p')
  AND c.relnamespace = (SELECT n.oid FROM pg_catalog.pg_namespace AS n WHERE n.nspname = :schema)

-- name: schema_exists
SELECT 1 AS x FROM pg_catalog.pg_namespace WHERE nspname = :schema

-- name: column_types
SELECT column_name, data_type FROM information_schema.columns
WHERE table_schema = :schema AND table_name = :name

-- name: snapshot_read
SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY

-- name: export_snapshot
-- Held open by qadmin while Spark's parallel readers import it: one snapshot for all.
SELECT pg_export_snapshot() AS snapshot

-- name: snapshot_keepalive
SET LOCAL idle_in_transaction_session_timeout = 0

-- name: import_snapshot
SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY;
SET TRANSACTION SNAPSHOT {snapshot.bare_lit}

-- name: naive_utc
-- A library that writes naive UTC timestamps (Oban): read them as UTC, whatever the role's or
-- server's TimeZone (timestamptz columns are instants and unaffected).
SET TIME ZONE 'UTC'

-- name: naive_session
SET TIME ZONE DEFAULT

-- name: savepoint
-- pop: a mark before its batch, so a batch the output did not deliver is rolled back.
SAVEPOINT {mark.bare}

-- name: rollback_to_savepoint
ROLLBACK TO SAVEPOINT {mark.bare}
