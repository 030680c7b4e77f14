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
