-- Claim queue on PostgreSQL (article 002): pop is an atomic test-and-set of
-- processing_started_at on rows chosen with FOR UPDATE SKIP LOCKED; ack deletes the message,
-- fail records the error (and with retry releases the claim). claimed_session is the claiming
-- backend's pid, so inspect can tell whether the consumer is still connected.
-- Dead letters: fail appends each attempt's error to errors (a JSON array of objects with
-- attempt, error and at); the fail that records attempt max_attempts (read from the catalog
-- entry's options on every call) moves the message, errors and all, to the queue's _dead table
-- in the same transaction. Redrive moves it back as a new delivery: a new id at the tail (so
-- no attempt token of the old id can match it), attempts reset, enqueued_at and errors kept.
-- Fencing: ack and fail take the attempt number pop returned (p_attempt; NULL = unfenced) and
-- act only while the row's attempts still equal it, so a consumer whose claim went stale and
-- was requeued and claimed again cannot ack or fail the new claim.
-- extends: queues/postgresql/basic.sql (its messages go in as a basic queue's do: push, push_many, purge and counters come from there)
-- extends: queues/common/claim.sql (the statements it shares with other engines)

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
    errors                jsonb,
    payload               bytea NOT NULL
)

-- name: create
CREATE TABLE {dead} (
    id          bigint PRIMARY KEY,
    enqueued_at timestamptz NOT NULL,
    attempts    integer NOT NULL,
    last_error  text,
    errors      jsonb,
    died_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
    payload     bytea NOT NULL
)

-- name: create
CREATE INDEX {dead_idx.bare} ON {dead} (died_at)

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
    WITH d AS (
        UPDATE {table} AS q
        {claim_set()}
        WHERE q.id = ANY (ARRAY(
            SELECT s.id FROM {table} AS s
            WHERE s.processing_started_at IS NULL AND NOT {paused()}
            ORDER BY s.id
            LIMIT greatest(p_count, 0)
            FOR UPDATE SKIP LOCKED))
        RETURNING q.id, q.enqueued_at, q.attempts, q.payload)
    SELECT d.id, d.enqueued_at, d.attempts, d.payload FROM d ORDER BY d.id  -- oldest first
$$

-- name: create
CREATE FUNCTION {ack}(p_id bigint, p_attempt integer DEFAULT NULL)
RETURNS TABLE (id bigint)
LANGUAGE sql AS $$
    DELETE FROM {table} AS q
    WHERE q.id = p_id AND q.processing_started_at IS NOT NULL
      AND (p_attempt IS NULL OR q.attempts = p_attempt)
    RETURNING q.id
$$

-- name: create
CREATE FUNCTION {fail}(
    p_id bigint, p_error text, p_retry boolean DEFAULT false, p_attempt integer DEFAULT NULL)
RETURNS TABLE (id bigint, attempts integer, dead boolean)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_attempts integer;
    v_max      integer;
BEGIN
    -- Cut to {error_chars} characters, then "... (truncated, N chars)" (kinds.ERROR_CHARS).
    IF length(p_error) > {error_chars} THEN
        p_error := left(p_error, {error_chars}) || '... (truncated, ' || length(p_error) || ' chars)';
    END IF;
    UPDATE {table} AS q
    SET last_error = p_error,
        failed_at = clock_timestamp(),
        -- The first error and the latest: element 1 goes once {errors_kept} are kept.
        errors = CASE WHEN jsonb_array_length(coalesce(q.errors, '[]'::jsonb)) >= {errors_kept}
                      THEN q.errors - 1 ELSE coalesce(q.errors, '[]'::jsonb) END
                 || jsonb_build_array(jsonb_build_object(
                        'attempt', q.attempts, 'error', p_error, 'at', clock_timestamp())),
        processing_started_at = CASE WHEN p_retry THEN NULL ELSE q.processing_started_at END,
        claimed_by = CASE WHEN p_retry THEN NULL ELSE q.claimed_by END,
        claimed_session = CASE WHEN p_retry THEN NULL ELSE q.claimed_session END
    WHERE q.id = p_id AND q.processing_started_at IS NOT NULL
      AND (p_attempt IS NULL OR q.attempts = p_attempt)
    RETURNING q.attempts INTO v_attempts;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    SELECT (c.options::jsonb ->> 'max_attempts')::integer INTO v_max
      FROM {catalog} AS c WHERE c.name = {table.bare_lit};
    dead := coalesce(v_attempts >= v_max, false);
    IF dead THEN
        WITH gone AS (DELETE FROM {table} AS q WHERE q.id = p_id RETURNING q.*)
        INSERT INTO {dead} (id, enqueued_at, attempts, last_error, errors, payload)
        SELECT g.id, g.enqueued_at, g.attempts, g.last_error, g.errors, g.payload FROM gone AS g;
    END IF;
    id := p_id;
    attempts := v_attempts;
    RETURN NEXT;
END
$$

-- name: create
{push_many_rows()}

-- name: drop
DROP FUNCTION IF EXISTS {push_many}(bytea[])

-- name: drop
DROP FUNCTION IF EXISTS {fail}(bigint, text, boolean, integer)

-- name: drop
-- A queue created before fencing has these signatures.
DROP FUNCTION IF EXISTS {fail}(bigint, text, boolean)

-- name: drop
DROP FUNCTION IF EXISTS {ack}(bigint, integer)

-- name: drop
DROP FUNCTION IF EXISTS {ack}(bigint)

-- name: drop
DROP FUNCTION IF EXISTS {pop}(integer, text)

-- name: drop
DROP FUNCTION IF EXISTS {push}(bytea)

-- name: drop
DROP TABLE IF EXISTS {table}

-- name: drop
DROP TABLE IF EXISTS {dead}

-- name: pop
SELECT id, enqueued_at, attempts, payload FROM {pop}(:count, :worker)

-- name: ack
SELECT id FROM {ack}(:id)

-- name: fail
SELECT id, attempts, dead FROM {fail}(:id, :error, :retry)

-- name: ack_fenced
SELECT id FROM {ack}(:id, :attempt)

-- name: fail_fenced
SELECT id, attempts, dead FROM {fail}(:id, :error, :retry, :attempt)

-- name: depth
-- At most :limit waiting rows (claimed ones are counted apart: claimed_count) with ids from
-- :lo up to below :hi, in id order (the pop index, or the primary key): a walk whose cost
-- the caller bounds (diagnostics/entries/size.py picks :lo: the watermark, the bottom when
-- few dead entries can lie on the way, else a window below the id high-water mark). Only an
-- ordered index scan stops at the limit: a bitmap scan and sort (what the planner picks for a
-- never-analyzed or bloated table) would read every entry from :lo up first.
SET LOCAL enable_bitmapscan = off

-- name: depth
SET LOCAL enable_seqscan = off

-- name: depth
SELECT count(*) AS depth, min(w.enqueued_at) AS oldest_enqueued_at
FROM (SELECT t.enqueued_at FROM {table} AS t WHERE t.id >= :lo AND t.id < :hi AND t.processing_started_at IS NULL
      ORDER BY t.id LIMIT :limit) AS w

-- name: claims
SELECT id, processing_started_at, claimed_by, claimed_session::text AS claimed_session, attempts,
       last_error,
       extract(epoch FROM clock_timestamp() - processing_started_at)::float8 AS claimed_for_s
FROM {table}
WHERE processing_started_at IS NOT NULL
ORDER BY processing_started_at
LIMIT :limit

-- name: claims_head
-- The first waiting id from :lo up to below :hi, through the pop index (one entry per id,
-- the ids' first versions, which lie in id order on the heap: a cheap walk even through
-- acked ids): where the claims window below ends.
SET LOCAL enable_bitmapscan = off

-- name: claims_head
SET LOCAL enable_seqscan = off

-- name: claims_head
SELECT min(w.id) AS head
FROM (SELECT t.id FROM {table} AS t WHERE t.id >= :lo AND t.id < :hi
        AND t.processing_started_at IS NULL ORDER BY t.id LIMIT 1) AS w

-- name: claims_window
-- The claims among the ids from :lo up to below :hi, and how many rows there are claimed: what
-- inspect reads instead of the claims walk when many dead entries may lie in the claimed index
-- (acked claims leave theirs first in it, and a held snapshot keeps them: 50,000 buffers
-- behind 1,000,000). The caller puts the window just below the first waiting id, where claims
-- are made; claims below it are not read (a floor, said so). A bitmap scan of the primary key
-- range: each heap page once (an index scan reads a claim's two row versions, on different
-- pages, a buffer each).
SET LOCAL enable_seqscan = off

-- name: claims_window
SET LOCAL enable_indexscan = off

-- name: claims_window
WITH w AS MATERIALIZED (
    SELECT t.id, t.processing_started_at, t.claimed_by, t.claimed_session, t.attempts,
           t.last_error
    FROM {table} AS t WHERE t.id >= :lo AND t.id < :hi  -- no claim filter: the claimed
)                                                       -- index must not serve this
SELECT n.claimed_rows, c.id, c.processing_started_at, c.claimed_by,
       c.claimed_session::text AS claimed_session, c.attempts, c.last_error,
       extract(epoch FROM clock_timestamp() - c.processing_started_at)::float8 AS claimed_for_s
FROM (SELECT count(*) AS claimed_rows FROM w WHERE w.processing_started_at IS NOT NULL) AS n
LEFT JOIN LATERAL (SELECT * FROM w WHERE w.processing_started_at IS NOT NULL
                   ORDER BY w.processing_started_at LIMIT :limit) AS c ON true

-- name: requeue
-- A stale claim at its last allowed attempt (max_attempts) is a message that killed its
-- consumer every time (it never reached fail): it moves to the dead table with an error entry
-- saying so, instead of being released forever. The rest are released; both in one
-- statement, each row reported with dead true or false.
-- A stale claim whose row is locked (its consumer's ack or fail is being written, or its
-- transaction is still open) is skipped (SKIP LOCKED): one such row never blocks the others,
-- and the next requeue takes it if it is still stale.
-- With :include_live = 0 (requeue --skip-live), a claim whose session is still connected is
-- neither (claim_gone in fragments.sql); 1 judges every claim by its age alone.
WITH stale AS (
    SELECT q.id,
           coalesce(q.attempts >= (SELECT (c.options::jsonb ->> 'max_attempts')::integer
                                     FROM {catalog} AS c WHERE c.name = {table.bare_lit}),
                    false) AS dead
    FROM {table} AS q
    WHERE q.processing_started_at < clock_timestamp() - make_interval(secs => :stale_s)
      AND {claim_gone()}
    FOR UPDATE OF q SKIP LOCKED
), gone AS (
    DELETE FROM {table} AS q
    USING stale AS s
    WHERE q.id = s.id AND s.dead
    RETURNING q.*
), moved AS (
    INSERT INTO {dead} (id, enqueued_at, attempts, last_error, errors, payload)
    SELECT g.id, g.enqueued_at, g.attempts, e.error,
           CASE WHEN jsonb_array_length(coalesce(g.errors, '[]'::jsonb)) >= {errors_kept}
                THEN g.errors - 1 ELSE coalesce(g.errors, '[]'::jsonb) END
           || jsonb_build_array(jsonb_build_object(
                  'attempt', g.attempts, 'error', e.error, 'at', clock_timestamp())),
           g.payload
    FROM gone AS g
    CROSS JOIN LATERAL (SELECT 'claim went stale after attempt ' || g.attempts
                               || ' (consumer lost)' AS error) AS e
    RETURNING id
), released AS (
    UPDATE {table} AS q
    SET processing_started_at = NULL, claimed_by = NULL, claimed_session = NULL
    FROM stale AS s
    WHERE q.id = s.id AND NOT s.dead
    RETURNING q.id
)
SELECT m.id, true AS dead FROM moved AS m
UNION ALL
SELECT r.id, false AS dead FROM released AS r

-- name: dead_depth
-- Bounded like inspect's other counts: at most :limit rows are counted.
SELECT (SELECT count(*) FROM (SELECT 1 FROM {dead} LIMIT :limit) AS s) AS dead,
       (SELECT extract(epoch FROM clock_timestamp() - d.died_at)::float8
          FROM {dead} AS d ORDER BY d.died_at LIMIT 1) AS oldest_dead_s

-- name: dead_list
-- The dead messages, first to die first, at most count; the filters of dead, discard and
-- redrive, each on when its flag is 1: died more than older_s seconds ago, within the last
-- newer_s seconds, the error it died with matching the LIKE pattern ('!' escapes;
-- case-insensitive). Flags, not NULLs: every parameter keeps one type.
SELECT d.id, d.enqueued_at, d.attempts, d.died_at, d.errors::text AS errors,
       substring(d.payload FROM 1 FOR :preview) AS payload
FROM {dead} AS d
WHERE true
  AND (:has_older = 0 OR d.died_at < clock_timestamp() - make_interval(secs => :older_s))
  AND (:has_newer = 0 OR d.died_at >= clock_timestamp() - make_interval(secs => :newer_s))
  AND (:has_error = 0 OR d.last_error ILIKE :pattern ESCAPE '!')
ORDER BY d.died_at, d.id LIMIT :count

-- name: dead_match
-- The dead messages a filter picks, in id order after one id and up to another (the highest
-- when a run began: deaths during it wait for the next run), bounded. Read without
-- locks: a dead row never changes, so a mover locks each id by its key and finds it still
-- the same, or gone (another redrive or discard took it).
SELECT d.id FROM {dead} AS d
WHERE d.id > :after AND d.id <= :upto
  AND (:has_older = 0 OR d.died_at < clock_timestamp() - make_interval(secs => :older_s))
  AND (:has_newer = 0 OR d.died_at >= clock_timestamp() - make_interval(secs => :newer_s))
  AND (:has_error = 0 OR d.last_error ILIKE :pattern ESCAPE '!')
ORDER BY d.id LIMIT :limit

-- name: dead_one
-- One dead message whole (dead --id): its error history and payload.
SELECT id, enqueued_at, attempts, died_at, last_error, errors::text AS errors, payload
FROM {dead} WHERE id = :id

-- name: redrive_one
WITH gone AS (DELETE FROM {dead} AS d WHERE d.id = :id RETURNING d.*)
INSERT INTO {table} (enqueued_at, attempts, last_error, errors, payload)
SELECT g.enqueued_at, 0, g.last_error, g.errors, g.payload FROM gone AS g
RETURNING id AS new_id

-- name: head
-- The dequeue's head, read-only (qadmin explain): the pop's own WHERE / ORDER BY for one
-- message, taking no row lock.
SELECT s.id FROM {table} AS s WHERE s.processing_started_at IS NULL ORDER BY s.id LIMIT 1

-- name: head_index
-- The index that makes the head a seek in dequeue order (explain's fix when the plan sorts
-- or scans); create makes it (or the primary key serves).
CREATE INDEX CONCURRENTLY {pop_idx.bare} ON {table} (id) WHERE processing_started_at IS NULL
