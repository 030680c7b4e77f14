-- Sequence fragments for MariaDB 10.3+: real SEQUENCE objects. NEXT VALUE FOR is not rolled
-- back with the transaction. NOCACHE keeps next_not_cached_value exact (the ring reads it to
-- see whether it is full or empty before taking a number) and leaves no gap on a restart.
-- {obj} is the quoted sequence; next_value sets the procedure variable v_seq; skip_take /
-- skip_value take one value into @qadmin_n for qadmin repair.
--
-- A routine's own transaction for an autocommit caller (see sql/queues/mysql/fragments.sql,
-- whose txn_declare, txn_handler and txn_end MariaDB shares): MariaDB says directly whether a
-- transaction is open.

-- name: create_sequence
CREATE SEQUENCE {obj} START WITH 0 MINVALUE 0 INCREMENT BY 1 NOCACHE

-- name: drop_sequence
DROP SEQUENCE IF EXISTS {obj}

-- name: next_value
SET v_seq = NEXT VALUE FOR {obj}

-- name: next_take
SET v_seq = NEXT VALUE FOR {obj}

-- name: next_prune
-- nothing to prune: a SEQUENCE keeps no rows
DO 0

-- name: next_expr
(SELECT next_not_cached_value FROM {obj})

-- name: skip_sql
CONCAT('SELECT NEXTVAL(', {obj.lit}, ')')

-- name: skip_take
SET @qadmin_n = NEXT VALUE FOR {obj}

-- name: skip_value
@qadmin_n

-- name: catch_up_sql
-- The statement that makes @qadmin_n the next value (SETVAL takes only literals, and never
-- moves a sequence back).
CONCAT('SELECT SETVAL(', {obj.lit}, ', ', @qadmin_n, ', 0)')

-- name: txn_begin
IF @@autocommit = 1 AND @@in_transaction = 0 THEN
        SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
        START TRANSACTION;
        SET v_own = 1;
    END IF

-- name: gate_switched
SELECT switched INTO v_switched FROM {gate} WHERE one = 1 LOCK IN SHARE MODE;
    IF v_switched = 1 THEN
        SET @qadmin_fresh = v_own;
        CALL {obj}({arg});
        SET @qadmin_fresh = NULL;
    ELSEIF EXISTS (SELECT 1 FROM information_schema.TABLES
                   WHERE TABLE_SCHEMA = {table.schema_lit} AND TABLE_NAME = {backup.bare_lit}) THEN

-- Pops that return ONE result set (MySQL 8's return one per message, which the client parses
-- one by one: the cost of a batch pop there). The one locking read is MySQL's (SELECT ... FOR
-- UPDATE SKIP LOCKED of the head, in a derived table), its ids gathered into v_ids (a JSON
-- array); the rows are then deleted or claimed by primary key alone, so no other row is
-- locked or waited on. The pending and claim reads name a column their index lacks: read from
-- the index alone (covering), InnoDB locks the index entry and waits on one another consumer
-- delete-marked (its pop or claim), SKIP LOCKED or not; read through to the row, as the cursor
-- did, it skips it. JSON_ARRAYAGG is cut at group_concat_max_len (about 80,000 ids at
-- 1 MiB): ids_check refuses a cut list rather than act on part of it (nothing is taken).

