-- The claim template's statements that several engines spell alike: sql/queues/<engine>/claim.sql
-- extends this file (its header explains the kind) and replaces what its server spells its own
-- way.

-- name: peek
SELECT id, enqueued_at, processing_started_at, claimed_by, attempts, last_error, payload
FROM {table} ORDER BY id LIMIT :count

-- name: depth
-- At most :limit waiting rows (claimed ones are counted apart: claimed_count) with ids from
-- :lo up to below :hi, in id order (the pop index, or the primary key): a walk whose cost
-- the caller bounds (diagnostics/entries/size.py picks :lo: the watermark, the bottom when
-- few dead entries can lie on the way, else a window below the id high-water mark).
SELECT count(*) AS depth, min(w.enqueued_at) AS oldest_enqueued_at
FROM (SELECT t.enqueued_at FROM {table} AS t WHERE t.id >= :lo AND t.id < :hi AND t.processing_started_at IS NULL
      ORDER BY t.id LIMIT :limit) AS w

-- name: claimed_count
-- Claimed rows, at most :limit (through the claimed index): a claim queue's depth is its
-- waiting rows, and the catalog's row estimate counts these too.
SELECT count(*) AS claimed
FROM (SELECT 1 FROM {table} AS t WHERE t.processing_started_at IS NOT NULL LIMIT :limit) AS c

-- name: dead_top
SELECT max(id) AS top_id FROM {dead}

-- name: dead_take
-- Lock one dead message by its key and read its payload (redrive --to).
SELECT id, payload FROM {dead} WHERE id = :id FOR UPDATE

-- name: discard_one
-- After redrive_id locked it: a dead letter thrown away (the live table is never touched).
DELETE FROM {dead} WHERE id = :id

-- name: redrive_id
SELECT id FROM {dead} WHERE id = :id FOR UPDATE

-- name: head
-- The dequeue's head, read-only (qadmin explain): the pop's own WHERE / ORDER BY for one
-- message, taking no row lock.
SELECT id FROM {table} WHERE processing_started_at IS NULL ORDER BY id LIMIT 1
