-- The ring template's statements that several engines spell alike: sql/queues/<engine>/ring.sql
-- extends this file (its header explains the kind) and replaces what its server spells its own
-- way.

-- name: readable
-- Whether the role may read the slot table at all (size asks when the sequences are refused
-- to it: a reader without sequence privileges gets a note, a stranger the error). Reads no row.
SELECT 1 AS readable FROM {table} LIMIT 0

-- name: resize
INSERT INTO {overflow} (message_id, enqueued_at, payload)
SELECT message_id, enqueued_at, payload FROM {table} WHERE reference_count = 1

-- name: resize
DELETE FROM {table} WHERE slot >= :capacity

-- name: resize
UPDATE {table} SET reference_count = 0, message_id = NULL, payload = NULL, enqueued_at = NULL
WHERE reference_count = 1
