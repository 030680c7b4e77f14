-- Pending queue on SQLite (article 000): each message has a due time in UTC, kept as text in the
-- form strftime('%Y-%m-%d %H:%M:%f') produces, so text order is time order.
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
    WHERE due_at <= strftime('%Y-%m-%d %H:%M:%f', 'now')
    ORDER BY due_at, id
    LIMIT :count)
RETURNING id, enqueued_at, due_at, payload

-- name: purge
SELECT count(*) AS purged FROM {table}

-- name: purge
DELETE FROM {table}

-- name: due
SELECT count(*) AS due FROM (
    SELECT 1 FROM {table} WHERE due_at <= strftime('%Y-%m-%d %H:%M:%f', 'now') LIMIT 10000)

-- name: counters
SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = :table), 0) AS enqueued_total

-- name: estimate
-- SQLite keeps no row-count statistics: the id range is an upper bound, read with two seeks
-- (max(id) - min(id) in one SELECT would defeat the min/max optimisation and scan the table).
SELECT coalesce((SELECT max(id) FROM {table}) - (SELECT min(id) FROM {table}) + 1, 0)
    AS estimated_rows

-- name: head
-- The dequeue's head, read-only (qadmin explain): the pop's own WHERE / ORDER BY for one
-- message, taking no row lock.
SELECT id FROM {table} WHERE due_at <= strftime('%Y-%m-%d %H:%M:%f', 'now')
ORDER BY due_at, id LIMIT 1

-- name: head_index
-- The index that makes the head a seek in dequeue order (explain's fix when the plan sorts
-- or scans); create makes it (or the primary key serves).
CREATE INDEX {pop_idx} ON {table.bare} (due_at, id)
