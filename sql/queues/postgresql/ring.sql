-- Preallocated ring of slots driven by two sequences (article 003, LMAX-style), on PostgreSQL.
--
-- Invariants (README, "The ring"):
-- * Message k lives in slot k % capacity; slots are only ever UPDATEd (fillfactor 70, no index
--   on an updated column, so slot updates are HOT and the table does not grow).
-- * The bound: a ring never holds more than its capacity, uncommitted pushes included. Push
--   counts the messages taken = push_next - pop_next + parked numbers (the sequences are not
--   transactional, so a number an uncommitted push took counts at once) and takes numbers only
--   while that count stays within the capacity; a push_many that does not fit is refused
--   whole. Counting and taking are one step: pushers hold the ring's push lock (a session
--   advisory lock, released before the push writes anything, never held to commit: a push
--   never waits on another transaction) from the count to nextval. Every push number is taken
--   under the push lock, so push_many takes its batch's block of numbers with one setval. Pops
--   take their numbers under the ring's pop lock the same way (nextval for each: repair's skip
--   takes one without the lock), so no two poppers race for "next" (which parked a number,
--   uncounted until its pop committed) and pop_next counts only numbers whose message was
--   there.
-- * push also takes k = nextval(push_seq) only after seeing that the slot the next number maps
--   to is free (or holds that number or a later one: the read was stale): a slot still
--   holding an older message (an orphan, or a pop that has not committed) refuses the push and
--   no number is used. A number whose slot is held by another transaction goes to the overflow
--   table, where the popper of k finds it: no number is abandoned.
-- * A push never waits on a row lock: it locks k's slot only if no other transaction holds it
--   (SKIP LOCKED), else message k goes to the overflow table. A number is taken before the
--   slot is written and a deadlock would roll the write back but not the number: with pushers
--   that never wait, and pops that wait only on a slot holding their own message (which only
--   a pusher's passing lock can hold), no cycle of waits can form.
-- * pop takes k = nextval(pop_seq) only after seeing message "next" present (slot or
--   overflow): an empty ring returns nothing and uses no number. If a racing popper leaves it a
--   number whose message has not arrived, that number is parked in the pending table and
--   served first by later pops, so it is never skipped and no later message is lost.
-- * Parked numbers count in the depth: each is a message waiting (a converted backlog is
--   parked whole, its messages in the overflow table) or a push still in flight.
-- * The capacity lives in {ctl}; push and pop read it after taking a share lock on {ctl},
--   which resize takes exclusively while it moves messages to their new slots.
-- * A pusher or popper killed between taking its number and committing leaves a hole; that is
--   what `qadmin inspect` and `qadmin repair` look for (see the rings issue).
-- extends: queues/common/ring.sql (the statements it shares with other engines)

-- name: create
CREATE SEQUENCE {push_seq} AS bigint MINVALUE 0 START WITH 0

-- name: create
CREATE SEQUENCE {pop_seq} AS bigint MINVALUE 0 START WITH 0

-- name: create
CREATE TABLE {table} (
    slot            integer CONSTRAINT {slot_idx.bare} PRIMARY KEY,
    message_id      bigint,
    enqueued_at     timestamptz,
    reference_count smallint NOT NULL DEFAULT 0,
    payload         bytea
) WITH (fillfactor = 70)

-- name: create
CREATE TABLE {overflow} (
    message_id  bigint PRIMARY KEY,
    enqueued_at timestamptz NOT NULL,
    payload     bytea NOT NULL
)

-- name: create
CREATE TABLE {pending} (
    message_id bigint PRIMARY KEY,
    taken_at   timestamptz NOT NULL DEFAULT clock_timestamp()
)

-- name: create
CREATE TABLE {ctl} (
    one      boolean PRIMARY KEY DEFAULT true CHECK (one),
    capacity integer NOT NULL
)

-- name: create
INSERT INTO {ctl} (one, capacity) VALUES (true, {capacity})

-- name: create
CREATE OR REPLACE FUNCTION {push}(p_payload bytea)
RETURNS TABLE (id bigint, enqueued_at timestamptz)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_next bigint;
    v_seq  bigint;
    v_cap  integer;
    v_at   timestamptz;
    v_key  bigint := ('x' || left(md5({push_seq.lit}), 16))::bit(64)::bigint;  -- push lock
BEGIN
    -- A serialization failure (REPEATABLE READ, SERIALIZABLE) rolls back after the number is
    -- taken, and no rollback returns a sequence number: refuse those levels up front.
    {committed_only(w=push)}
    -- A slot's payload column allows NULL (a free slot): refuse one here, as every other
    -- kind's NOT NULL column does, before a number is taken.
    IF p_payload IS NULL THEN
        RAISE EXCEPTION 'ring push: the payload is NULL' USING ERRCODE = 'not_null_violation';
    END IF;
    -- The capacity gate: resize holds {ctl} exclusively while it moves the slots, and the
    -- capacity is read in a statement after the lock is granted, so it is never stale.
    LOCK TABLE {ctl} IN ACCESS SHARE MODE;
    SELECT c.capacity INTO v_cap FROM {ctl} AS c;
    -- The push lock, held from the count to nextval only (see the invariants): released on
    -- any error too, since a session lock outlives the transaction.
    PERFORM pg_advisory_lock(v_key);
    BEGIN
        SELECT CASE WHEN s.is_called THEN s.last_value + 1 ELSE s.last_value END
          INTO v_next FROM {push_seq} AS s;
        IF v_next + 1 - (SELECT CASE WHEN s.is_called THEN s.last_value + 1
                                     ELSE s.last_value END FROM {pop_seq} AS s)
           + (SELECT count(*) FROM {pending}) <= v_cap THEN
            PERFORM 1 FROM {table} AS r
             WHERE r.slot = v_next % v_cap
               AND (r.reference_count = 0 OR r.message_id >= v_next);
            IF FOUND THEN
                v_seq := nextval({push_seq.lit});
            END IF;
        END IF;
    {lock_released()}
    IF v_seq IS NULL THEN
        RETURN;  -- full: nothing written, no number taken
    END IF;
    v_at := clock_timestamp();
    UPDATE {table} AS r
       SET message_id = v_seq, payload = p_payload, reference_count = 1, enqueued_at = v_at
     WHERE r.slot = (SELECT f.slot FROM {table} AS f
                      WHERE f.slot = v_seq % v_cap AND f.reference_count = 0
                        FOR UPDATE SKIP LOCKED);  -- never waits: see the invariants
    IF NOT FOUND THEN
        INSERT INTO {overflow} (message_id, enqueued_at, payload) VALUES (v_seq, v_at, p_payload);
    END IF;
    PERFORM pg_notify('qadmin_' || md5({table.lit}), '');  -- wakes "pop --wait" (see basic.sql)
    RETURN QUERY SELECT v_seq, v_at;
END
$$

-- name: create
-- Many messages in one statement, all or none: the batch is refused whole (no row, no number
-- taken) unless every message fits, that is the count of messages taken (push's bound) plus
-- the batch stays within the capacity and every slot the batch's numbers map to is free (as
-- in push). The numbers are taken under the push lock in array order, then the slots are
-- filled in one UPDATE. A number whose slot another transaction holds (SKIP LOCKED: a push
-- never waits) goes to the overflow table, as in push. One notification; one enqueued_at.
CREATE OR REPLACE FUNCTION {push_many}(p_payloads bytea[])
RETURNS TABLE (id bigint, enqueued_at timestamptz)
LANGUAGE plpgsql
-- One plan per statement, made once per session: planning each call anew cost more than the
-- batch's own work (every statement's plan here is an index range or probe whatever the values)
SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
DECLARE
    v_next bigint;
    v_cap  integer;
    v_want integer := coalesce(cardinality(p_payloads), 0);
    v_lo   integer;  -- the slot of the batch's first number, once its numbers are taken
    v_at   timestamptz;
    v_key  bigint := ('x' || left(md5({push_seq.lit}), 16))::bit(64)::bigint;  -- push lock
