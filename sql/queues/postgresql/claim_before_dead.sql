-- A claim queue created by a qadmin from before dead letters (no dead table, no errors
-- column; QueueSpec.dead_table is false): laid over claim.sql, it keeps calling the fail
-- function that queue has, which returns (id, attempts) and never moves a message; requeue
-- only releases.

-- name: fail
SELECT id, attempts FROM {fail}(:id, :error, :retry)

-- name: requeue
UPDATE {table} AS q
SET processing_started_at = NULL, claimed_by = NULL, claimed_session = NULL
WHERE q.processing_started_at < clock_timestamp() - make_interval(secs => :stale_s)
  AND {claim_gone()}
RETURNING q.id
