-- Pending queue on SQLite (article 000): each message has a due time in UTC, kept as text in the
-- form strftime('%Y-%m-%d %H:%M:%f') produces, so text order is time order.

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

-- name: peek
SELECT id, enqueued_at, due_at, payload FROM {table} ORDER BY due_at, id LIMIT :count

-- name: purge
SELECT count(*) AS purged FROM {table}

-- name: purge
DELETE FROM {table}

-- name: depth
-- At most :limit rows with ids from :lo up to below :hi, in id order through the primary key: a walk whose cost
-- the caller bounds (diagnostics/entries/size.py picks :lo: the watermark, the bottom when
-- few dead entries can lie on the way, else a window below the id high-water mark).
SELECT count(*) AS depth, min(w.enqueued_at) AS oldest_enqueued_at
FROM (SELECT t.enqueued_at FROM {table} AS t WHERE t.id >= :lo AND t.id < :hi ORDER BY t.id LIMIT :limit) AS w

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
