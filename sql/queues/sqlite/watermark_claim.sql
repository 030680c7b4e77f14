-- The claim dequeue with a watermark on SQLite (see watermark.sql). Claimed rows stay until
-- acked, so the watermark (the lowest id still in the table) never passes a claim in progress.

-- name: pop
-- One transaction even when run in autocommit: SAVEPOINT opens one there (and nests
-- inside BEGIN IMMEDIATE, the contract); RELEASE commits it.
SAVEPOINT qadmin_call

-- name: pop
UPDATE {table}
SET processing_started_at = strftime('%Y-%m-%d %H:%M:%f', 'now'),
    claimed_by = :worker,
    attempts = attempts + 1
WHERE id IN (
    SELECT id FROM {table}
    WHERE processing_started_at IS NULL AND id >= (SELECT wm FROM {wm}) AND NOT {paused()}
    ORDER BY id LIMIT :count)
RETURNING id, enqueued_at, attempts, payload

-- name: pop
UPDATE {wm} SET wm = coalesce((SELECT min(id) FROM {table} WHERE id >= wm), wm)

-- name: pop
RELEASE qadmin_call

-- name: head
-- The dequeue's head, read-only (qadmin explain): the pop's own WHERE / ORDER BY for one
-- message, taking no row lock.
SELECT id FROM {table}
WHERE processing_started_at IS NULL AND id >= (SELECT wm FROM {wm})
ORDER BY id LIMIT 1