BEGIN
    {committed_only(w=push)}
    IF array_position(p_payloads, NULL) IS NOT NULL THEN  -- as in push, before any number
        RAISE EXCEPTION 'ring push_many: payload % is NULL', array_position(p_payloads, NULL)
            USING ERRCODE = 'not_null_violation';
    END IF;
    IF v_want = 0 THEN
        RETURN;
    END IF;
    LOCK TABLE {ctl} IN ACCESS SHARE MODE;  -- the capacity gate, as in push
    SELECT c.capacity INTO v_cap FROM {ctl} AS c;
    PERFORM pg_advisory_lock(v_key);  -- the push lock, as in push
    BEGIN
        SELECT CASE WHEN s.is_called THEN s.last_value + 1 ELSE s.last_value END
          INTO v_next FROM {push_seq} AS s;
        IF v_next + v_want - (SELECT CASE WHEN s.is_called THEN s.last_value + 1
                                          ELSE s.last_value END FROM {pop_seq} AS s)
           + (SELECT count(*) FROM {pending}) <= v_cap
           -- the batch's slots, one range (two when it wraps), each read once
           AND (SELECT count(*) FROM {table} AS r
                 WHERE (r.slot BETWEEN v_next % v_cap
                                   AND least(v_next % v_cap + v_want - 1, v_cap - 1)
                        OR r.slot BETWEEN 0 AND v_next % v_cap + v_want - 1 - v_cap)
                   AND NOT (r.reference_count = 0 OR r.message_id
                            >= v_next + (r.slot - v_next % v_cap + v_cap) % v_cap)) = 0 THEN
            -- v_next .. v_next + v_want - 1 are the batch's numbers: every number of
            -- {push_seq} is taken under the push lock, so one setval takes the block.
            PERFORM setval({push_seq.lit}, v_next + v_want - 1);
            v_lo := v_next % v_cap;
        END IF;
    {lock_released()}
    IF v_lo IS NULL THEN
        RETURN;  -- full: nothing written, no number taken
    END IF;
    v_at := clock_timestamp();
    RETURN QUERY
    WITH placed AS (
        -- the slots of the batch, one range (two when it wraps), filled in one UPDATE
        UPDATE {table} AS r
           SET message_id = v_next + u.n - 1, payload = u.p, reference_count = 1,
               enqueued_at = v_at
          FROM unnest(p_payloads) WITH ORDINALITY AS u(p, n)
         WHERE r.slot = (v_next + u.n - 1) % v_cap
           AND r.slot = ANY (ARRAY(SELECT f.slot FROM {table} AS f
                           WHERE (f.slot BETWEEN v_lo AND least(v_lo + v_want - 1, v_cap - 1)
                                  OR f.slot BETWEEN 0 AND v_lo + v_want - 1 - v_cap)
                             AND f.reference_count = 0
                             FOR UPDATE SKIP LOCKED))  -- never waits: see the invariants
        RETURNING r.message_id
    ), spilled AS (
        INSERT INTO {overflow} (message_id, enqueued_at, payload)
        SELECT v_next + u.n - 1, v_at, u.p FROM unnest(p_payloads) WITH ORDINALITY AS u(p, n)
         WHERE NOT EXISTS (SELECT 1 FROM placed AS d WHERE d.message_id = v_next + u.n - 1)
    )
    SELECT v_next + g.i, v_at FROM generate_series(0, v_want - 1) AS g(i);
    PERFORM pg_notify('qadmin_' || md5({table.lit}), '');  -- wakes "pop --wait" (see basic.sql)
