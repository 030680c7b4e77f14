-- Fixed-size FIFO that overwrites its oldest message (article 001), on PostgreSQL.
-- Ids come from a sequence, not max(id)+1, so they are never reused after pops or a drain.
-- Message id k lives in slot k % capacity. A push locks that slot's row: an empty slot is
-- inserted, an older message is overwritten and its id returned as overwritten_id. When two
-- pushes k and k+capacity race for one slot and k+capacity wins, push k is itself the oldest
-- message: it is dropped at once and reports its own id as overwritten_id.

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
                RETURN QUERY SELECT v_id, clock_timestamp(), v_id;
                RETURN;
            END IF;
            UPDATE {table} AS c
            SET id = v_id, payload = p_payload, enqueued_at = clock_timestamp()
            WHERE c.slot = v_slot;
            RETURN QUERY SELECT v_id, clock_timestamp(), v_old;
            RETURN;
        END IF;
        INSERT INTO {table} (id, slot, payload) VALUES (v_id, v_slot, p_payload)
        ON CONFLICT (slot) DO NOTHING;
        IF FOUND THEN
            RETURN QUERY SELECT v_id, clock_timestamp(), NULL::bigint;
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
    DELETE FROM {table} AS q
    WHERE q.id IN (
        SELECT s.id FROM {table} AS s ORDER BY s.id LIMIT p_count FOR UPDATE SKIP LOCKED)
    RETURNING q.id, q.enqueued_at, q.payload
$$

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

-- name: pop
SELECT id, enqueued_at, payload FROM {pop}(:count)

-- name: peek
SELECT id, enqueued_at, payload FROM {table} ORDER BY id LIMIT :count

-- name: purge
WITH gone AS (DELETE FROM {table} RETURNING 1) SELECT count(*) AS purged FROM gone

-- name: depth
SELECT count(*) AS depth, min(enqueued_at) AS oldest_enqueued_at FROM {table}

-- name: oldest
SELECT enqueued_at AS oldest_enqueued_at FROM {table} ORDER BY id LIMIT 1

-- name: counters
SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END AS enqueued_total
FROM {seq}

-- Resize (qadmin resize): one transaction holding the capacity gate. Every message moves to
-- slot id % the new capacity, through negative slots so the UNIQUE constraint never sees two
-- rows in one slot; refused (before anything moves) when the ids held span more slots than
-- the new capacity has.

-- name: resize_lock
LOCK TABLE {ctl} IN ACCESS EXCLUSIVE MODE

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