-- name: ids_take
SELECT JSON_ARRAYAGG(id) INTO v_ids FROM (

-- name: ids_check
IF JSON_VALID(v_ids) = 0 THEN
        SIGNAL SQLSTATE '22001'
            SET MESSAGE_TEXT = 'pop: the batch''s ids exceed group_concat_max_len';
    END IF

-- name: ids_in
-- v_ids as SQL's list (JSON_ARRAYAGG writes no spaces): "[3,4]" -> "3,4"
SUBSTRING(v_ids, 2, CHAR_LENGTH(v_ids) - 2)

-- name: ids_begin
{txn_declare()};
    DECLARE v_ids LONGTEXT;
    {txn_handler()};
    {paused_none()}
    {txn_begin()};

-- name: pop_rows
-- One DELETE ... RETURNING of the ids taken (a prepared statement: a literal list of primary
-- keys, which MariaDB reads as key lookups; a subquery there would scan the table).
CREATE PROCEDURE {pop}(IN p_count INT)
BEGIN
    {ids_begin()}
    {ids_take()}
        SELECT id FROM {table} {order_by} LIMIT p_count FOR UPDATE {skip_locked}) AS h;
    {ids_check()};
    IF v_ids IS NOT NULL THEN
        EXECUTE IMMEDIATE CONCAT('DELETE FROM ', {table.lit}, ' WHERE id IN (', {ids_in()},
                                 ') {order_by} RETURNING id, enqueued_at, payload');
    END IF;
    {txn_end()};
END

-- name: pending_pop
CREATE PROCEDURE {pop}(IN p_count INT)
BEGIN
    {ids_begin()}
    {ids_take()}
        SELECT id, enqueued_at FROM {table} WHERE due_at <= UTC_TIMESTAMP(6)
        ORDER BY due_at, id LIMIT p_count FOR UPDATE SKIP LOCKED) AS h;
    {ids_check()};
    IF v_ids IS NOT NULL THEN
        EXECUTE IMMEDIATE CONCAT('DELETE FROM ', {table.lit}, ' WHERE id IN (', {ids_in()},
                                 ') ORDER BY due_at, id',
                                 ' RETURNING id, enqueued_at, due_at, payload');
    END IF;
    {txn_end()};
END

-- name: claim_pop
-- One UPDATE of the ids taken (joined from the JSON list, which leads: key lookups), then
-- one SELECT of them (MariaDB has no UPDATE ... RETURNING). Every such join forces the
-- primary key: on a table of a few rows the optimizer would rather scan it, and the UPDATE
-- (or DELETE) would then lock, and wait on, rows other consumers hold.
CREATE PROCEDURE {pop}(IN p_count INT, IN p_worker VARCHAR(255))
BEGIN
    {ids_begin()}
    {ids_take()}
        SELECT id, attempts FROM {table} WHERE processing_started_at IS NULL
        ORDER BY id LIMIT p_count FOR UPDATE SKIP LOCKED) AS h;
    {ids_check()};
    IF v_ids IS NOT NULL THEN
        UPDATE JSON_TABLE(v_ids, '$[*]' COLUMNS (id BIGINT PATH '$')) AS j
        STRAIGHT_JOIN {table} AS t FORCE INDEX (PRIMARY) ON t.id = j.id
        SET t.processing_started_at = UTC_TIMESTAMP(6), t.claimed_by = p_worker,
            t.claimed_session = CONNECTION_ID(), t.attempts = t.attempts + 1;
        SELECT t.id, t.enqueued_at, t.attempts, t.payload
        FROM JSON_TABLE(v_ids, '$[*]' COLUMNS (id BIGINT PATH '$')) AS j
        STRAIGHT_JOIN {table} AS t FORCE INDEX (PRIMARY) ON t.id = j.id
        ORDER BY t.id;
    END IF;
    {txn_end()};
END

-- The ring (sql/queues/mysql/ring.sql, whose invariants hold here too) takes a batch's numbers
-- in one step and moves its messages as sets. Under the push or pop lock nothing else takes a
-- number of that sequence but qadmin repair's skip (a pop number), so one SETVAL moves the
-- sequence past the numbers next .. next + n - 1 (SETVAL takes only literals, never moves a
-- sequence back, and is not undone by a rollback, as NEXT VALUE FOR is not).

-- name: push_take_run
-- push_many's numbers v_next .. v_next + v_want - 1.
IF v_free = 1 THEN
        EXECUTE IMMEDIATE CONCAT('DO SETVAL(', {push_seq.lit}, ', ', v_next + v_want - 1, ')');
    END IF;

-- name: nth_taken
v_next + v_i

