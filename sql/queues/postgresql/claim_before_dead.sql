-- A claim queue created by a qadmin from before dead letters (no dead table, no errors
-- column; QueueSpec.dead_table is false): laid over claim.sql, it keeps calling the fail
-- function that queue has, which returns (id, attempts) and never moves a message; requeue
-- only releases.

-- name: fail
SELECT id, attempts FROM {fail}(:id, :error, :retry)

-- name: requeue
-- A stale claim whose row is locked (an ack in progress) is skipped, as claim.sql's.
UPDATE {table} AS q
SET processing_started_at = NULL, claimed_by = NULL, claimed_session = NULL
WHERE q.id = ANY (ARRAY(SELECT s.id FROM {table} AS s
                WHERE s.processing_started_at < clock_timestamp() - make_interval(secs => :stale_s)
                  AND {claim_gone()}
                FOR UPDATE SKIP LOCKED))
RETURNING q.id
