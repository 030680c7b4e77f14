-- The fifo dequeue with a watermark on SQLite (see watermark.sql): the head is looked for from
-- the watermark up, and the same transaction moves the watermark to the new head.

-- name: pop
-- One transaction even when run in autocommit: SAVEPOINT opens one there (and nests
-- inside BEGIN IMMEDIATE, the contract); RELEASE commits it.
SAVEPOINT qadmin_call

-- name: pop
DELETE FROM {table}
WHERE id IN (SELECT id FROM {table} WHERE id >= (SELECT wm FROM {wm}) AND NOT {paused()}
             ORDER BY id LIMIT :count)
RETURNING id, enqueued_at, payload

-- name: pop
UPDATE {wm} SET wm = coalesce((SELECT min(id) FROM {table} WHERE id >= wm), wm)

-- name: pop
RELEASE qadmin_call

-- name: head
-- The dequeue's head, read-only (qadmin explain): the pop's own WHERE / ORDER BY for one
-- message, taking no row lock.
SELECT id FROM {table} WHERE id >= (SELECT wm FROM {wm}) ORDER BY id LIMIT 1
