-- A claim queue created by a qadmin from before dead letters (no dead table, no errors
-- column; QueueSpec.dead_table is false): laid over claim.sql, it keeps calling the fail
-- procedure that queue has, which returns (id, attempts) and never moves a message; requeue
-- only releases.

-- name: fail
EXEC {fail} @id = :id, @error = :error, @retry = :retry

-- name: requeue
UPDATE {table}
SET processing_started_at = NULL, claimed_by = NULL, claimed_session = NULL
OUTPUT inserted.id
WHERE processing_started_at < DATEADD(SECOND, -:stale_s, SYSUTCDATETIME())
