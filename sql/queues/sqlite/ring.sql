-- Preallocated ring of slots (article 003, LMAX-style), on SQLite.
-- capacity slots exist from the start and are only ever UPDATEd: push writes message push_seq
-- into slot push_seq % capacity if that slot is free (reference_count = 0), pop takes message
-- pop_seq from slot pop_seq % capacity. SQLite serialises writers, so both sequences live in a
-- one-row control table and advance in the same transaction as the slot update: a full ring
-- refuses the push (nothing written, no number used), an empty ring returns nothing.

-- name: create
CREATE TABLE {table} (
    slot            INTEGER PRIMARY KEY,
    message_id      INTEGER,
    enqueued_at     TEXT,
    reference_count INTEGER NOT NULL DEFAULT 0,
    payload         BLOB
)

-- name: create
CREATE TABLE {ctl} (
    one      INTEGER PRIMARY KEY CHECK (one = 1),
    push_seq INTEGER NOT NULL,
    pop_seq  INTEGER NOT NULL,
    capacity INTEGER NOT NULL
)

-- name: create
INSERT INTO {ctl} (one, push_seq, pop_seq, capacity) VALUES (1, 0, 0, {capacity})

-- name: create
CREATE TABLE {overflow} (
    message_id  INTEGER PRIMARY KEY,
    enqueued_at TEXT NOT NULL,
    payload     BLOB NOT NULL
)

-- name: drop
DROP TABLE IF EXISTS {table}

-- name: drop
DROP TABLE IF EXISTS {ctl}

-- name: drop
DROP TABLE IF EXISTS {overflow}

-- name: push
-- One transaction even when run in autocommit: SAVEPOINT opens one there (and nests
-- inside BEGIN IMMEDIATE, the contract); RELEASE commits it.
SAVEPOINT qadmin_call

-- name: push
UPDATE {table}
SET message_id = (SELECT push_seq FROM {ctl}),
    payload = :payload,
    reference_count = 1,
    enqueued_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
WHERE slot = (SELECT push_seq % capacity FROM {ctl}) AND reference_count = 0
  -- The bound (docs/kinds.md, The ring): the numbers pushed and not popped, plus a converted
  -- backlog's messages still in the overflow table (numbers below pop_seq), stay within the
  -- capacity. The single writer makes this exact: no other push is in flight.
  AND (SELECT c.push_seq - c.pop_seq + (SELECT count(*) FROM {overflow} AS o
                                         WHERE o.message_id < c.pop_seq)
         FROM {ctl} AS c) < (SELECT capacity FROM {ctl})
RETURNING message_id AS id, enqueued_at

-- name: push
UPDATE {ctl} SET push_seq = push_seq + 1
WHERE EXISTS (SELECT 1 FROM {table} WHERE slot = push_seq % capacity AND message_id = push_seq)

-- name: push
RELEASE qadmin_call

-- name: pop
-- One transaction even when run in autocommit: SAVEPOINT opens one there (and nests
-- inside BEGIN IMMEDIATE, the contract); RELEASE commits it.
SAVEPOINT qadmin_call

-- name: pop
-- The overflow table holds only a converted queue's backlog (qadmin convert): its ids are
-- all below pop_seq, so it is served first, in id order, then the ring from pop_seq. Slots are
-- found by number (slot = number % capacity), never by scanning the ring. While the queue is
-- paused every statement of the set takes nothing (each reads the pause; one transaction, so
-- all four see the same answer).
WITH RECURSIVE k (i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i + 1 < :count)
SELECT id, enqueued_at, payload FROM (
    SELECT * FROM (SELECT message_id AS id, enqueued_at, payload FROM {overflow}
                   ORDER BY message_id LIMIT :count)
    UNION ALL
    SELECT r.message_id, r.enqueued_at, r.payload
    FROM {ctl} AS c, k, {table} AS r
    WHERE r.slot = (c.pop_seq + k.i) % c.capacity AND r.message_id = c.pop_seq + k.i
      AND r.reference_count = 1
)
WHERE NOT {paused()}
ORDER BY id LIMIT :count

-- name: pop
WITH RECURSIVE k (i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i + 1 < :count)
UPDATE {table} SET reference_count = 0, message_id = NULL, payload = NULL
WHERE slot IN (SELECT (c.pop_seq + k.i) % c.capacity FROM {ctl} AS c, k
               WHERE k.i < :count - (SELECT count(*) FROM
                                     (SELECT 1 FROM {overflow} LIMIT :count)))
  AND reference_count = 1
  AND message_id >= (SELECT pop_seq FROM {ctl})
  AND message_id < (SELECT pop_seq FROM {ctl}) + :count
  AND NOT {paused()}

