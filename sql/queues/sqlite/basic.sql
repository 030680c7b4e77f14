-- heap, fifo and lifo queues on SQLite (articles 000 and 004).
-- SQLite has one writer at a time and no row locks, so consumers never skip each other's rows:
-- every pop runs in BEGIN IMMEDIATE and strict and lax FIFO are the same thing here.
-- AUTOINCREMENT keeps ids from being reused when the queue drains (plain rowids restart at 1).
-- {order_by} is "ORDER BY id" (fifo), "ORDER BY id DESC" (lifo) or empty (heap).
-- extends: queues/common/basic.sql (the statements it shares with other engines)

-- name: create
CREATE TABLE {table} (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    enqueued_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    payload     BLOB NOT NULL
)

-- name: drop
DROP TABLE IF EXISTS {table}

-- name: push
INSERT INTO {table} (payload) VALUES (:payload) RETURNING id, enqueued_at

-- name: pop
DELETE FROM {table}
WHERE id IN (SELECT id FROM {table} WHERE NOT {paused()} {order_by} LIMIT :count)
RETURNING id, enqueued_at, payload

-- name: purge
SELECT count(*) AS purged FROM {table}

-- name: purge
DELETE FROM {table}

-- name: counters
SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = :table), 0) AS enqueued_total

-- name: estimate
-- SQLite keeps no row-count statistics: the id range is an upper bound, read with two seeks
-- (max(id) - min(id) in one SELECT would defeat the min/max optimisation and scan the table).
SELECT coalesce((SELECT max(id) FROM {table}) - (SELECT min(id) FROM {table}) + 1, 0)
    AS estimated_rows
