-- A claim queue created by a qadmin from before dead letters (no dead table, no errors
-- column; QueueSpec.dead_table is false): laid over claim.sql. claim.sql's fail call stays:
-- on such a queue it calls the fail procedure that queue has, which returns (id, attempts)
-- and never moves a message. Requeue only releases.

-- name: requeue
SET @qadmin_cutoff = UTC_TIMESTAMP(6) - INTERVAL :stale_s SECOND

-- name: requeue
{live_sessions()}

-- name: requeue
-- A stale claim whose row is locked (an ack in progress) is skipped, as claim.sql's.
SELECT COALESCE(JSON_ARRAYAGG(s.id), JSON_ARRAY()) INTO @qadmin_ids
FROM (SELECT id FROM {table}
      WHERE processing_started_at < @qadmin_cutoff AND {claim_gone()}
      FOR UPDATE SKIP LOCKED) AS s

-- name: requeue
SELECT q.id FROM {taken_rows()}

-- name: requeue
UPDATE {taken_rows()}
SET q.processing_started_at = NULL, q.claimed_by = NULL, q.claimed_session = NULL
