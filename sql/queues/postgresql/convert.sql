-- Converting a naive queue into a ring on PostgreSQL (qadmin convert), rendered for the ring
-- that replaces it. {src} is the table being converted (it has the queue's name, which the
-- ring's slot table takes over), {backup.bare} what a hand-built table is renamed to,
-- {id_col.bare}, {time_expr} and {payload_expr} its columns as the ring stores them.
--
-- The switch is one transaction (PostgreSQL DDL is transactional): lock the table, rename it
-- aside, retire the queue's routines, create the ring, move the backlog in (one INSERT ...
-- SELECT into the slots or the overflow table, one into the parked list), commit. Killed anywhere,
-- it rolls back whole and can simply be run again. The backlog keeps its ids: its messages go
-- to the ring's overflow table and their numbers are parked, so pops serve them first, in id
-- order, before the ring's sequences (which start above the highest id ever handed out).

-- name: gate
-- A qadmin queue's push, push_many and pop are first replaced (in their own transaction) by
-- versions that wait for the table in a statement of their own and, once the convert has
-- committed, call the ring's routine of the same name instead: callers blocked by the switch
-- never see an error. A queue made before push_many gets one here; the ring's replaces it.
CREATE OR REPLACE FUNCTION {push}(p_payload bytea)
RETURNS TABLE (id bigint, enqueued_at timestamptz)
LANGUAGE plpgsql AS $$
{gate_wait()}
        RETURN QUERY SELECT * FROM {push}(p_payload);  -- converted: the ring's push
        RETURN;
    END IF;
    RETURN QUERY INSERT INTO {src} AS q (payload) VALUES (p_payload)
                 RETURNING q.id, q.enqueued_at;
END
$$

-- name: gate
CREATE OR REPLACE FUNCTION {push_many}(p_payloads bytea[])
RETURNS TABLE (id bigint, enqueued_at timestamptz)
LANGUAGE plpgsql AS $$
{gate_wait()}
        RETURN QUERY SELECT * FROM {push_many}(p_payloads);  -- converted: the ring's
        RETURN;
    END IF;
    RETURN QUERY INSERT INTO {src} AS q (payload)
                 SELECT u.p FROM unnest(p_payloads) WITH ORDINALITY AS u(p, n) ORDER BY u.n
                 RETURNING q.id, q.enqueued_at;
END
$$

-- name: gate
CREATE OR REPLACE FUNCTION {pop}(p_count integer DEFAULT 1)
RETURNS TABLE (id bigint, enqueued_at timestamptz, payload bytea)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
    {paused_return()}
    LOCK TABLE {src} IN ROW EXCLUSIVE MODE;
    IF to_regclass({ctl.lit}) IS NOT NULL THEN
        RETURN QUERY SELECT * FROM {pop}(p_count);  -- converted: the ring's pop
        RETURN;
    END IF;
    RETURN QUERY
    WITH d AS (
        DELETE FROM {src} AS q
        WHERE q.id = ANY (ARRAY(SELECT s.id FROM {src} AS s {src_order_by}
                                LIMIT greatest(p_count, 0) FOR UPDATE SKIP LOCKED))
        RETURNING q.id, q.enqueued_at, q.payload)
    SELECT d.id, d.enqueued_at, d.payload FROM d {src_order_by};
END
$$

-- name: lock
LOCK TABLE {src} IN ACCESS EXCLUSIVE MODE

-- name: measure
-- The ring's sequences start above the highest id the table ever handed out (its identity or
-- serial sequence, when it has one), not only above the backlog: ids are never reused. Only
-- waiting rows (the --state-column filter, else every row) are messages; the rest
-- stay in the kept table and are counted as rows_left.
SELECT count(CASE WHEN {waiting} THEN 1 END) AS messages,
       count(*) - count(CASE WHEN {waiting} THEN 1 END) AS rows_left,
       min(CASE WHEN {waiting} THEN {id_col.bare} END) AS min_id, max({id_col.bare}) AS max_id,
       greatest(coalesce(max({id_col.bare}), 0) + 1,
                coalesce(pg_sequence_last_value(
                             pg_get_serial_sequence({src.lit}, {id_col.bare_lit})::regclass) + 1,
                         1)) AS next_id
FROM {src}

-- name: set_aside
-- The table is renamed, not copied: the backlog is read from it once, straight into the ring
-- (a qadmin queue's is dropped at the end; a hand-built one is kept under this name).
ALTER TABLE {src} RENAME TO {backup.bare}

-- name: start_sequences
SELECT setval({push_seq.lit}, :next, false) AS push_next, setval({pop_seq.lit}, :next, false)
    AS pop_next

-- name: unindex
-- The ring's tables are new in this transaction (no one else can see them): their primary
-- keys are dropped for the bulk load and built once after it (reindex), which costs less than
-- keeping them up to date row by row (measured: 200,000 messages into the slots 3.1 s
-- instead of 5.4 s, into the parked list 2.2 s instead of 2.9 s).
ALTER TABLE {table} DROP CONSTRAINT {slot_idx.bare}

-- name: unindex
DO $$
DECLARE
    t regclass;
BEGIN
    FOREACH t IN ARRAY ARRAY[{overflow.lit}::regclass, {pending.lit}::regclass] LOOP
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', t,
                       (SELECT conname FROM pg_catalog.pg_constraint
                        WHERE conrelid = t AND contype = 'p'));
    END LOOP;
END
$$

