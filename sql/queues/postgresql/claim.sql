-- Claim queue on PostgreSQL (article 002): pop is an atomic test-and-set of
-- processing_started_at on rows chosen with FOR UPDATE SKIP LOCKED; ack deletes the message,
-- fail records the error (and with retry releases the claim). claimed_session is the claiming
-- backend's pid, so inspect can tell whether the consumer is still connected.

-- name: create
CREATE TABLE {table} (
    id                    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    enqueued_at           timestamptz NOT NULL DEFAULT clock_timestamp(),
    processing_started_at timestamptz,
    claimed_by            text,
    claimed_session       bigint,
    attempts              integer NOT NULL DEFAULT 0,
    last_error            text,
    failed_at             timestamptz,
    payload               bytea NOT NULL
)

-- name: create
CREATE INDEX {pop_idx.bare} ON {table} (id) WHERE processing_started_at IS NULL

-- name: create
CREATE INDEX {claimed_idx.bare} ON {table} (processing_started_at)
WHERE processing_started_at IS NOT NULL

-- name: create
CREATE FUNCTION {push}(p_payload bytea)
RETURNS TABLE (id bigint, enqueued_at timestamptz)
LANGUAGE sql AS $$
    SELECT pg_notify('qadmin_' || md5({table.lit}), '');  -- wakes "pop --wait" (see basic.sql)
    INSERT INTO {table} (payload) VALUES (p_payload) RETURNING id, enqueued_at
$$

-- name: create
CREATE FUNCTION {pop}(p_count integer DEFAULT 1, p_worker text DEFAULT NULL)
RETURNS TABLE (id bigint, enqueued_at timestamptz, attempts integer, payload bytea)
LANGUAGE sql AS $$
    UPDATE {table} AS q
    SET processing_started_at = clock_timestamp(),
        claimed_by = p_worker,
        claimed_session = pg_backend_pid(),
        attempts = q.attempts + 1
    WHERE q.id IN (
        SELECT s.id FROM {table} AS s
        WHERE s.processing_started_at IS NULL
        ORDER BY s.id
        LIMIT p_count
        FOR UPDATE SKIP LOCKED)
    RETURNING q.id, q.enqueued_at, q.attempts, q.payload
$$

-- name: create
CREATE FUNCTION {ack}(p_id bigint)
RETURNS TABLE (id bigint)
LANGUAGE sql AS $$
    DELETE FROM {table} AS q
    WHERE q.id = p_id AND q.processing_started_at IS NOT NULL
    RETURNING q.id
$$

-- name: create
CREATE FUNCTION {fail}(p_id bigint, p_error text, p_retry boolean DEFAULT false)
RETURNS TABLE (id bigint, attempts integer)
LANGUAGE sql AS $$
    UPDATE {table} AS q
    SET last_error = p_error,
        failed_at = clock_timestamp(),
        processing_started_at = CASE WHEN p_retry THEN NULL ELSE q.processing_started_at END,
        claimed_by = CASE WHEN p_retry THEN NULL ELSE q.claimed_by END,
        claimed_session = CASE WHEN p_retry THEN NULL ELSE q.claimed_session END
    WHERE q.id = p_id AND q.processing_started_at IS NOT NULL
    RETURNING q.id, q.attempts
$$

-- name: drop
DROP FUNCTION IF EXISTS {fail}(bigint, text, boolean)

-- name: drop
DROP FUNCTION IF EXISTS {ack}(bigint)

-- name: drop
DROP FUNCTION IF EXISTS {pop}(integer, text)

-- name: drop
DROP FUNCTION IF EXISTS {push}(bytea)

-- name: drop
DROP TABLE IF EXISTS {table}

-- name: push
SELECT id, enqueued_at FROM {push}(:payload)

-- name: pop
SELECT id, enqueued_at, attempts, payload FROM {pop}(:count, :worker)

-- name: ack
SELECT id FROM {ack}(:id)

-- name: fail
SELECT id, attempts FROM {fail}(:id, :error, :retry)

-- name: peek
SELECT id, enqueued_at, processing_started_at, claimed_by, attempts, last_error, payload
FROM {table} ORDER BY id LIMIT :count

-- name: purge
WITH gone AS (DELETE FROM {table} RETURNING 1) SELECT count(*) AS purged FROM gone

-- name: depth
SELECT count(*) AS depth, min(enqueued_at) AS oldest_enqueued_at FROM {table}

-- name: claims
SELECT id, processing_started_at, claimed_by, claimed_session::text AS claimed_session, attempts,
       last_error,
       extract(epoch FROM clock_timestamp() - processing_started_at)::float8 AS claimed_for_s
FROM {table}
WHERE processing_started_at IS NOT NULL
ORDER BY processing_started_at
LIMIT :limit

-- name: requeue
UPDATE {table} AS q
SET processing_started_at = NULL, claimed_by = NULL, claimed_session = NULL
WHERE q.processing_started_at < clock_timestamp() - make_interval(secs => :stale_s)
RETURNING q.id

-- name: oldest
SELECT enqueued_at AS oldest_enqueued_at FROM {table} ORDER BY id LIMIT 1

-- name: counters
SELECT pg_sequence_last_value(pg_get_serial_sequence({table.lit}, 'id')) AS enqueued_total
