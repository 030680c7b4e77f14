-- A claim queue created by a qadmin from before dead letters (no dead table, no errors
-- column; QueueSpec.dead_table is false): laid over claim.sql. claim.sql's fail call stays:
-- on such a queue it calls the fail procedure that queue has, which returns (id, attempts)
-- and never moves a message. Requeue only releases.

-- name: requeue
SET @qadmin_cutoff = UTC_TIMESTAMP(6) - INTERVAL :stale_s SECOND

-- name: requeue
{live_sessions()}

-- name: requeue
SELECT id FROM {table} WHERE processing_started_at < @qadmin_cutoff AND {claim_gone()} FOR UPDATE

-- name: requeue
UPDATE {table}
SET processing_started_at = NULL, claimed_by = NULL, claimed_session = NULL
WHERE processing_started_at < @qadmin_cutoff AND {claim_gone()}