END
$$

-- name: create
-- Up to p_count messages in a few statements, whatever p_count: parked numbers whose message is
-- there first (oldest first, each locked in {pending}: SKIP LOCKED, another pop serves the
-- rest), then, under the pop lock, the run of messages present from "next" on (slot or
-- overflow; the run ends at the first number whose message is missing: in flight, or a hole)
-- is counted and that many numbers are taken. Then one statement empties their slots (one
-- UPDATE of every slot, the old contents returned), deletes those in the overflow table and
-- parks any taken number whose message is not there (only when something took a pop number
-- without the pop lock, repair's skip, between the count and nextval).
CREATE OR REPLACE FUNCTION {pop}(p_count integer DEFAULT 1)
RETURNS TABLE (id bigint, enqueued_at timestamptz, payload bytea)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_parked bigint[];
    v_ids    bigint[];
    v_next   bigint;
    v_want   integer;
    v_run    integer := 0;
    v_lo     integer;
    v_slots  bigint := -1;  -- the run's messages in their slots, when all of them are
    v_cap    integer;
    v_key    bigint := ('x' || left(md5({pop_seq.lit}), 16))::bit(64)::bigint;  -- pop lock
BEGIN
    {paused_return()}
    -- A serialization failure (REPEATABLE READ, SERIALIZABLE) rolls back after the number is
    -- taken, and no rollback returns a sequence number: refuse those levels up front.
    {committed_only(w=pop)}
    LOCK TABLE {ctl} IN ACCESS SHARE MODE;  -- the capacity gate, as in push
    SELECT c.capacity INTO v_cap FROM {ctl} AS c;
    SELECT coalesce(array_agg(p.message_id ORDER BY p.message_id), ARRAY[]::bigint[]) INTO v_parked
      FROM (SELECT p.message_id FROM {pending} AS p
             WHERE EXISTS (SELECT 1 FROM {table} AS r
                            WHERE r.slot = p.message_id % v_cap AND r.message_id = p.message_id)
                OR EXISTS (SELECT 1 FROM {overflow} AS o WHERE o.message_id = p.message_id)
             ORDER BY p.message_id LIMIT greatest(p_count, 0) FOR UPDATE SKIP LOCKED) AS p;
    IF cardinality(v_parked) < p_count THEN
        -- The pop lock, from the look at "next" to nextval only (see the invariants).
        PERFORM pg_advisory_lock(v_key);
        BEGIN
            SELECT CASE WHEN s.is_called THEN s.last_value + 1 ELSE s.last_value END
              INTO v_next FROM {pop_seq} AS s;
            v_want := p_count - cardinality(v_parked);
            v_lo := v_next % v_cap;
            IF v_want <= v_cap THEN
                -- The slots of the numbers next .. next + v_want - 1, one range (two when it
                -- wraps): when each holds its number's message, the run is all of them.
                SELECT count(*) INTO v_slots FROM {table} AS r
                 WHERE (r.slot BETWEEN v_lo AND least(v_lo + v_want - 1, v_cap - 1)
                        OR r.slot BETWEEN 0 AND v_lo + v_want - 1 - v_cap)
                   AND r.message_id = v_next + (r.slot - v_lo + v_cap) % v_cap;
            END IF;
            IF v_slots = v_want THEN
                v_run := v_want;
            ELSE
                v_slots := -1;
                -- The run ends at the first number whose message is in neither place.
                SELECT coalesce(min(g.k) - v_next, v_want) INTO v_run
                  FROM generate_series(v_next, v_next + v_want - 1) AS g(k)
                 WHERE NOT EXISTS (SELECT 1 FROM {table} AS r
                                    WHERE r.slot = g.k % v_cap AND r.message_id = g.k)
                   AND NOT EXISTS (SELECT 1 FROM {overflow} AS o WHERE o.message_id = g.k);
            END IF;
            IF v_run > 0 THEN
                SELECT array_agg(nextval({pop_seq.lit}) ORDER BY g.i) INTO v_ids
                  FROM generate_series(1, v_run) AS g(i);
            END IF;
        {lock_released()}
    END IF;
    IF cardinality(v_parked) = 0 AND v_run = 0 THEN
        RETURN;  -- empty: no number taken
    END IF;
    IF cardinality(v_parked) = 0 AND v_slots = v_run
       AND v_ids[1] = v_next AND v_ids[v_run] = v_next + v_run - 1 THEN
        -- The usual pop: numbers next .. next + v_run - 1, every message in its slot. One
        -- UPDATE of the slots' range empties them; the old contents come from the statement's
        -- snapshot (a message never changes in its slot; the UPDATE waits for a slot another
        -- transaction holds, a pusher's passing lock, and finds it again by its number).
        RETURN QUERY
        WITH served AS (
            UPDATE {table} AS r
               SET reference_count = 0, message_id = NULL, payload = NULL, enqueued_at = NULL
              FROM (SELECT f.slot, f.message_id, f.enqueued_at, f.payload FROM {table} AS f
                     WHERE (f.slot BETWEEN v_lo AND least(v_lo + v_run - 1, v_cap - 1)
                            OR f.slot BETWEEN 0 AND v_lo + v_run - 1 - v_cap)
                       AND f.message_id BETWEEN v_next AND v_next + v_run - 1) AS m
             WHERE r.slot = m.slot AND r.message_id = m.message_id
            RETURNING m.message_id AS id, m.enqueued_at, m.payload
        )
        SELECT s.id, s.enqueued_at, s.payload FROM served AS s ORDER BY s.id;
        RETURN;
    END IF;
    -- Else (parked numbers, messages in the overflow table, numbers not in a row): the
    -- numbers' slots and overflow rows, and any taken number whose message is in neither
    -- place parked.
    RETURN QUERY
    WITH taken AS MATERIALIZED (
        SELECT k.k FROM unnest(v_parked || coalesce(v_ids, ARRAY[]::bigint[])) AS k(k)
    ), slotted AS (
        UPDATE {table} AS r
           SET reference_count = 0, message_id = NULL, payload = NULL, enqueued_at = NULL
          FROM (SELECT f.slot, f.message_id, f.enqueued_at, f.payload FROM {table} AS f
                 WHERE f.slot IN (SELECT t.k % v_cap FROM taken AS t)
                   AND f.message_id IN (SELECT t.k FROM taken AS t)) AS m
         WHERE r.slot = m.slot AND r.message_id = m.message_id
        RETURNING m.message_id AS id, m.enqueued_at, m.payload
    ), spilled AS (
        DELETE FROM {overflow} AS o
         WHERE o.message_id IN (SELECT t.k FROM taken AS t)
           AND NOT EXISTS (SELECT 1 FROM slotted AS s WHERE s.id = o.message_id)
        RETURNING o.message_id AS id, o.enqueued_at, o.payload
    ), served AS (
        SELECT s.id, s.enqueued_at, s.payload FROM slotted AS s
        UNION ALL
        SELECT s.id, s.enqueued_at, s.payload FROM spilled AS s
    ), unparked AS (
        DELETE FROM {pending} AS p
         WHERE p.message_id = ANY (v_parked)
           AND EXISTS (SELECT 1 FROM served AS s WHERE s.id = p.message_id)
    ), parked AS (
        INSERT INTO {pending} (message_id)
        SELECT t.k FROM taken AS t
         WHERE NOT t.k = ANY (v_parked)
           AND NOT EXISTS (SELECT 1 FROM served AS s WHERE s.id = t.k)
    )
    SELECT s.id, s.enqueued_at, s.payload FROM served AS s ORDER BY s.id;
END
$$

-- name: drop
DROP FUNCTION IF EXISTS {pop}(integer)

-- name: drop
DROP FUNCTION IF EXISTS {push_many}(bytea[])

-- name: drop
DROP FUNCTION IF EXISTS {push}(bytea)

-- name: drop
DROP TABLE IF EXISTS {table}

-- name: drop
DROP TABLE IF EXISTS {overflow}

-- name: drop
DROP TABLE IF EXISTS {pending}

-- name: drop
DROP SEQUENCE IF EXISTS {push_seq}

-- name: drop
DROP SEQUENCE IF EXISTS {pop_seq}

-- name: drop
DROP TABLE IF EXISTS {ctl}

-- name: push
SELECT id, enqueued_at FROM {push}(:payload)

-- name: push_many
SELECT id, enqueued_at FROM {push_many}(CAST(:payloads AS bytea[])) ORDER BY id

-- name: push_batch
-- A queue created before push_many: many messages in one statement (push --lines, --file),
-- the push routine for each element in array order, one after another (a recursive step per
-- message). A full ring returns no row, which ends the recursion: the batch stops at the first
-- refusal, what went before stays in.
WITH RECURSIVE pushed (n, id, enqueued_at) AS (
    SELECT 0::bigint, NULL::bigint, NULL::timestamptz
    UNION ALL
    SELECT r.n + 1, p.id, p.enqueued_at
    FROM pushed AS r
    CROSS JOIN LATERAL {push}((CAST(:payloads AS bytea[]))[r.n + 1]) AS p
    WHERE r.n < cardinality(CAST(:payloads AS bytea[]))
)
SELECT id, enqueued_at FROM pushed WHERE n > 0 ORDER BY n

-- name: pop
SELECT id, enqueued_at, payload FROM {pop}(:count)

-- name: peek
WITH nxt AS (
    SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END AS n FROM {pop_seq}
)
-- The next numbers' slots (past a hole too: up to 10,000 numbers ahead), parked numbers whose
-- message sits in a slot, and the overflow table: what pops will serve, in number order.
SELECT id, enqueued_at, payload FROM (
    SELECT r.message_id AS id, r.enqueued_at, r.payload
    FROM nxt CROSS JOIN generate_series(0, least({capacity}, 10000) - 1) AS g(k)
    JOIN {table} AS r ON r.slot = (nxt.n + g.k) % {capacity} AND r.message_id = nxt.n + g.k
    UNION ALL
    SELECT r.message_id, r.enqueued_at, r.payload FROM {pending} AS p
    JOIN {table} AS r ON r.slot = p.message_id % {capacity} AND r.message_id = p.message_id
    UNION ALL
    SELECT o.message_id, o.enqueued_at, o.payload FROM {overflow} AS o
) AS m
ORDER BY id LIMIT :count

-- Purge empties the ring as a set, holding the capacity gate ({ctl} in ACCESS EXCLUSIVE mode,
-- so no push or pop is half done): every message in a slot or the overflow table goes, parked
-- numbers are dropped and the pop sequence catches up with the push sequence. Draining through
-- pop would stop at a missing number (a killed pusher's) and leave the rest.

-- name: purge
LOCK TABLE {ctl} IN ACCESS EXCLUSIVE MODE

-- name: purge
SELECT (SELECT count(*) FROM {table} WHERE reference_count = 1)
     + (SELECT count(*) FROM {overflow}) AS purged

-- name: purge
UPDATE {table} SET reference_count = 0, message_id = NULL, payload = NULL, enqueued_at = NULL
WHERE reference_count = 1

-- name: purge
DELETE FROM {overflow}

-- name: purge
DELETE FROM {pending}

-- name: purge
SELECT setval({pop_seq.lit},
              (SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END
                 FROM {push_seq}),
              false)

-- name: depth
-- The oldest message waiting: the next number's slot; when that number is missing (a killed
-- pusher's hole), the slots of the numbers behind it (min(capacity, 10,000) primary-key
-- lookups, only then); the overflow table; the lowest parked numbers' slots.
WITH s AS (
    SELECT (SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END
              FROM {push_seq}) AS push_next,
           (SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END
              FROM {pop_seq}) AS pop_next
)
SELECT greatest(s.push_next - s.pop_next, 0) + (SELECT count(*) FROM {pending}) AS depth,
       least(coalesce((SELECT r.enqueued_at FROM {table} AS r
                        WHERE r.slot = s.pop_next % {capacity}
                          AND r.message_id = s.pop_next),
                      (SELECT min(r.enqueued_at)
                         FROM generate_series(1, least({capacity}, 10000)) AS g
                         JOIN {table} AS r ON r.slot = (s.pop_next + g) % {capacity}
                        WHERE s.pop_next < s.push_next
                          AND r.reference_count = 1 AND r.message_id > s.pop_next)),
             (SELECT min(o.enqueued_at) FROM {overflow} AS o),
             (SELECT min(r.enqueued_at)
                FROM (SELECT p.message_id FROM {pending} AS p ORDER BY p.message_id LIMIT 100)
                     AS p
                JOIN {table} AS r ON r.slot = p.message_id % {capacity}
                                 AND r.message_id = p.message_id)) AS oldest_enqueued_at
FROM s

-- name: counters
SELECT (SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END FROM {push_seq})
           AS enqueued_total,
       (SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END FROM {pop_seq})
           AS dequeued_total

-- name: ring_state
-- Bitmap scans of slot ranges below, never a scan of the table whatever the planner thinks of
-- a bloated ring, and not ordered index scans: those fetch a heap page per index entry (a
-- slot's moved row versions alternate between pages: 2,072 buffers for 5,000 clean slots,
-- where the bitmap reads each page once: 380).
SET LOCAL enable_seqscan = off

-- name: ring_state
SET LOCAL enable_indexscan = off

-- name: ring_state
-- What a slot behind the pop sequence costs to read: up to 8 slots are read and the buffers
-- this transaction fetched for them counted; qadmin.ring_behind (below) is how many numbers
-- behind the pop sequence the orphan search then reads: min(capacity, 10,000), fewer as the
-- slots cost more (about 256 buffers: a held snapshot keeps every lap's row versions of a
-- slot, and an index scan visits each; a ring 30 laps deep costs 20 and more a slot).
DO $$
DECLARE
    v_cap  bigint := {capacity};
    v_last bigint;
    v_lo   bigint;
    v_b0   bigint;
    v_cost numeric;
    v_n    bigint := least({capacity}, 10000);
BEGIN
    SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END INTO v_last
      FROM {pop_seq};
    IF v_last >= 0 THEN
        v_lo := greatest(v_last % v_cap - 7, 0);
        v_b0 := pg_stat_get_xact_blocks_fetched({table.lit}::regclass)
                + pg_stat_get_xact_blocks_fetched({slot_idx.lit}::regclass);
        PERFORM count(r.message_id) FROM {table} AS r
         WHERE r.slot BETWEEN v_lo AND v_last % v_cap;
        v_cost := (pg_stat_get_xact_blocks_fetched({table.lit}::regclass)
                   + pg_stat_get_xact_blocks_fetched({slot_idx.lit}::regclass) - v_b0)
                  / (v_last % v_cap - v_lo + 1)::numeric;
        -- a few buffers are the index's descent, whatever the slots: not a slot's price
        IF v_cost > 1 THEN
            v_n := least(v_n, greatest(floor(256 / v_cost), 1));
        END IF;
    END IF;
    PERFORM set_config('qadmin.ring_behind', v_n::text, true);
END
$$

-- name: ring_state
-- An orphan is a message whose number the pop sequence has passed, still in its slot (or the
-- overflow table) and not parked: its popper died before committing. Looked for in the slots
-- and overflow rows of the numbers behind the pop sequence (a live ring cannot pass an orphan
-- by more than a lap: its slot stops the pushes) and the slot the next push needs. A row
-- whose old version a live transaction is updating or deleting is a pop in flight, not an
-- orphan.
-- Bounded: the slots behind are read as one or two ranges of the slot index (consecutive
-- slots share heap pages; point look-ups read three buffers each: 30,000 for 10,000 slots),
-- and only as many as about 256 buffers allow (orphans_searched, below; measured above). An orphan further
-- behind is found when the ring laps onto its slot (orphan_blocks_push: the push slot is
-- always read).
WITH s AS (
    SELECT (SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END
              FROM {push_seq}) AS push_next,
           (SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END
              FROM {pop_seq}) AS pop_next
), w AS (
    -- how many numbers behind the pop sequence are read (set above)
    SELECT current_setting('qadmin.ring_behind')::bigint AS n
), bw AS (
    SELECT greatest(s.pop_next - w.n, 0) AS lo_k, s.pop_next - 1 AS hi_k FROM s, w
), br AS (
    -- the numbers lo_k..hi_k as slot ranges [p1_lo, p1_hi] and [p2_lo, p2_hi] (p2 empty
    -- unless they wrap past the last slot)
    SELECT bw.lo_k,
           CASE WHEN bw.hi_k - bw.lo_k + 1 >= {capacity} THEN 0 ELSE bw.lo_k % {capacity} END
               AS p1_lo,
           CASE WHEN bw.hi_k - bw.lo_k + 1 >= {capacity}
                  OR bw.lo_k % {capacity} > bw.hi_k % {capacity}
                THEN {capacity} - 1 ELSE bw.hi_k % {capacity} END AS p1_hi,
           0 AS p2_lo,
           CASE WHEN bw.hi_k - bw.lo_k + 1 < {capacity}
                 AND bw.lo_k % {capacity} > bw.hi_k % {capacity}
                THEN bw.hi_k % {capacity} ELSE -1 END AS p2_hi
    FROM bw WHERE bw.hi_k >= bw.lo_k
), candidates AS (
    SELECT r.slot, r.message_id, r.enqueued_at, r.xmax
    FROM br JOIN {table} AS r ON r.slot BETWEEN br.p1_lo AND br.p1_hi
    WHERE r.reference_count = 1 AND r.message_id >= br.lo_k
    UNION
    SELECT r.slot, r.message_id, r.enqueued_at, r.xmax
    FROM br JOIN {table} AS r ON r.slot BETWEEN br.p2_lo AND br.p2_hi
    WHERE r.reference_count = 1 AND r.message_id >= br.lo_k
    UNION
    SELECT r.slot, r.message_id, r.enqueued_at, r.xmax FROM {table} AS r, s
    WHERE r.reference_count = 1 AND r.slot = s.push_next % {capacity}
    UNION
    -- in the overflow table too (a killed popper's message there; no slot), the same window:
    -- its primary key's range
    SELECT NULL, o.message_id, o.enqueued_at, o.xmax
    FROM bw JOIN {overflow} AS o ON o.message_id BETWEEN bw.lo_k AND bw.hi_k
), orphans AS (
    SELECT c.slot, c.message_id, c.enqueued_at FROM candidates AS c, s
    WHERE c.message_id < s.pop_next
      AND NOT EXISTS (SELECT 1 FROM {pending} AS p WHERE p.message_id = c.message_id)
      AND NOT EXISTS (SELECT 1 FROM pg_stat_activity AS a WHERE a.backend_xid = c.xmax)
), orphan AS (
    SELECT o.slot, o.message_id, o.enqueued_at FROM orphans AS o ORDER BY o.message_id LIMIT 1
), hole AS (
    -- the next number is missing (a killed pusher's hole): only then are the slots of the
    -- next min(capacity, 10,000) numbers read (a killed batch push leaves up to 10,000 holes
    -- in a row: qadmin's batch limit), as ranges like those behind
    SELECT s.pop_next + 1 AS lo_k,
           least(s.pop_next + least({capacity}, 10000), s.push_next - 1) AS hi_k
    FROM s
    WHERE s.pop_next < s.push_next
      AND NOT EXISTS (SELECT 1 FROM {table} AS r WHERE r.slot = s.pop_next % {capacity}
                       AND r.message_id = s.pop_next)
      AND NOT EXISTS (SELECT 1 FROM {overflow} AS o WHERE o.message_id = s.pop_next)
), ar AS (
    SELECT h.lo_k,
           CASE WHEN h.hi_k - h.lo_k + 1 >= {capacity} THEN 0 ELSE h.lo_k % {capacity} END
               AS p1_lo,
           CASE WHEN h.hi_k - h.lo_k + 1 >= {capacity}
                  OR h.lo_k % {capacity} > h.hi_k % {capacity}
                THEN {capacity} - 1 ELSE h.hi_k % {capacity} END AS p1_hi,
           0 AS p2_lo,
           CASE WHEN h.hi_k - h.lo_k + 1 < {capacity}
                 AND h.lo_k % {capacity} > h.hi_k % {capacity}
                THEN h.hi_k % {capacity} ELSE -1 END AS p2_hi
    FROM hole AS h WHERE h.hi_k >= h.lo_k
), behind_hole AS (
    SELECT r.enqueued_at FROM ar JOIN {table} AS r ON r.slot BETWEEN ar.p1_lo AND ar.p1_hi
    WHERE r.reference_count = 1 AND r.message_id >= ar.lo_k
    UNION ALL
    SELECT r.enqueued_at FROM ar JOIN {table} AS r ON r.slot BETWEEN ar.p2_lo AND ar.p2_hi
    WHERE r.reference_count = 1 AND r.message_id >= ar.lo_k
)
SELECT s.push_next,
       s.pop_next,
       (SELECT count(*) FROM {pending}) AS parked,
       (SELECT extract(epoch FROM clock_timestamp() - min(p.taken_at))::float8
          FROM {pending} AS p) AS oldest_parked_s,
       (SELECT count(*) FROM {overflow}) AS overflow,
       (SELECT b.message_id FROM orphan AS b) AS orphan_id,
       (SELECT count(*) FROM orphans) AS orphans,
       (SELECT bw.hi_k - bw.lo_k + 1 FROM bw WHERE bw.hi_k >= bw.lo_k) AS orphans_searched,
       (SELECT coalesce(b.slot = s.push_next % {capacity}, false) FROM orphan AS b)
           AS orphan_blocks_push,
       (SELECT 'INSERT INTO ' || {pending.lit} || ' (message_id, taken_at) VALUES ('
               || b.message_id || ', clock_timestamp())' FROM orphan AS b) AS orphan_fix,
       'SELECT nextval(' || quote_literal({pop_seq.lit}) || ')' AS hole_fix,
       (SELECT b.slot FROM orphan AS b) AS orphan_slot,
       (SELECT extract(epoch FROM clock_timestamp() - b.enqueued_at)::float8
          FROM orphan AS b) AS orphan_age_s,
       (SELECT h.lo_k - 1 FROM hole AS h) AS missing_id,
       (SELECT extract(epoch FROM clock_timestamp() - min(x.enqueued_at))::float8
          FROM behind_hole AS x) AS waiting_behind_age_s
FROM s

-- name: repair_orphans
-- A row whose old version a live transaction is updating or deleting is a pop in flight, not
-- an orphan (as ring_state says): parked, its number would count as waiting, and hold a
-- slot's worth of capacity, until a later repair voided it.
WITH s AS (SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END AS pop_next
             FROM {pop_seq})
SELECT r.message_id AS id FROM {table} AS r, s
WHERE r.reference_count = 1 AND r.message_id < s.pop_next
  AND NOT EXISTS (SELECT 1 FROM {pending} AS p WHERE p.message_id = r.message_id)
  AND NOT EXISTS (SELECT 1 FROM pg_stat_activity AS a WHERE a.backend_xid = r.xmax)
UNION ALL
SELECT o.message_id FROM {overflow} AS o, s
WHERE o.message_id < s.pop_next
  AND NOT EXISTS (SELECT 1 FROM {pending} AS p WHERE p.message_id = o.message_id)
  AND NOT EXISTS (SELECT 1 FROM pg_stat_activity AS a WHERE a.backend_xid = o.xmax)
ORDER BY 1

-- name: repair_park
WITH s AS (SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END AS pop_next
             FROM {pop_seq}),
orphans AS (
    SELECT r.message_id FROM {table} AS r, s
    WHERE r.reference_count = 1 AND r.message_id < s.pop_next
      AND NOT EXISTS (SELECT 1 FROM pg_stat_activity AS a WHERE a.backend_xid = r.xmax)
    UNION ALL
    SELECT o.message_id FROM {overflow} AS o, s
    WHERE o.message_id < s.pop_next
      AND NOT EXISTS (SELECT 1 FROM pg_stat_activity AS a WHERE a.backend_xid = o.xmax)
)
INSERT INTO {pending} (message_id)
SELECT message_id FROM orphans
ON CONFLICT (message_id) DO NOTHING
RETURNING message_id AS id

-- name: repair_stale
SELECT p.message_id AS id FROM {pending} AS p
WHERE p.taken_at < clock_timestamp() - make_interval(secs => :older_s)
  AND NOT EXISTS (SELECT 1 FROM {table} AS r
                   WHERE r.slot = p.message_id % {capacity} AND r.message_id = p.message_id)
  AND NOT EXISTS (SELECT 1 FROM {overflow} AS o WHERE o.message_id = p.message_id)
ORDER BY 1

-- name: repair_void
DELETE FROM {pending} AS p
WHERE p.taken_at < clock_timestamp() - make_interval(secs => :older_s)
  AND NOT EXISTS (SELECT 1 FROM {table} AS r
                   WHERE r.slot = p.message_id % {capacity} AND r.message_id = p.message_id)
  AND NOT EXISTS (SELECT 1 FROM {overflow} AS o WHERE o.message_id = p.message_id)
RETURNING p.message_id AS id

-- name: repair_skip
WITH x AS (SELECT nextval({pop_seq.lit}) AS n),
parked AS (
    INSERT INTO {pending} (message_id)
    SELECT x.n FROM x
    WHERE EXISTS (SELECT 1 FROM {table} AS r WHERE r.slot = x.n % {capacity}
                     AND r.message_id = x.n)
       OR EXISTS (SELECT 1 FROM {overflow} AS o WHERE o.message_id = x.n)
    RETURNING message_id
)
SELECT x.n AS id,
       CASE WHEN EXISTS (SELECT 1 FROM parked) THEN 'parked' ELSE 'voided' END AS action
FROM x

-- Resize (qadmin resize): one transaction holding the capacity gate ({ctl} in ACCESS
-- EXCLUSIVE mode). Messages leave their slots for the overflow table, the slot rows are cut or
-- extended (in chunks, for the progress bar), then the lowest message of each new slot moves
-- back; the rest stay in the overflow table, where pop finds them by id. Sequences, parked
-- numbers and message ids are untouched.

-- name: resize_lock
LOCK TABLE {ctl} IN ACCESS EXCLUSIVE MODE

-- name: resize_state
SELECT (SELECT count(*) FROM {table} WHERE reference_count = 1)
     + (SELECT count(*) FROM {overflow}) AS messages,
       (SELECT capacity FROM {ctl}) AS capacity

-- name: resize_grow
-- Plain INSERT, no ON CONFLICT (which doubled its cost): every caller adds slots that cannot
-- exist yet, inside one transaction (create's grow, resize's after its cut, convert's switch),
-- so a killed one leaves none of them, and create starts an interrupted create from nothing.
INSERT INTO {table} (slot) SELECT generate_series(:lo, :hi - 1)

-- name: resize_place
WITH first_per_slot AS (
    SELECT DISTINCT ON (o.message_id % :capacity) o.message_id, o.enqueued_at, o.payload
    FROM {overflow} AS o
    ORDER BY o.message_id % :capacity, o.message_id
), placed AS (
    UPDATE {table} AS r
       SET message_id = f.message_id, enqueued_at = f.enqueued_at, payload = f.payload,
           reference_count = 1
      FROM first_per_slot AS f
     WHERE r.slot = f.message_id % :capacity
    RETURNING r.message_id
)
DELETE FROM {overflow} AS o USING placed WHERE o.message_id = placed.message_id

-- name: resize_place
UPDATE {ctl} SET capacity = :capacity

-- name: head
-- The dequeue's head, read-only (qadmin explain): the pop's own WHERE / ORDER BY for one
-- message, taking no row lock.
WITH nxt AS MATERIALIZED (
    SELECT CASE WHEN s.is_called THEN s.last_value + 1 ELSE s.last_value END AS n,
           (SELECT c.capacity FROM {ctl} AS c) AS capacity
    FROM {pop_seq} AS s
)
SELECT r.message_id FROM {table} AS r
WHERE r.slot = (SELECT nxt.n % nxt.capacity FROM nxt)
  AND r.message_id = (SELECT nxt.n FROM nxt)
