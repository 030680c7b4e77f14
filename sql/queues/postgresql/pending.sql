-- Pending queue on PostgreSQL (article 000): each message is due at a UTC time; pop returns only
-- due messages, earliest first, skipping rows other consumers hold.
-- extends: queues/postgresql/basic.sql (what it does as a basic queue does)
-- extends: queues/common/pending.sql (the statements it shares with other engines)

-- name: create
CREATE TABLE {table} (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    due_at      timestamptz NOT NULL,
    enqueued_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    payload     bytea NOT NULL
)

-- name: create
CREATE INDEX {pop_idx.bare} ON {table} (due_at, id)

-- name: create
CREATE FUNCTION {push}(p_payload bytea, p_due_at timestamptz DEFAULT NULL)
RETURNS TABLE (id bigint, enqueued_at timestamptz, due_at timestamptz)
LANGUAGE sql AS $$
    SELECT pg_notify('qadmin_' || md5({table.lit}), '');  -- wakes "pop --wait" (see basic.sql)
    INSERT INTO {table} (due_at, payload)
    VALUES (coalesce(p_due_at, clock_timestamp()), p_payload)
    RETURNING id, enqueued_at, due_at
$$

-- name: create
CREATE FUNCTION {pop}(p_count integer DEFAULT 1)
RETURNS TABLE (id bigint, enqueued_at timestamptz, due_at timestamptz, payload bytea)
LANGUAGE sql AS $$
    WITH d AS (
        DELETE FROM {table} AS q
        WHERE q.id = ANY (ARRAY(
            SELECT s.id FROM {table} AS s
            WHERE s.due_at <= clock_timestamp() AND NOT {paused()}
            ORDER BY s.due_at, s.id
            LIMIT greatest(p_count, 0)
            FOR UPDATE SKIP LOCKED))
        RETURNING q.id, q.enqueued_at, q.due_at, q.payload)
    SELECT d.id, d.enqueued_at, d.due_at, d.payload FROM d ORDER BY d.due_at, d.id  -- due first
$$

-- name: create
-- Many messages in one statement: element i is due at p_due_at[i] (now when that is NULL or
-- the array is), inserted in array order; one notification for the batch.
CREATE FUNCTION {push_many}(p_payloads bytea[], p_due_at timestamptz[] DEFAULT NULL)
RETURNS TABLE (id bigint, enqueued_at timestamptz, due_at timestamptz)
LANGUAGE sql AS $$
    SELECT pg_notify('qadmin_' || md5({table.lit}), '');
    INSERT INTO {table} (due_at, payload)
    SELECT coalesce(p_due_at[u.n], clock_timestamp()), u.p
    FROM unnest(p_payloads) WITH ORDINALITY AS u(p, n) ORDER BY u.n
    RETURNING id, enqueued_at, due_at
$$

-- name: drop
DROP FUNCTION IF EXISTS {push_many}(bytea[], timestamptz[])

-- name: drop
DROP FUNCTION IF EXISTS {pop}(integer)

-- name: drop
DROP FUNCTION IF EXISTS {push}(bytea, timestamptz)

-- name: drop
DROP TABLE IF EXISTS {table}

-- name: push
SELECT id, enqueued_at, due_at FROM {push}(:payload, :due_at)

-- name: push_many
SELECT id, enqueued_at, due_at
FROM {push_many}(CAST(:payloads AS bytea[]), CAST(:due_ats AS timestamptz[])) ORDER BY id

-- name: pop
SELECT id, enqueued_at, due_at, payload FROM {pop}(:count)

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

-- name: due
-- An ordered index scan stops at the limit (see depth): no bitmap scan, no seq scan.
SET LOCAL enable_bitmapscan = off

-- name: due
SET LOCAL enable_seqscan = off

-- name: due
-- The due messages (what a pop can take now): at most :limit of them, earliest due first
-- through the (due_at, id) index, as the pop walks it, and the earliest due time. A pending
-- queue's depth and oldest age are these: messages not due yet are counted apart (scheduled).
-- statement_timestamp(), not the pop's clock_timestamp(): a stable value bounds the index
-- scan (Index Cond); a volatile one is only a Filter, and the walk would read every entry.
SELECT count(*) AS depth, min(d.due_at) AS oldest_due_at FROM (
    SELECT due_at FROM {table} WHERE due_at <= statement_timestamp()
    ORDER BY due_at, id LIMIT :limit) AS d

-- name: scheduled
SET LOCAL enable_bitmapscan = off

-- name: scheduled
SET LOCAL enable_seqscan = off

-- name: scheduled
-- Messages not due yet: at most :limit, through the (due_at, id) index from now up.
SELECT count(*) AS scheduled FROM (
    SELECT id FROM {table} WHERE due_at > statement_timestamp()
    ORDER BY due_at, id LIMIT :limit) AS s

-- name: head
-- The dequeue's head, read-only (qadmin explain): the pop's own WHERE / ORDER BY for one
-- message, taking no row lock.
SELECT s.id FROM {table} AS s WHERE s.due_at <= clock_timestamp()
ORDER BY s.due_at, s.id LIMIT 1

-- name: head_index
-- The index that makes the head a seek in dequeue order (explain's fix when the plan sorts
-- or scans); create makes it (or the primary key serves).
CREATE INDEX CONCURRENTLY {pop_idx.bare} ON {table} (due_at, id)
