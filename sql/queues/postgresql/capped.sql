-- Fixed-size FIFO that overwrites its oldest message (article 001), on PostgreSQL.
-- Ids come from a sequence, not max(id)+1, so they are never reused after pops or a drain.
-- Message id k lives in slot k % capacity. A push locks that slot's row: an empty slot is
-- inserted, an older message is overwritten and its id returned as overwritten_id. When two
-- pushes k and k+capacity race for one slot and k+capacity wins, push k is itself the oldest
-- message: it is dropped at once and reports its own id as overwritten_id.
-- extends: queues/postgresql/basic.sql (what it does as a basic queue does)
-- extends: queues/common/capped.sql (the statements it shares with other engines)

-- name: create
CREATE SEQUENCE {seq} AS bigint MINVALUE 0 START WITH 0

-- name: create
CREATE TABLE {ctl} (
    one      boolean PRIMARY KEY DEFAULT true CHECK (one),
    capacity integer NOT NULL
)

-- name: create
INSERT INTO {ctl} (one, capacity) VALUES (true, {capacity})

-- name: create
CREATE TABLE {table} (
    id          bigint PRIMARY KEY,
    slot        integer NOT NULL UNIQUE,
    enqueued_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    payload     bytea NOT NULL
)

-- name: create
CREATE FUNCTION {push}(p_payload bytea)
RETURNS TABLE (id bigint, enqueued_at timestamptz, overwritten_id bigint)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_id   bigint;
    v_slot integer;
    v_old  bigint;
    v_cap  integer;
    v_at   timestamptz := clock_timestamp();  -- stored and returned: one reading of the clock
BEGIN
    -- The capacity gate (see ring.sql): resize holds {ctl} exclusively while it moves slots.
    LOCK TABLE {ctl} IN ACCESS SHARE MODE;
    SELECT c.capacity INTO v_cap FROM {ctl} AS c;
    v_id := nextval({seq.lit});
    v_slot := v_id % v_cap;
    PERFORM pg_notify('qadmin_' || md5({table.lit}), '');  -- wakes "pop --wait" (see basic.sql)
    LOOP
        SELECT c.id INTO v_old FROM {table} AS c WHERE c.slot = v_slot FOR UPDATE;
        IF FOUND THEN
            IF v_old > v_id THEN
                RETURN QUERY SELECT v_id, v_at, v_id;
                RETURN;
            END IF;
            UPDATE {table} AS c
            SET id = v_id, payload = p_payload, enqueued_at = v_at
            WHERE c.slot = v_slot;
            RETURN QUERY SELECT v_id, v_at, v_old;
            RETURN;
        END IF;
        INSERT INTO {table} (id, slot, payload, enqueued_at)
        VALUES (v_id, v_slot, p_payload, v_at)
        ON CONFLICT (slot) DO NOTHING;
        IF FOUND THEN
            RETURN QUERY SELECT v_id, v_at, NULL::bigint;
            RETURN;
        END IF;
        -- Another push filled the empty slot between our look and our insert: look again.
    END LOOP;
END
$$

-- name: create
CREATE FUNCTION {pop}(p_count integer DEFAULT 1)
RETURNS TABLE (id bigint, enqueued_at timestamptz, payload bytea)
LANGUAGE sql AS $$
    WITH d AS (
        DELETE FROM {table} AS q
        WHERE q.id = ANY (ARRAY(
            SELECT s.id FROM {table} AS s WHERE NOT {paused()}
            ORDER BY s.id LIMIT greatest(p_count, 0) FOR UPDATE SKIP LOCKED))
        RETURNING q.id, q.enqueued_at, q.payload)
    SELECT d.id, d.enqueued_at, d.payload FROM d ORDER BY d.id  -- oldest first
$$

-- name: create
-- Many messages in one statement: push for each element in array order, since each takes the
-- lock of its own slot and may overwrite the one before it (a batch larger than the capacity
-- overwrites its own first messages, exactly as that many pushes do).
CREATE FUNCTION {push_many}(p_payloads bytea[])
RETURNS TABLE (id bigint, enqueued_at timestamptz, overwritten_id bigint)
LANGUAGE plpgsql AS $$
DECLARE
    v_payload bytea;
BEGIN
    FOREACH v_payload IN ARRAY coalesce(p_payloads, ARRAY[]::bytea[]) LOOP
        RETURN QUERY SELECT * FROM {push}(v_payload);
    END LOOP;
END
$$

-- name: drop
DROP FUNCTION IF EXISTS {push_many}(bytea[])

-- name: drop
DROP FUNCTION IF EXISTS {pop}(integer)

-- name: drop
DROP FUNCTION IF EXISTS {push}(bytea)

-- name: drop
DROP TABLE IF EXISTS {table}

-- name: drop
DROP SEQUENCE IF EXISTS {seq}

-- name: drop
DROP TABLE IF EXISTS {ctl}

-- name: push
SELECT id, enqueued_at, overwritten_id FROM {push}(:payload)

-- name: push_many
SELECT id, enqueued_at, overwritten_id FROM {push_many}(CAST(:payloads AS bytea[])) ORDER BY id

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
SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END AS enqueued_total
FROM {seq}

-- Resize (qadmin resize): one transaction holding the capacity gate. Every message moves to
-- slot id % the new capacity, through negative slots so the UNIQUE constraint never sees two
-- rows in one slot; refused (before anything moves) when the ids held span more slots than
-- the new capacity has.

-- name: resize_lock
LOCK TABLE {ctl} IN ACCESS EXCLUSIVE MODE

-- name: head
-- The dequeue's head, read-only (qadmin explain): the pop's own WHERE / ORDER BY for one
-- message, taking no row lock.
SELECT s.id FROM {table} AS s ORDER BY s.id LIMIT 1
