-- Pending queue on SQLite (article 000): each message has a due time in UTC, kept as text in the
-- form strftime('%Y-%m-%d %H:%M:%f') produces, so text order is time order.
-- extends: queues/sqlite/basic.sql (what it does as a basic queue does)
-- extends: queues/common/pending.sql (the statements it shares with other engines)

-- name: create
CREATE TABLE {table} (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    due_at      TEXT NOT NULL,
    enqueued_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    payload     BLOB NOT NULL
)

-- name: create
CREATE INDEX {pop_idx.bare} ON {table.bare} (due_at, id)

-- name: drop
DROP TABLE IF EXISTS {table}

-- name: push
INSERT INTO {table} (due_at, payload)
VALUES (coalesce(:due_at, strftime('%Y-%m-%d %H:%M:%f', 'now')), :payload)
RETURNING id, enqueued_at, due_at

-- name: pop
DELETE FROM {table}
WHERE id IN (
    SELECT id FROM {table}
    WHERE due_at <= strftime('%Y-%m-%d %H:%M:%f', 'now') AND NOT {paused()}
    ORDER BY due_at, id
    LIMIT :count)
RETURNING id, enqueued_at, due_at, payload

-- name: due
-- The due messages (what a pop can take now): at most :limit of them, earliest due first
-- through the (due_at, id) index, as the pop walks it, and the earliest due time. A pending
-- queue's depth and oldest age are these: messages not due yet are counted apart (scheduled).
SELECT count(*) AS depth, min(d.due_at) AS oldest_due_at FROM (
    SELECT due_at FROM {table} WHERE due_at <= strftime('%Y-%m-%d %H:%M:%f', 'now')
    ORDER BY due_at, id LIMIT :limit) AS d

-- name: scheduled
-- Messages not due yet: at most :limit, through the (due_at, id) index from now up.
SELECT count(*) AS scheduled FROM (
    SELECT id FROM {table} WHERE due_at > strftime('%Y-%m-%d %H:%M:%f', 'now')
    ORDER BY due_at, id LIMIT :limit) AS s

-- name: head
-- The dequeue's head, read-only (qadmin explain): the pop's own WHERE / ORDER BY for one
-- message, taking no row lock.
SELECT id FROM {table} WHERE due_at <= strftime('%Y-%m-%d %H:%M:%f', 'now')
ORDER BY due_at, id LIMIT 1

-- name: head_index
-- The index that makes the head a seek in dequeue order (explain's fix when the plan sorts
-- or scans); create makes it (or the primary key serves).
CREATE INDEX {pop_idx} ON {table.bare} (due_at, id)
