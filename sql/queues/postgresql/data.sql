-- Moving a queue's messages in bulk: export, archive, load (PostgreSQL).
-- Export pages run inside one REPEATABLE READ, READ ONLY transaction, so every page sees the
-- same snapshot; each page is a keyset range (id > :after), never OFFSET, never a full sort.
-- :before bounds the age (enqueued_at < :before); claim queues also filter by state
-- (:ready / :claimed / :failed). Load copies the input into {stage} and moves it into the queue
-- with one INSERT ... SELECT per chunk of :chunk rows, all in one transaction; {loaded} holds
-- the idempotency keys of what was loaded, written in the same transaction.
-- extends: queues/common/data.sql (the statements shared with other engines)

-- Sections serve the kinds whose tables share a shape: export_rows heap/fifo/lifo/capped,
-- archive_rows heap/fifo/lifo/pending, load_rows heap/fifo/lifo/claim.

-- name: archive_rows
WITH gone AS (DELETE FROM {table} WHERE id = :id RETURNING 1) SELECT count(*) AS deleted FROM gone

-- name: archive_claim
-- A row claimed since it was exported is being worked on: it stays (and is reported).
WITH gone AS (
    DELETE FROM {table}
    WHERE id = :id AND (processing_started_at IS NULL OR failed_at >= processing_started_at)
    RETURNING 1
)
SELECT count(*) AS deleted FROM gone

-- name: stage_create
CREATE UNLOGGED TABLE {stage} (
    seq      bigint PRIMARY KEY,
    payload  bytea NOT NULL,
    due_at   timestamptz,
    load_key text,
    enqueued_at timestamptz
)

-- name: stage_insert
-- Rows go in as (seq, payload, due_at, load_key, enqueued_at), in that order.
COPY {stage} (seq, payload, due_at, load_key, enqueued_at) FROM STDIN

-- name: loaded_create
CREATE TABLE IF NOT EXISTS {loaded} (
    load_key  text PRIMARY KEY,
    loaded_at timestamptz NOT NULL DEFAULT clock_timestamp()
)

-- name: load_rows
WITH fresh AS (
    SELECT s.seq, s.payload, s.load_key, s.enqueued_at FROM {stage} AS s
    WHERE s.seq >= :from_seq AND s.seq < :to_seq
      AND NOT EXISTS (SELECT 1 FROM {loaded} AS l WHERE l.load_key = s.load_key)
), keys AS (
    INSERT INTO {loaded} (load_key) SELECT load_key FROM fresh WHERE load_key IS NOT NULL
), added AS (
    INSERT INTO {table} (enqueued_at, payload)
    SELECT coalesce(enqueued_at, clock_timestamp()), payload FROM fresh ORDER BY seq
    RETURNING id
)
SELECT count(*) AS loaded FROM added

-- name: load_pending
WITH fresh AS (
    SELECT s.seq, s.payload, s.due_at, s.load_key, s.enqueued_at FROM {stage} AS s
    WHERE s.seq >= :from_seq AND s.seq < :to_seq
      AND NOT EXISTS (SELECT 1 FROM {loaded} AS l WHERE l.load_key = s.load_key)
), keys AS (
    INSERT INTO {loaded} (load_key) SELECT load_key FROM fresh WHERE load_key IS NOT NULL
), added AS (
    INSERT INTO {table} (due_at, enqueued_at, payload)
    SELECT coalesce(due_at, clock_timestamp()), coalesce(enqueued_at, clock_timestamp()), payload
    FROM fresh ORDER BY seq RETURNING id
)
SELECT count(*) AS loaded FROM added

-- name: id_bounds
-- Spark's partition bounds: two index probes on the primary key.
SELECT min(id) AS lo, max(id) AS hi FROM {table}
