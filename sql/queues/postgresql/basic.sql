-- heap, fifo and lifo queues on PostgreSQL (article 000).
-- Dequeue is DELETE ... RETURNING of rows chosen with FOR UPDATE SKIP LOCKED, so concurrent
-- consumers never wait for each other (PostgreSQL's READPAST). {order_by} is "ORDER BY id"
-- (fifo), "ORDER BY id DESC" (lifo) or empty (heap). A strict queue drops SKIP LOCKED: one
-- consumer at a time takes the head, the next waits for it to commit (the article's strict FIFO).
-- Applications call {push}(payload) and {pop}(count) exactly as qadmin does.
-- Every pop (and a claim's requeue, a ring's batch push) picks its rows in an ARRAY(...)
-- sub-select, run once before the DELETE or UPDATE (an InitPlan). Written `id IN (SELECT ...
-- FOR UPDATE SKIP LOCKED)`, a table whose statistics say empty (VACUUM ANALYZE of a drained
-- queue: reltuples 0) was planned as a nested-loop semi join running the locking sub-select
-- again for every row: a pop of one took every message, and minutes on a big backlog.
-- extends: queues/common/basic.sql (the statements it shares with other engines)

-- name: create
CREATE TABLE {table} (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    enqueued_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    payload     bytea NOT NULL
)

-- name: create
CREATE FUNCTION {push}(p_payload bytea)
RETURNS TABLE (id bigint, enqueued_at timestamptz)
LANGUAGE sql AS $$
    -- Wakes "pop --wait" (LISTEN on this channel); delivered at commit, one per transaction.
    SELECT pg_notify('qadmin_' || md5({table.lit}), '');
    INSERT INTO {table} (payload) VALUES (p_payload) RETURNING id, enqueued_at
$$

-- name: create
CREATE FUNCTION {pop}(p_count integer DEFAULT 1)
RETURNS TABLE (id bigint, enqueued_at timestamptz, payload bytea)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
    {paused_return()}
    IF coalesce(p_count, 0) < 1 THEN
        RETURN;  -- a NULL, 0 or negative count takes nothing (the strict loop would spin)
    END IF;
    LOOP
        -- the batch in the kind's order (a DELETE returns rows in the order it met them)
        RETURN QUERY
        WITH d AS (
            DELETE FROM {table} AS q
            WHERE q.id = ANY (ARRAY(
                SELECT s.id FROM {table} AS s {order_by} LIMIT p_count FOR UPDATE {skip_locked}))
            RETURNING q.id, q.enqueued_at, q.payload)
        SELECT d.id, d.enqueued_at, d.payload FROM d {order_by};
        -- Strict: we waited for the head row and it was deleted meanwhile, so FOR UPDATE
        -- returned nothing although later rows exist; look again with a fresh snapshot.
        EXIT WHEN FOUND OR NOT {strict} OR NOT EXISTS (SELECT 1 FROM {table});
    END LOOP;
END
$$

-- name: create
{push_many_rows()}

-- name: drop
DROP FUNCTION IF EXISTS {push_many}(bytea[])

-- name: drop
DROP FUNCTION IF EXISTS {pop}(integer)

-- name: drop
DROP FUNCTION IF EXISTS {push}(bytea)

-- name: drop
DROP TABLE IF EXISTS {table}

-- name: push
SELECT id, enqueued_at FROM {push}(:payload)

-- name: push_many
SELECT id, enqueued_at FROM {push_many}(CAST(:payloads AS bytea[])) ORDER BY id

-- name: pop
SELECT id, enqueued_at, payload FROM {pop}(:count)

-- name: purge
WITH gone AS (DELETE FROM {table} RETURNING 1) SELECT count(*) AS purged FROM gone

-- name: depth
-- At most :limit rows with ids from :lo up to below :hi, in id order through the primary key: a walk whose cost
-- the caller bounds (diagnostics/entries/size.py picks :lo: the watermark, the bottom when
-- few dead entries can lie on the way, else a window below the id high-water mark). Only an
-- ordered index scan stops at the limit: a bitmap scan and sort (what the planner picks for a
-- never-analyzed or bloated table) would read every entry from :lo up first.
SET LOCAL enable_bitmapscan = off

-- name: depth
SET LOCAL enable_seqscan = off

-- name: depth
SELECT count(*) AS depth, min(w.enqueued_at) AS oldest_enqueued_at
FROM (SELECT t.enqueued_at FROM {table} AS t WHERE t.id >= :lo AND t.id < :hi ORDER BY t.id LIMIT :limit) AS w

-- name: counters
-- NULL until the first id is issued: 0 ids then, so a new queue's first burst is a rate
SELECT coalesce(pg_sequence_last_value(pg_get_serial_sequence({table.lit}, 'id')), 0)
       AS enqueued_total

-- name: head
-- The dequeue's head, read-only (qadmin explain): the pop's own WHERE / ORDER BY for one
-- message, taking no row lock.
SELECT s.id FROM {table} AS s {order_by} LIMIT 1

-- name: head_index
-- The index that makes the head a seek in dequeue order (explain's fix when the plan sorts
-- or scans); create makes it (or the primary key serves).
CREATE INDEX CONCURRENTLY ON {table} (id)
