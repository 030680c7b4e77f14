-- Converting a naive queue into a ring on MariaDB (qadmin convert), rendered for the ring that
-- replaces it. {src} is the table being converted (it has the queue's name, which the ring's
-- slot table takes over), {backup} what it is renamed to (<queue>_before_ring), {staged_table}
-- the ring's slot table until the switch, {staged_push} / {staged_pop} the ring's routines
-- until the switch, {gate} the switch's gate row; {id_col.bare}, {time_expr} and
-- {payload_expr} are the source's columns as the ring stores them.
--
-- MariaDB commits DDL on its own, so the switch cannot be one transaction as on PostgreSQL.
-- It is a sequence of steps, each safe to repeat, whose state is what exists in the schema:
-- 0. mark: check that no other object has a name the ring needs, then create {gate} (its
--    existence marks a convert under way, so the objects below are known to be its own).
-- 1. prepare: create the ring beside the queue (slot table under {staged_table}, routines under
--    {staged_push} / {staged_pop}; overflow, parked list, control row and sequences under their
--    final names, unused until the switch).
-- 2. gate: for a qadmin queue, replace the queue's push/push_many/pop (CREATE OR REPLACE,
--    atomic) with versions that first read the gate row with a share lock held to the end of
--    the caller's transaction, then call the ring's routine if the switch has happened, else do
--    the naive INSERT / DELETE on the queue's table (or on {backup} after an interrupted switch).
-- 3. switch: one connection locks the gate row exclusively (calls in flight finish, new calls
--    wait) while another runs one atomic RENAME TABLE {src} TO {backup}, {staged_table} TO
--    {src} (it waits, under lock_wait_timeout, for transactions still holding the table); then
--    the first, in one transaction, starts both sequences above every id the queue ever gave,
--    parks the backlog (messages into the overflow table, their numbers into the parked list,
--    so pops serve them first, in id order), sets the gate's switched flag, records the ring in
--    the catalog, and commits. Killed before that commit, nothing but the rename has happened:
--    the gated routines serve {backup} meanwhile, and running convert again redoes the switch.
-- 4. finish: replace push/pop with the ring's own, then drop the gate, the staged routines and
--    (a qadmin queue) {backup}; a hand-built table's {backup} is kept for the DBA to drop.

-- name: collisions
-- Before anything is made: names the ring needs that something else already has. Once the gate
-- exists, objects of these names are the convert's own (an interrupted prepare's).
SELECT TABLE_NAME AS name FROM information_schema.TABLES
WHERE TABLE_SCHEMA = {table.schema_lit}
  AND TABLE_NAME IN ({overflow.bare_lit}, {pending.bare_lit}, {ctl.bare_lit},
                     {push_seq.bare_lit}, {pop_seq.bare_lit}, {staged_table.bare_lit},
                     {backup.bare_lit}, {gate.bare_lit})
UNION ALL
SELECT ROUTINE_NAME FROM information_schema.ROUTINES
WHERE ROUTINE_SCHEMA = {table.schema_lit}
  AND ROUTINE_NAME IN ({staged_push.bare_lit}, {staged_push_many.bare_lit},
                       {staged_pop.bare_lit})

-- name: gate_table
-- Made first, for a hand-built table too: its existence marks a convert under way.
CREATE TABLE IF NOT EXISTS {gate} (
    one      TINYINT NOT NULL PRIMARY KEY,
    switched TINYINT NOT NULL
) ENGINE=InnoDB

-- name: gate_table
INSERT IGNORE INTO {gate} (one, switched) VALUES (1, 0)

-- name: gate
-- An autocommit caller gets a transaction of its own (fragments.sql, txn_begin): the share lock
-- on the gate row must last until its message is written, or the switch could rename the table
-- between the two.
CREATE OR REPLACE PROCEDURE {push}(IN p_payload LONGBLOB)
BEGIN
    DECLARE v_at DATETIME(6) DEFAULT UTC_TIMESTAMP(6);
    DECLARE v_switched TINYINT;
    {txn_declare()};
    {txn_handler()};
    {txn_begin()};
    -- Its own transaction is READ COMMITTED whatever the session's level says; tell the
    -- ring's routine, which refuses REPEATABLE READ.
    {gate_switched(staged_push, arg=p_payload)}
        INSERT INTO {backup} (enqueued_at, payload) VALUES (v_at, p_payload);
        SELECT LAST_INSERT_ID() AS id, v_at AS enqueued_at;
    ELSE
        INSERT INTO {src} (enqueued_at, payload) VALUES (v_at, p_payload);
        SELECT LAST_INSERT_ID() AS id, v_at AS enqueued_at;
    END IF;
    {txn_end()};
END

