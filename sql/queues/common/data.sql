-- Moving a queue's messages in bulk: export, archive, load; the statements the engines share
-- (sql/queues/<engine>/data.sql extends this file and replaces what its server spells its own
-- way). Export pages run inside one snapshot, so every page sees the same rows; each page is a
-- keyset range (id > :after), never OFFSET. :before bounds the age (enqueued_at < :before,
-- UTC); claim queues also filter by state (:ready / :claimed / :failed). Load copies the input
-- into {stage}, then moves it with one INSERT ... SELECT per chunk of rows, all in one
-- transaction; {loaded} holds the idempotency keys, written in the same transaction.
-- The fragments now_utc, changed_rows and load_keys come from the engine's fragments.sql.

-- Sections serve the kinds whose tables share a shape: export_rows heap/fifo/lifo/capped,
-- archive_rows heap/fifo/lifo/pending, load_rows heap/fifo/lifo/claim.

-- name: export_rows
SELECT id, enqueued_at, payload FROM {table}
WHERE id > :after AND enqueued_at < :before
ORDER BY id LIMIT :limit

-- name: export_pending
SELECT id, enqueued_at, due_at, payload FROM {table}
WHERE id > :after AND enqueued_at < :before
ORDER BY id LIMIT :limit

-- name: export_claim
SELECT id, enqueued_at, state, attempts, last_error, payload FROM (
    SELECT id, enqueued_at, attempts, last_error, payload,
           CASE WHEN processing_started_at IS NULL THEN 'ready'
                WHEN failed_at >= processing_started_at THEN 'failed'
                ELSE 'claimed' END AS state
    FROM {table}
    WHERE id > :after AND enqueued_at < :before
) AS m
WHERE (state = 'ready' AND :ready) OR (state = 'claimed' AND :claimed)
   OR (state = 'failed' AND :failed)
ORDER BY id LIMIT :limit

-- name: export_ring
SELECT id, enqueued_at, payload FROM (
    SELECT message_id AS id, enqueued_at, payload FROM {table} WHERE reference_count = 1
    UNION ALL
    SELECT message_id, enqueued_at, payload FROM {overflow}
) AS m
WHERE id > :after AND enqueued_at < :before
ORDER BY id LIMIT :limit

-- name: archive_rows
DELETE FROM {table} WHERE id = :id

-- name: archive_rows
SELECT {changed_rows()} AS deleted

-- name: archive_claim
-- A row claimed since it was exported is being worked on: it stays (and is reported).
DELETE FROM {table}
WHERE id = :id AND (processing_started_at IS NULL OR failed_at >= processing_started_at)

-- name: archive_claim
SELECT {changed_rows()} AS deleted

-- name: plan_rows
-- archive --dry-run: how many messages the selection holds now, and their id range (one
-- read of the selected rows; exact at the time of the read).
SELECT count(*) AS messages, min(id) AS first_id, max(id) AS last_id FROM {table}
WHERE enqueued_at < :before

-- name: plan_claim
SELECT count(*) AS messages, min(id) AS first_id, max(id) AS last_id FROM (
    SELECT id,
           CASE WHEN processing_started_at IS NULL THEN 'ready'
                WHEN failed_at >= processing_started_at THEN 'failed'
                ELSE 'claimed' END AS state
    FROM {table}
    WHERE enqueued_at < :before
) AS m
WHERE (state = 'ready' AND :ready) OR (state = 'claimed' AND :claimed)
   OR (state = 'failed' AND :failed)

-- name: stage_insert
INSERT INTO {stage} (seq, payload, due_at, load_key, enqueued_at)
VALUES (:seq, :payload, :due_at, :load_key, :enqueued_at)

-- name: stage_drop
DROP TABLE IF EXISTS {stage}

-- name: stage_duplicate_key
SELECT load_key FROM {stage} WHERE load_key IS NOT NULL
GROUP BY load_key HAVING count(*) > 1 LIMIT 1

-- name: stage_range
SELECT count(*) AS staged, min(seq) AS first_seq, max(seq) AS last_seq FROM {stage}

-- name: load_rows
INSERT INTO {table} (enqueued_at, payload)
SELECT coalesce(s.enqueued_at, {now_utc()}), s.payload FROM {stage} AS s
WHERE s.seq >= :from_seq AND s.seq < :to_seq
  AND NOT EXISTS (SELECT 1 FROM {loaded} AS l WHERE l.load_key = s.load_key)
ORDER BY s.seq

-- name: load_rows
SELECT {changed_rows()} AS loaded

-- name: load_rows
{load_keys()}

-- name: load_pending
INSERT INTO {table} (due_at, enqueued_at, payload)
SELECT coalesce(s.due_at, {now_utc()}), coalesce(s.enqueued_at, {now_utc()}), s.payload
FROM {stage} AS s
WHERE s.seq >= :from_seq AND s.seq < :to_seq
  AND NOT EXISTS (SELECT 1 FROM {loaded} AS l WHERE l.load_key = s.load_key)
ORDER BY s.seq

-- name: load_pending
SELECT {changed_rows()} AS loaded

-- name: load_pending
{load_keys()}

-- name: key_seen
SELECT 1 AS seen FROM {loaded} WHERE load_key = :load_key

-- name: key_record
INSERT INTO {loaded} (load_key) VALUES (:load_key)
