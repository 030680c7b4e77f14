-- The capped template's statements that several engines spell alike: sql/queues/<engine>/capped.sql
-- extends this file (its header explains the kind) and replaces what its server spells its own
-- way.

-- name: peek
SELECT id, enqueued_at, payload FROM {table} ORDER BY id LIMIT :count

-- name: depth
-- At most :limit rows with ids from :lo up to below :hi, in id order through the primary key: a walk whose cost
-- the caller bounds (diagnostics/entries/size.py picks :lo: the watermark, the bottom when
-- few dead entries can lie on the way, else a window below the id high-water mark).
SELECT count(*) AS depth, min(w.enqueued_at) AS oldest_enqueued_at
FROM (SELECT t.enqueued_at FROM {table} AS t WHERE t.id >= :lo AND t.id < :hi ORDER BY t.id LIMIT :limit) AS w

-- name: resize_state
SELECT count(*) AS messages, coalesce(max(id) - min(id) + 1, 0) AS span,
       (SELECT capacity FROM {ctl}) AS capacity
FROM {table}

-- name: resize
UPDATE {table} SET slot = -1 - slot

-- name: resize
UPDATE {table} SET slot = id % :capacity

-- name: resize_place
UPDATE {ctl} SET capacity = :capacity

-- name: head
-- The dequeue's head, read-only (qadmin explain): the pop's own WHERE / ORDER BY for one
-- message, taking no row lock.
SELECT id FROM {table} ORDER BY id LIMIT 1