-- name: gate
-- push_many as push above: a queue made before push_many gets one here (the ring's replaces
-- it at the finish). Until the switch, each message goes in on its own and their ids come
-- back as ONE result set, as the queue's own push_many returns them (@qadmin_pushed).
CREATE OR REPLACE PROCEDURE {push_many}(IN p_batch LONGTEXT)
BEGIN
    DECLARE v_at DATETIME(6) DEFAULT UTC_TIMESTAMP(6);
    DECLARE v_switched TINYINT;
    {txn_declare()};
    {txn_handler()};
    {batch_guard()};
    {txn_begin()};
    SET @qadmin_pushed = '';
    {gate_switched(staged_push_many, arg=p_batch)}
        FOR j IN (SELECT FROM_BASE64(t.p) AS p
                  FROM JSON_TABLE(p_batch, '$[*]' COLUMNS (n FOR ORDINALITY,
                                                         p LONGTEXT PATH '$')) AS t
                  ORDER BY t.n)
        DO
            INSERT INTO {backup} (enqueued_at, payload) VALUES (v_at, j.p);
            {pushed_add()};
        END FOR;
    ELSE
        FOR j IN (SELECT FROM_BASE64(t.p) AS p
                  FROM JSON_TABLE(p_batch, '$[*]' COLUMNS (n FOR ORDINALITY,
                                                         p LONGTEXT PATH '$')) AS t
                  ORDER BY t.n)
        DO
            INSERT INTO {src} (enqueued_at, payload) VALUES (v_at, j.p);
            {pushed_add()};
        END FOR;
    END IF;
    IF @qadmin_pushed <> '' THEN  -- (after the switch, the ring's push_many answered)
        SELECT t.id, v_at AS enqueued_at
        FROM JSON_TABLE({pushed_ids()}, '$[*]' COLUMNS (n FOR ORDINALITY, id BIGINT PATH '$'))
            AS t
        ORDER BY t.n;
    END IF;
    SET @qadmin_pushed = NULL;
    {txn_end()};
END

-- name: gate
-- Until the switch, pop deletes from the head without SKIP LOCKED (one statement, RETURNING):
-- consumers wait for each other for the few seconds the gate is in place instead of skipping.
CREATE OR REPLACE PROCEDURE {pop}(IN p_count INT)
BEGIN
    DECLARE v_switched TINYINT;
    {txn_declare()};
    {txn_handler()};
    {paused_none()}
    {txn_begin()};
    -- Its own transaction is READ COMMITTED whatever the session's level says; tell the
    -- ring's routine, which refuses REPEATABLE READ.
    {gate_switched(staged_pop, arg=p_count)}
        DELETE FROM {backup} {src_order_by} LIMIT p_count RETURNING id, enqueued_at, payload;
    ELSE
        DELETE FROM {src} {src_order_by} LIMIT p_count RETURNING id, enqueued_at, payload;
    END IF;
    {txn_end()};
END

-- name: gate_state
SELECT (SELECT switched FROM {gate} WHERE one = 1) AS switched

-- name: gate_lock
SELECT switched FROM {gate} WHERE one = 1 FOR UPDATE

-- name: gate_switched
UPDATE {gate} SET switched = 1 WHERE one = 1

-- name: drop_staged
DROP PROCEDURE IF EXISTS {staged_push}

-- name: drop_staged
DROP PROCEDURE IF EXISTS {staged_push_many}

-- name: drop_staged
DROP PROCEDURE IF EXISTS {staged_pop}

-- name: gate_drop
DROP TABLE IF EXISTS {gate}

-- name: rename
RENAME TABLE {src} TO {backup}, {staged_table} TO {src}

-- name: unrename
RENAME TABLE {src} TO {staged_table}, {backup} TO {src}

-- name: measure
-- Only waiting rows (the --state-column filter, else every row) are messages; the
-- rest stay in {backup}, kept (rows_left).
SELECT count(CASE WHEN {waiting} THEN 1 END) AS messages,
       count(*) - count(CASE WHEN {waiting} THEN 1 END) AS rows_left,
       min(CASE WHEN {waiting} THEN {id_col.bare} END) AS min_id, max({id_col.bare}) AS max_id
FROM {src}

-- name: measure_backup
-- The sequences start above the highest id the table ever handed out (its AUTO_INCREMENT
-- counter), not only above the backlog: ids are never reused.
SELECT count(CASE WHEN {waiting} THEN 1 END) AS messages,
       count(*) - count(CASE WHEN {waiting} THEN 1 END) AS rows_left,
       min(CASE WHEN {waiting} THEN {id_col.bare} END) AS min_id,
       GREATEST(COALESCE(max({id_col.bare}), 0) + 1,
                COALESCE((SELECT AUTO_INCREMENT FROM information_schema.TABLES
                          WHERE TABLE_SCHEMA = {table.schema_lit}
                            AND TABLE_NAME = {backup.bare_lit}), 1))
           AS next_id
FROM {backup}

-- name: start_sequences
-- SETVAL never lowers a sequence (it returns NULL instead): a re-run keeps the first start.
SELECT SETVAL({push_seq}, :next, 0) AS push_set, SETVAL({pop_seq}, :next, 0) AS pop_set

-- name: sequences
SELECT {next_expr(push_seq)} AS push_next, {next_expr(pop_seq)} AS pop_next

-- name: copy
INSERT INTO {overflow} (message_id, enqueued_at, payload)
SELECT {id_col.bare}, {time_expr}, {payload_expr} FROM {backup}
WHERE {id_col.bare} > :after AND {waiting} ORDER BY {id_col.bare} LIMIT :chunk

-- name: copy
INSERT INTO {pending} (message_id, taken_at)
SELECT message_id, UTC_TIMESTAMP(6) FROM {overflow}
WHERE message_id > :after ORDER BY message_id LIMIT :chunk

-- name: copy
SELECT count(*) AS copied, max(message_id) AS last_id FROM (
    SELECT message_id FROM {overflow} WHERE message_id > :after ORDER BY message_id LIMIT :chunk
) AS c

-- name: columns
-- Before anything changes, convert refuses what it would break (ops/convert_guard.py);
-- :schema and :table are the table being converted, bound.
-- Its columns, and which are flags (BOOLEAN is TINYINT(1); BIT(1)): a flag beside a queue's
-- payload usually says whether a row is still waiting (kombu's kombu_message.visible).
SELECT COLUMN_NAME AS column_name,
       (COLUMN_TYPE LIKE 'tinyint(1)%' OR COLUMN_TYPE = 'bit(1)') AS flag
FROM information_schema.COLUMNS
WHERE TABLE_SCHEMA = :schema AND TABLE_NAME = :table

-- name: blockers
-- Foreign keys from or to it and its triggers (the catalog); views anywhere whose definition
-- reads it (MariaDB stores view definitions with `schema`.`table` names), routines whose
-- text names it as a word (in its schema) or as schema.table (anywhere), and other tables'
-- triggers in its schema that name it, and scheduled events that name it: MariaDB records no
-- dependencies, so this is a text search (a routine the user cannot see is not found).
-- qadmin leaves out its own routines by name.
SELECT 'foreign key' AS what, CONSTRAINT_NAME AS name, CONSTRAINT_SCHEMA AS in_schema,
       CONCAT(TABLE_NAME, ' -> ', REFERENCED_TABLE_NAME) AS detail
FROM information_schema.REFERENTIAL_CONSTRAINTS
WHERE (CONSTRAINT_SCHEMA = :schema AND TABLE_NAME = :table)
   OR (UNIQUE_CONSTRAINT_SCHEMA = :schema AND REFERENCED_TABLE_NAME = :table)
UNION ALL
SELECT 'trigger', TRIGGER_NAME, TRIGGER_SCHEMA, NULL FROM information_schema.TRIGGERS
WHERE (EVENT_OBJECT_SCHEMA = :schema AND EVENT_OBJECT_TABLE = :table)
   OR (TRIGGER_SCHEMA = :schema
       AND ACTION_STATEMENT REGEXP CONCAT('(^|[^a-zA-Z0-9_$])', :table, '([^a-zA-Z0-9_$]|$)'))
UNION ALL
SELECT 'view', TABLE_NAME, TABLE_SCHEMA, NULL FROM information_schema.VIEWS
WHERE VIEW_DEFINITION LIKE CONCAT('%`', REPLACE(:schema, '_', '\_'), '`.`',
                                  REPLACE(:table, '_', '\_'), '`%')
UNION ALL
SELECT 'routine', ROUTINE_NAME, ROUTINE_SCHEMA, NULL FROM information_schema.ROUTINES
WHERE (ROUTINE_SCHEMA = :schema
       AND ROUTINE_DEFINITION REGEXP CONCAT('(^|[^a-zA-Z0-9_$])', :table, '([^a-zA-Z0-9_$]|$)'))
   OR ROUTINE_DEFINITION REGEXP CONCAT('(^|[^a-zA-Z0-9_$])', :schema, '`?[.]`?', :table,
                                       '([^a-zA-Z0-9_$]|$)')
UNION ALL
SELECT 'event', EVENT_NAME, EVENT_SCHEMA, NULL FROM information_schema.EVENTS
WHERE (EVENT_SCHEMA = :schema
       AND EVENT_DEFINITION REGEXP CONCAT('(^|[^a-zA-Z0-9_$])', :table, '([^a-zA-Z0-9_$]|$)'))
   OR EVENT_DEFINITION REGEXP CONCAT('(^|[^a-zA-Z0-9_$])', :schema, '`?[.]`?', :table,
                                     '([^a-zA-Z0-9_$]|$)')

-- name: payload_bytes
{col.bare}

-- name: payload_text
CAST(CONVERT({col.bare} USING utf8mb4) AS BINARY)

-- name: payload_json
CAST(JSON_OBJECT({pairs}) AS BINARY)

-- name: time_col
COALESCE(CAST({col.bare} AS DATETIME(6)), UTC_TIMESTAMP(6))

-- name: time_now
UTC_TIMESTAMP(6)