-- name: push_many_result
-- The numbers taken, read back from where push_many wrote them (no list of them is kept).
SELECT m.id, v_at AS enqueued_at FROM (
        SELECT message_id AS id FROM {table}
        WHERE v_free = 1
          AND (slot BETWEEN MOD(v_next, v_cap) AND LEAST(MOD(v_next, v_cap) + v_want - 1, v_cap - 1)
               OR slot <= MOD(v_next, v_cap) + v_want - 1 - v_cap)
          AND message_id BETWEEN v_next AND v_next + v_want - 1
        UNION ALL
        SELECT message_id FROM {overflow}
        WHERE v_free = 1 AND v_filled = 0 AND message_id BETWEEN v_next AND v_next + v_want - 1
    ) AS m
    ORDER BY m.id

-- name: push_fill
-- The whole batch in one UPDATE when every slot it needs is free and this push could lock
-- it (SKIP LOCKED: a push never waits on a row lock); else ring.sql writes each message in
-- turn, a slot another transaction holds sending its message to the overflow table.
SELECT COUNT(*) INTO v_filled FROM (
            SELECT slot FROM {table}
            WHERE (slot BETWEEN MOD(v_next, v_cap)
                            AND LEAST(MOD(v_next, v_cap) + v_want - 1, v_cap - 1)
                   OR slot <= MOD(v_next, v_cap) + v_want - 1 - v_cap)
              AND reference_count = 0
            FOR UPDATE SKIP LOCKED) AS h;
        IF v_filled = v_want THEN
            -- Every slot exists (0 .. capacity - 1) and is held by this push, so each row
            -- meets its duplicate and is updated in place: an upsert of the slots costs about
            -- two thirds of the same UPDATE joined to the JSON list (MariaDB's multi-table path).
            INSERT INTO {table} (slot, message_id, enqueued_at, reference_count, payload)
            SELECT MOD(v_next + j.n - 1, v_cap), v_next + j.n - 1, v_at, 1, FROM_BASE64(j.p)
            FROM JSON_TABLE(p_batch, '$[*]' COLUMNS (n FOR ORDINALITY, p LONGTEXT PATH '$')) AS j
            ON DUPLICATE KEY UPDATE message_id = VALUE(message_id), enqueued_at = VALUE(enqueued_at),
                                    reference_count = 1, payload = VALUE(payload);
            SET v_filled = 1;
        ELSE
            SET v_filled = 0;
        END IF;

-- name: run_slots
-- The slots of the run next .. next + run - 1 holding its messages: one key range of the
-- slot table, two when the run wraps past the last slot (run <= capacity).
(slot BETWEEN v_lo AND LEAST(v_lo + v_run - 1, v_cap - 1) OR slot <= v_lo + v_run - 1 - v_cap)
              AND message_id BETWEEN v_next AND v_next + v_run - 1

-- name: ring_pop
-- ONE result set of every message taken, in number order; none when nothing is taken.
-- 1. Parked numbers first, locked in one statement before any slot (as MySQL's pop), then
--    narrowed by a plain read to those whose message is in a slot or the overflow table.
-- 2. Under the pop lock, the run: the numbers from "next" whose messages are present, up to
--    the count. Its messages in their slots are counted over one slot range; when they are
--    next .. next + k - 1 and nothing is in the overflow table, the run is those k, else it
--    ends at the first number whose message is in neither place (a push not committed yet),
--    and is served from both. Its numbers are taken with one SETVAL.
-- 3. The run's slots (by range) and overflow rows, and the parked numbers' (by key), are
--    locked, returned in one SELECT, and emptied: a plain read showed each message there
--    first, so a pop waits only on a pusher's passing lock. A message that left in between
--    (qadmin repair's skip parked a number this pop took too) is not returned.
CREATE PROCEDURE {pop}(IN p_count INT)
BEGIN
    {txn_declare()};
    DECLARE v_next BIGINT;
    DECLARE v_last BIGINT;
    DECLARE v_want INT DEFAULT 0;
    DECLARE v_run INT DEFAULT 0;
    DECLARE v_got INT DEFAULT 0;
    DECLARE v_lo INT DEFAULT 0;
    DECLARE v_cap INT;
    DECLARE v_spilled INT DEFAULT 0;
    DECLARE v_parked LONGTEXT;  -- JSON list of the parked numbers served
    DECLARE v_name VARCHAR(64);
    DECLARE v_lock VARCHAR(64) DEFAULT NULL;
    {lock_handler()};
    {paused_none()}
    {txn_begin()};
    {committed_only(w=pop)}
    SELECT capacity INTO v_cap FROM {ctl} WHERE one = 1 LOCK IN SHARE MODE;  -- the gate
    SET v_next = 0;
    SELECT JSON_ARRAYAGG(h.message_id) INTO v_parked FROM (
        SELECT message_id FROM {pending} ORDER BY message_id LIMIT p_count
        FOR UPDATE SKIP LOCKED) AS h;
    IF v_parked IS NOT NULL THEN
        IF JSON_VALID(v_parked) = 0 THEN
            SIGNAL SQLSTATE '22001'
                SET MESSAGE_TEXT = 'ring pop: the parked numbers exceed group_concat_max_len';
        END IF;
        SELECT JSON_ARRAYAGG(j.id) INTO v_parked
        FROM JSON_TABLE(v_parked, '$[*]' COLUMNS (id BIGINT PATH '$')) AS j
        WHERE EXISTS (SELECT 1 FROM {table} AS r
                       WHERE r.slot = MOD(j.id, v_cap) AND r.message_id = j.id)
           OR EXISTS (SELECT 1 FROM {overflow} AS o WHERE o.message_id = j.id);
    END IF;
    SET v_want = LEAST(p_count - COALESCE(JSON_LENGTH(v_parked), 0), v_cap);
    IF v_want > 0 THEN
        {ring_lock(pop_seq, w=pop)}
        -- Plain SELECT ... INTO: a subquery in SET or IF would take shared row locks.
        SELECT {next_expr(pop_seq)}, EXISTS (SELECT 1 FROM {overflow}) INTO v_next, v_spilled;
        SET v_lo = MOD(v_next, v_cap);
        SELECT COUNT(*), COALESCE(MAX(message_id), v_next - 1) INTO v_run, v_last
        FROM {table}
        WHERE (slot BETWEEN v_lo AND LEAST(v_lo + v_want - 1, v_cap - 1)
               OR slot <= v_lo + v_want - 1 - v_cap)
          AND message_id BETWEEN v_next AND v_next + v_want - 1;
        IF v_last <> v_next + v_run - 1 OR (v_spilled = 1 AND v_run < v_want) THEN
            WITH RECURSIVE g (k) AS (
                SELECT v_next UNION ALL SELECT k + 1 FROM g WHERE k + 1 < v_next + v_want)
            SELECT COALESCE(MIN(g.k) - v_next, v_want) INTO v_run FROM g
            WHERE NOT EXISTS (SELECT 1 FROM {table} AS r
                               WHERE r.slot = MOD(g.k, v_cap) AND r.message_id = g.k)
              AND NOT EXISTS (SELECT 1 FROM {overflow} AS o WHERE o.message_id = g.k);
            -- This run may hold a message the overflow table took since the look above (a
            -- push whose slot another transaction held, committed in between): serve the
            -- run from both places.
            SET v_spilled = 1;
        END IF;
        IF v_run > 0 THEN
            EXECUTE IMMEDIATE CONCAT('DO SETVAL(', {pop_seq.lit}, ', ', v_next + v_run - 1, ')');
        END IF;
        DO RELEASE_LOCK(v_lock);
        SET v_lock = NULL;
    END IF;
    IF v_run > 0 AND v_parked IS NULL AND v_spilled = 0 THEN
        -- The usual pop: the run in its slots. Rows are locked as they are read, before the
        -- sort, so no row is sent before every lock is held.
        SELECT message_id AS id, enqueued_at, payload FROM {table} WHERE {run_slots()}
        ORDER BY message_id FOR UPDATE;
        UPDATE {table}
        SET reference_count = 0, message_id = NULL, payload = NULL, enqueued_at = NULL
        WHERE {run_slots()};
    ELSEIF v_run > 0 OR v_parked IS NOT NULL THEN
        SELECT COUNT(*) INTO v_got FROM (
            SELECT slot FROM {table} WHERE {run_slots()} FOR UPDATE) AS h;
        IF v_spilled = 1 THEN
            SELECT COUNT(*) INTO v_got FROM (
                SELECT message_id FROM {overflow}
                WHERE message_id BETWEEN v_next AND v_next + v_run - 1 FOR UPDATE) AS h;
        END IF;
        IF v_parked IS NOT NULL THEN
            SELECT COUNT(*) INTO v_got FROM (
                SELECT r.slot
                FROM JSON_TABLE(v_parked, '$[*]' COLUMNS (id BIGINT PATH '$')) AS j
                STRAIGHT_JOIN {table} AS r FORCE INDEX (PRIMARY)
                    ON r.slot = MOD(j.id, v_cap) AND r.message_id = j.id
                FOR UPDATE) AS h;
            SELECT COUNT(*) INTO v_got FROM (
                SELECT o.message_id
                FROM JSON_TABLE(v_parked, '$[*]' COLUMNS (id BIGINT PATH '$')) AS j
                STRAIGHT_JOIN {overflow} AS o FORCE INDEX (PRIMARY) ON o.message_id = j.id
                FOR UPDATE) AS h;
        END IF;
        SELECT m.id, m.enqueued_at, m.payload FROM (
            SELECT message_id AS id, enqueued_at, payload FROM {table} WHERE {run_slots()}
            UNION ALL
            SELECT message_id, enqueued_at, payload FROM {overflow}
            WHERE v_spilled = 1 AND message_id BETWEEN v_next AND v_next + v_run - 1
            UNION ALL
            SELECT r.message_id, r.enqueued_at, r.payload
            FROM JSON_TABLE(COALESCE(v_parked, '[]'), '$[*]' COLUMNS (id BIGINT PATH '$')) AS j
            STRAIGHT_JOIN {table} AS r FORCE INDEX (PRIMARY)
                ON r.slot = MOD(j.id, v_cap) AND r.message_id = j.id
            UNION ALL
            SELECT o.message_id, o.enqueued_at, o.payload
            FROM JSON_TABLE(COALESCE(v_parked, '[]'), '$[*]' COLUMNS (id BIGINT PATH '$')) AS j
            STRAIGHT_JOIN {overflow} AS o FORCE INDEX (PRIMARY) ON o.message_id = j.id
        ) AS m
        ORDER BY m.id;
        UPDATE {table}
        SET reference_count = 0, message_id = NULL, payload = NULL, enqueued_at = NULL
        WHERE {run_slots()};
        IF v_spilled = 1 THEN
            DELETE FROM {overflow} WHERE message_id BETWEEN v_next AND v_next + v_run - 1;
        END IF;
        IF v_parked IS NOT NULL THEN
            UPDATE JSON_TABLE(v_parked, '$[*]' COLUMNS (id BIGINT PATH '$')) AS j
            STRAIGHT_JOIN {table} AS r FORCE INDEX (PRIMARY)
                ON r.slot = MOD(j.id, v_cap) AND r.message_id = j.id
            SET r.reference_count = 0, r.message_id = NULL, r.payload = NULL,
                r.enqueued_at = NULL;
            DELETE o FROM JSON_TABLE(v_parked, '$[*]' COLUMNS (id BIGINT PATH '$')) AS j
            STRAIGHT_JOIN {overflow} AS o FORCE INDEX (PRIMARY) ON o.message_id = j.id;
            DELETE p FROM JSON_TABLE(v_parked, '$[*]' COLUMNS (id BIGINT PATH '$')) AS j
            STRAIGHT_JOIN {pending} AS p FORCE INDEX (PRIMARY) ON p.message_id = j.id;
        END IF;
    END IF;
    {txn_end()};
END
