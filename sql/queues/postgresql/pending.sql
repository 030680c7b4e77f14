-- Pending queue on PostgreSQL (article 000): each message is due at a UTC time; pop returns only
-- due messages, earliest first, skipping rows other consumers hold.

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
    DELETE FROM {table} AS q
    WHERE q.id IN (
        SELECT s.id FROM {table} AS s
        WHERE s.due_at <= clock_timestamp()
        ORDER BY s.due_at, s.id
        LIMIT p_count
        FOR UPDATE SKIP LOCKED)
    RETURNING q.id, q.enqueued_at, q.due_at, q.payload
$$

-- name: drop
DROP FUNCTION IF EXISTS {pop}(integer)

-- name: drop
DROP FUNCTION IF EXISTS {push}(bytea, timestamptz)

-- name: drop
DROP TABLE IF EXISTS {table}

-- name: push
SELECT id, enqueued_at, due_at FROM {push}(:payload, :due_at)

-- name: pop
SELECT id, enqueued_at, due_at, payload FROM {pop}(:count)

-- name: peek
SELECT id, enqueued_at, due_at, payload FROM {table} ORDER BY due_at, id LIMIT :count

-- name: purge
WITH gone AS (DELETE FROM {table} RETURNING 1) SELECT count(*) AS purged FROM gone

-- name: depth
SELECT count(*) AS depth, min(enqueued_at) AS oldest_enqueued_at FROM {table}

-- name: oldest
SELECT enqueued_at AS oldest_enqueued_at FROM {table} ORDER BY id LIMIT 1

-- name: due
SELECT count(*) AS due FROM (
    SELECT 1 FROM {table} WHERE due_at <= clock_timestamp() LIMIT 10000) AS d

-- name: counters
SELECT pg_sequence_last_value(pg_get_serial_sequence({table.lit}, 'id')) AS enqueued_total
