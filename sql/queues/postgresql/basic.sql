-- heap, fifo and lifo queues on PostgreSQL (article 000).
-- Dequeue is DELETE ... RETURNING of rows chosen with FOR UPDATE SKIP LOCKED, so concurrent
-- consumers never wait for each other (PostgreSQL's READPAST). {order_by} is "ORDER BY id"
-- (fifo), "ORDER BY id DESC" (lifo) or empty (heap). A strict queue drops SKIP LOCKED: one
-- consumer at a time takes the head, the next waits for it to commit (the article's strict FIFO).
-- Applications call {push}(payload) and {pop}(count) exactly as qadmin does.

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
    LOOP
        RETURN QUERY
        DELETE FROM {table} AS q
        WHERE q.id IN (
            SELECT s.id FROM {table} AS s {order_by} LIMIT p_count FOR UPDATE {skip_locked})
        RETURNING q.id, q.enqueued_at, q.payload;
        -- Strict: we waited for the head row and it was deleted meanwhile, so FOR UPDATE
        -- returned nothing although later rows exist; look again with a fresh snapshot.
        EXIT WHEN FOUND OR NOT {strict} OR NOT EXISTS (SELECT 1 FROM {table});
    END LOOP;
END
$$

-- name: drop
DROP FUNCTION IF EXISTS {pop}(integer)

-- name: drop
DROP FUNCTION IF EXISTS {push}(bytea)

-- name: drop
DROP TABLE IF EXISTS {table}

-- name: push
SELECT id, enqueued_at FROM {push}(:payload)

-- name: pop
SELECT id, enqueued_at, payload FROM {pop}(:count)

-- name: peek
SELECT id, enqueued_at, payload FROM {table} {order_by} LIMIT :count

-- name: purge
WITH gone AS (DELETE FROM {table} RETURNING 1) SELECT count(*) AS purged FROM gone

-- name: depth
SELECT count(*) AS depth, min(enqueued_at) AS oldest_enqueued_at FROM {table}

-- name: oldest
SELECT enqueued_at AS oldest_enqueued_at FROM {table} ORDER BY id LIMIT 1

-- name: counters
SELECT pg_sequence_last_value(pg_get_serial_sequence({table.lit}, 'id')) AS enqueued_total
