-- A claim queue created by a qadmin from before dead letters (no dead table, no errors
-- column; QueueSpec.dead_table is false): laid over claim.sql, its fail records the error
-- as before and never moves a message; requeue only releases.

-- name: fail
UPDATE {table}
SET last_error = :error,
    failed_at = strftime('%Y-%m-%d %H:%M:%f', 'now'),
    processing_started_at = CASE WHEN :retry THEN NULL ELSE processing_started_at END,
    claimed_by = CASE WHEN :retry THEN NULL ELSE claimed_by END
WHERE id = :id AND processing_started_at IS NOT NULL
RETURNING id, attempts

-- name: requeue
UPDATE {table}
SET processing_started_at = NULL, claimed_by = NULL, claimed_session = NULL
WHERE processing_started_at
      < strftime('%Y-%m-%d %H:%M:%f', 'now', '-' || :stale_s || ' seconds')
RETURNING id
