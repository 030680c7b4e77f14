-- A claim queue created by a qadmin from before dead letters (no dead table, no errors
-- column; QueueSpec.dead_table is false): laid over claim.sql. claim.sql's fail call stays:
-- on such a queue it calls the fail procedure that queue has, which returns (id, attempts)
-- and never moves a message. Requeue only releases.

-- name: requeue
UPDATE {table} WITH (ROWLOCK, READPAST)
SET processing_started_at = NULL, claimed_by = NULL, claimed_session = NULL
OUTPUT inserted.id
WHERE processing_started_at < DATEADD(SECOND, -:stale_s, SYSUTCDATETIME())