-- name: pop
UPDATE {ctl}
SET pop_seq = min(pop_seq + max(:count - (SELECT count(*) FROM
                                          (SELECT 1 FROM {overflow} LIMIT :count)), 0),
                  push_seq)
WHERE NOT {paused()}

-- name: pop
DELETE FROM {overflow}
WHERE message_id IN (SELECT message_id FROM {overflow} ORDER BY message_id LIMIT :count)
  AND NOT {paused()}

-- name: pop
RELEASE qadmin_call

-- name: peek
SELECT id, enqueued_at, payload FROM (
    SELECT message_id AS id, enqueued_at, payload FROM {overflow}
    UNION ALL
    SELECT message_id, enqueued_at, payload FROM {table} WHERE reference_count = 1
)
ORDER BY id LIMIT :count

-- name: purge
SELECT (SELECT count(*) FROM {table} WHERE reference_count = 1)
     + (SELECT count(*) FROM {overflow}) AS purged

-- name: purge
UPDATE {ctl} SET pop_seq = push_seq

-- name: purge
DELETE FROM {overflow}

-- name: purge
UPDATE {table} SET reference_count = 0, message_id = NULL, payload = NULL
WHERE reference_count = 1

-- name: depth
SELECT (SELECT count(*) FROM {table} WHERE reference_count = 1)
     + (SELECT count(*) FROM {overflow}) AS depth,
       (SELECT min(t) FROM (SELECT min(enqueued_at) AS t FROM {table} WHERE reference_count = 1
                            UNION ALL SELECT min(enqueued_at) FROM {overflow}))
           AS oldest_enqueued_at

-- name: counters
SELECT push_seq AS enqueued_total, pop_seq AS dequeued_total FROM {ctl}

-- name: ring_state
-- SQLite moves both sequences in the same transaction as the slot: a killed client rolls
-- both back, so a SQLite ring has no holes to show.
SELECT push_seq AS push_next, pop_seq AS pop_next, 0 AS parked, NULL AS oldest_parked_s,
       0 AS overflow, NULL AS orphan_id, NULL AS orphan_fix, NULL AS hole_fix,
       NULL AS orphan_slot, NULL AS orphan_age_s,
       NULL AS missing_id, NULL AS waiting_behind_age_s
FROM {ctl}

-- Resize (qadmin resize): one BEGIN IMMEDIATE transaction, so no push or pop runs meanwhile.
-- The messages (always the contiguous numbers pop_seq .. push_seq - 1 here) are set aside,
-- the slot rows are cut or extended in chunks (for the progress bar), and each message goes
-- back to slot message_id % the new capacity, which the backlog check keeps distinct.

-- name: resize_lock
SELECT capacity FROM {ctl}

-- name: resize_state
SELECT (SELECT count(*) FROM {table} WHERE reference_count = 1) AS messages, capacity
FROM {ctl}

-- name: resize
CREATE TEMP TABLE qadmin_resize AS
SELECT message_id, enqueued_at, payload FROM {table} WHERE reference_count = 1

-- name: resize
DELETE FROM {table} WHERE slot >= :capacity

-- name: resize
UPDATE {table} SET reference_count = 0, message_id = NULL, payload = NULL, enqueued_at = NULL
WHERE reference_count = 1

-- name: resize_grow
INSERT OR IGNORE INTO {table} (slot)
WITH RECURSIVE s (n) AS (SELECT :lo UNION ALL SELECT n + 1 FROM s WHERE n + 1 < :hi)
SELECT n FROM s

-- name: resize_place
UPDATE {table}
SET message_id = m.message_id, enqueued_at = m.enqueued_at, payload = m.payload,
    reference_count = 1
FROM temp.qadmin_resize AS m
WHERE {table}.slot = m.message_id % :capacity

-- name: resize_place
DROP TABLE temp.qadmin_resize

-- name: resize_place
UPDATE {ctl} SET capacity = :capacity

-- name: head
-- The dequeue's head, read-only (qadmin explain): the pop's own WHERE / ORDER BY for one
-- message, taking no row lock.
SELECT message_id FROM {table}
WHERE slot = (SELECT c.pop_seq % c.capacity FROM {ctl} AS c)
  AND message_id = (SELECT c.pop_seq FROM {ctl} AS c)