-- name: place_slots
-- Each message is written once. When the backlog's ids fill [min_id, next_id) with no gap
-- (convert.py checks: messages = next_id - min_id <= capacity), message k goes straight into
-- slot k % capacity, all in distinct slots, none of which a push the count allows can need
-- before its message is popped. Otherwise (place_overflow) every message goes to the
-- overflow table, leaving every slot free, as pushes expect.
INSERT INTO {table} (slot, message_id, enqueued_at, reference_count, payload)
SELECT {id_col.bare}::bigint % :capacity, {id_col.bare}::bigint, {time_expr}, 1,
       {payload_expr}
FROM {backup} WHERE {waiting}

-- name: place_free
-- The slots the backlog did not take: those after its last, round to its first.
INSERT INTO {table} (slot)
SELECT (:first + g) % :capacity FROM generate_series(:messages, :capacity - 1) AS g

-- name: place_overflow
INSERT INTO {overflow} (message_id, enqueued_at, payload)
SELECT {id_col.bare}::bigint, {time_expr}, {payload_expr} FROM {backup} WHERE {waiting}

-- name: park
-- Every backlog number is parked, so pops serve them first, in id order (slot or overflow).
INSERT INTO {pending} (message_id, taken_at)
SELECT {id_col.bare}::bigint, clock_timestamp() FROM {backup} WHERE {waiting}

-- name: reindex
ALTER TABLE {table} ADD CONSTRAINT {slot_idx.bare} PRIMARY KEY (slot)

-- name: reindex
ALTER TABLE {overflow} ADD PRIMARY KEY (message_id)

-- name: reindex
ALTER TABLE {pending} ADD PRIMARY KEY (message_id)

-- name: drop_set_aside
-- A qadmin queue's old table, now empty of use (a hand-built one is kept for the DBA).
DROP TABLE {backup}

-- name: columns
-- Before anything changes, convert refuses what it would break (ops/convert_guard.py);
-- :schema and :table are the table being converted, bound.
-- Its columns, and which are flags (boolean): a flag beside a queue's payload usually says
-- whether a row is still waiting (kombu's kombu_message.visible).
SELECT column_name, data_type = 'boolean' AS flag FROM information_schema.columns
WHERE table_schema = :schema AND table_name = :table

-- name: blockers
-- What depends on the table or what it depends on: foreign keys to or from it, its triggers,
-- views and rules that read it and SQL-standard function bodies that use it (pg_depend), and
-- functions whose source names it as a word (in its schema) or as schema.table (anywhere):
-- PL/pgSQL bodies record no dependency, so their text is searched; a parent it is a partition
-- or child of, its own partitions or children, and row-level security. qadmin leaves out its
-- own routines by name.
WITH t AS (
    SELECT c.oid FROM pg_catalog.pg_class AS c
    JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
    WHERE n.nspname = :schema AND c.relname = :table
)
SELECT 'foreign key' AS what, con.conname::text AS name, NULL::text AS in_schema,
       con.conrelid::regclass::text || ' -> ' || con.confrelid::regclass::text AS detail
FROM pg_catalog.pg_constraint AS con, t
WHERE con.contype = 'f' AND (con.conrelid = t.oid OR con.confrelid = t.oid)
UNION ALL
SELECT 'trigger', tg.tgname::text, NULL, NULL
FROM pg_catalog.pg_trigger AS tg, t
WHERE tg.tgrelid = t.oid AND NOT tg.tgisinternal
UNION ALL
SELECT DISTINCT CASE WHEN v.relkind IN ('v', 'm') THEN 'view' ELSE 'rule' END,
       v.oid::regclass::text, NULL, NULL
FROM pg_catalog.pg_depend AS d
JOIN pg_catalog.pg_rewrite AS r ON r.oid = d.objid
JOIN pg_catalog.pg_class AS v ON v.oid = r.ev_class, t
WHERE d.classid = 'pg_catalog.pg_rewrite'::regclass
  AND d.refclassid = 'pg_catalog.pg_class'::regclass AND d.refobjid = t.oid AND v.oid <> t.oid
UNION ALL
SELECT DISTINCT 'routine', p.proname::text, n.nspname::text, NULL
FROM pg_catalog.pg_proc AS p
JOIN pg_catalog.pg_namespace AS n ON n.oid = p.pronamespace
LEFT JOIN pg_catalog.pg_depend AS d
       ON d.classid = 'pg_catalog.pg_proc'::regclass AND d.objid = p.oid
      AND d.refclassid = 'pg_catalog.pg_class'::regclass
WHERE d.refobjid IN (SELECT oid FROM t)
   OR (n.nspname = :schema AND p.prosrc ~* ('\m' || :table || '\M'))
   OR p.prosrc ~* ('\m' || :schema || '"?\s*\.\s*"?' || :table || '\M')
UNION ALL
SELECT 'parent table', i.inhparent::regclass::text, NULL,
       'the table is its partition or child: its rows would stay visible through it'
FROM pg_catalog.pg_inherits AS i, t
WHERE i.inhrelid = t.oid
UNION ALL
SELECT 'child table', i.inhrelid::regclass::text, NULL,
       'a partition or child of the table: its rows would be read into the ring and stay'
FROM pg_catalog.pg_inherits AS i, t
WHERE i.inhparent = t.oid
UNION ALL
SELECT 'row-level security', c.oid::regclass::text, NULL, 'the ring would have no policies'
FROM pg_catalog.pg_class AS c, t
WHERE c.oid = t.oid AND c.relrowsecurity

-- name: payload_bytes
{col.bare}

-- name: payload_text
convert_to({col.bare}::text, 'UTF8')

-- name: payload_json
convert_to(json_build_object({pairs})::text, 'UTF8')

-- name: time_col
coalesce({col.bare}::timestamptz, clock_timestamp())

-- name: time_now
clock_timestamp()

