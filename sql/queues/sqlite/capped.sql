-- Fixed-size FIFO that overwrites its oldest message (article 001), on SQLite.
-- The article takes the next id from max(id)+1; that restarts ids when the queue drains and
-- reuses a popped id, so the counter lives in its own one-row table instead. A push writes slot
-- id % capacity: an empty slot (popped, or never used) is inserted, a full one is overwritten,
-- and the overwritten message's id is returned so nothing disappears unreported.
-- extends: queues/sqlite/basic.sql (what it does as a basic queue does)
-- extends: queues/common/capped.sql (the statements it shares with other engines)

-- name: create
CREATE TABLE {table} (
    id          INTEGER PRIMARY KEY,
    slot        INTEGER NOT NULL UNIQUE,
    enqueued_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    payload     BLOB NOT NULL
)

-- name: create
CREATE TABLE {seq} (
    one     INTEGER PRIMARY KEY CHECK (one = 1),
    next_id INTEGER NOT NULL
)

-- name: create
INSERT INTO {seq} (one, next_id) VALUES (1, 0)

-- name: create
CREATE TABLE {ctl} (
    one      INTEGER PRIMARY KEY CHECK (one = 1),
    capacity INTEGER NOT NULL
)

-- name: create
INSERT INTO {ctl} (one, capacity) VALUES (1, {capacity})

-- name: drop
DROP TABLE IF EXISTS {table}

-- name: drop
DROP TABLE IF EXISTS {seq}

-- name: drop
DROP TABLE IF EXISTS {ctl}

-- name: push
-- One transaction even when run in autocommit: SAVEPOINT opens one there (and nests
-- inside BEGIN IMMEDIATE, the contract); RELEASE commits it.
SAVEPOINT qadmin_call

-- name: push
SELECT id AS overwritten_id FROM {table}
WHERE slot = (SELECT s.next_id % c.capacity FROM {seq} AS s, {ctl} AS c)

-- name: push
INSERT INTO {table} (id, slot, payload)
SELECT s.next_id, s.next_id % c.capacity, :payload FROM {seq} AS s, {ctl} AS c WHERE true
ON CONFLICT (slot) DO UPDATE SET
    id = excluded.id, payload = excluded.payload, enqueued_at = excluded.enqueued_at
RETURNING id, enqueued_at

-- name: push
UPDATE {seq} SET next_id = next_id + 1

-- name: push
RELEASE qadmin_call

-- name: pop
DELETE FROM {table}
WHERE id IN (SELECT id FROM {table} WHERE NOT {paused()} ORDER BY id LIMIT :count)
RETURNING id, enqueued_at, payload

-- name: counters
SELECT next_id AS enqueued_total FROM {seq}

-- name: estimate
-- SQLite keeps no row-count statistics: the id range is an upper bound, read with two seeks
-- (max(id) - min(id) in one SELECT would defeat the min/max optimisation and scan the table).
SELECT coalesce((SELECT max(id) FROM {table}) - (SELECT min(id) FROM {table}) + 1, 0)
    AS estimated_rows

-- Resize (qadmin resize): one BEGIN IMMEDIATE transaction. Every message moves to slot
-- id % the new capacity, through negative slots so the UNIQUE constraint never sees two rows
-- in one slot; refused when the ids held span more slots than the new capacity has.

-- name: resize_lock
SELECT capacity FROM {ctl}
