-- Sequence fragments for MySQL 8, which has no SEQUENCE objects: an AUTO_INCREMENT ticket
-- table instead. A ticket's value is never handed out twice, rolled back or not (InnoDB's
-- counter is persisted since 8.0). Old tickets are pruned every 1000 values so the table stays
-- small. next_expr reads the table's AUTO_INCREMENT counter, not max(id): a ticket taken by a
-- transaction that rolled back leaves no row but has still used its number (qadmin's sessions
-- set information_schema_stats_expiry = 0, so MySQL 8 does not serve a cached counter).
-- {obj} is the quoted sequence object, {obj.lit}, {obj.schema_lit} and {obj.bare_lit} string
-- literals of it; next_value sets the procedure variable v_seq; skip_take / skip_value take
-- one value into @qadmin_n for qadmin repair.
-- MariaDB replaces some sections in sql/queues/mariadb/fragments.sql and shares the rest.
--
-- A routine that writes in more than one statement runs in one transaction whatever its caller
-- does. In autocommit, MySQL commits every statement of a procedure on its own, which lets go
-- of a SELECT ... FOR UPDATE lock before the DELETE or UPDATE that depends on it (two consumers
-- then deliver one message). So: a caller in a transaction (BEGIN, or autocommit off) keeps it
-- and commits it; an autocommit caller with no transaction open gets one of the routine's own,
-- at READ COMMITTED, committed before the routine returns and rolled back on any error.
-- txn_declare and txn_handler go in the routine's DECLARE list (variables first, handlers
-- after the cursors), txn_begin first and txn_end last in its body.
--
-- paused: true while the queue is paused (qadmin pause): its catalog entry's options carry
-- paused_at. One primary-key read of the catalog, a consistent (non-locking) read: a pause
-- being written never blocks it, nor it the pause. Each pop procedure reads it before it starts
-- its own transaction and, while it is true, pops with a count of 0 (nothing taken, no result
-- set). A caller inside a REPEATABLE READ transaction sees the catalog as of its snapshot.
--
-- live_sessions / claim_gone: requeue's guard on a claim queue's row. live_sessions reads the
-- connected sessions once into @qadmin_live (a JSON array of PROCESSLIST ids: every statement
-- of the requeue then judges by the same sessions, so no row is deleted that was not copied
-- to the dead table); claim_gone is true when the claiming session (claimed_session, the
-- consumer's CONNECTION_ID()) is not among them, or the caller passed include_live = 1. A
-- user without PROCESS sees only its own sessions: another user's consumer reads as gone.
-- taken_rows: the rows (q) whose ids a requeue locked (SKIP LOCKED) into @qadmin_ids: the id
-- list drives, each row found by its primary key (forced: on a small table the optimizer
-- scanned it and waited on the very row SKIP LOCKED had passed).
-- extends: queues/common/fragments.sql (the fragments shared with other engines)
--
-- The rest are pieces of the kinds' routines written once here, called {name()} from the
-- templates: push_row, push_many_rows, push_batch_calls, pop_rows (basic, capped), pop_vars and
-- cursor_begin (every cursor pop), delete_each / claim_each (the take loop), batch_declare and
-- batch_next (push_many's batch cursor), wm_tick_end (a watermark pop's tail), capped_vars and
-- slot_look (capped's push), lock_handler, committed_only(w=push|pop) and
-- ring_lock(seq, w=push|pop) (the ring: w is the word its messages say), paused_none (a pop's
-- count set to 0 while the queue is paused, before its transaction begins), claim_pop and
-- pending_pop (those kinds' pops). MariaDB's pop_rows, claim_pop and pending_pop return one
-- result set per pop (sql/queues/mariadb/fragments.sql).

-- name: now_utc
UTC_TIMESTAMP(6)

-- name: changed_rows
ROW_COUNT()

-- name: insert_ignore
INSERT IGNORE

-- name: create_sequence
CREATE TABLE {obj} (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY) ENGINE=InnoDB

-- name: drop_sequence
DROP TABLE IF EXISTS {obj}

-- name: next_value
INSERT INTO {obj} () VALUES ();
    SET v_seq = LAST_INSERT_ID();
    IF MOD(v_seq, 1000) = 0 THEN
        DELETE FROM {obj} WHERE id < v_seq - 1000;
    END IF

-- name: next_take
-- next_value in two: the ring takes its numbers under its push or pop lock (next_take) and
-- prunes old tickets after letting go of it (next_prune): the DELETE waits on a ticket row an
-- open transaction inserted, which must never hold up the lock.
INSERT INTO {obj} () VALUES ();
    SET v_seq = LAST_INSERT_ID()

-- name: next_prune
IF MOD(v_seq, 1000) = 0 THEN
        DELETE FROM {obj} WHERE id < v_seq - 1000;
    END IF

-- name: next_expr
(SELECT COALESCE(AUTO_INCREMENT, 1) FROM information_schema.TABLES
  WHERE TABLE_SCHEMA = {obj.schema_lit} AND TABLE_NAME = {obj.bare_lit})

-- name: skip_sql
CONCAT('INSERT INTO ', {obj.lit}, ' () VALUES ()')

-- name: skip_take
INSERT INTO {obj} () VALUES ()

-- name: skip_value
LAST_INSERT_ID()

-- name: catch_up_sql
-- The statement that makes @qadmin_n the next ticket: a row just below it moves
-- AUTO_INCREMENT up (never down).
CONCAT('INSERT IGNORE INTO ', {obj.lit}, ' (id) SELECT ', @qadmin_n - 1,
       ' FROM DUAL WHERE ', @qadmin_n, ' > 1')

-- name: txn_declare
DECLARE v_own INT DEFAULT 0

-- name: txn_handler
DECLARE EXIT HANDLER FOR SQLEXCEPTION
    BEGIN
        IF v_own = 1 THEN
            ROLLBACK;
        END IF;
        SET @qadmin_fresh = NULL;  -- a gate's flag for the routine it called (convert.sql)
        RESIGNAL;
    END

-- name: txn_begin
-- MySQL 8 has no @@in_transaction: SET TRANSACTION (next transaction only) fails with 1568
-- while one is open, and otherwise sets the isolation level of the transaction started here.
IF @@autocommit = 1 THEN
        BEGIN
            DECLARE CONTINUE HANDLER FOR 1568 SET v_own = 0;
            SET v_own = 1;
            SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
        END;
        IF v_own = 1 THEN
            START TRANSACTION;
        END IF;
    END IF

-- name: txn_fresh
-- True when this transaction's plain reads see every commit so far: the routine's own
-- transaction, or a caller's at READ COMMITTED (@qadmin_fresh: a routine of qadmin's that
-- started its own and calls this one). A REPEATABLE READ caller reads from its snapshot.
(v_own = 1 OR {isolation_var} = 'READ-COMMITTED' OR COALESCE(@qadmin_fresh, 0) = 1)

-- name: txn_end
IF v_own = 1 THEN
        COMMIT;
    END IF

-- name: batch_guard
-- push_many's batch must be a JSON array of base64 strings: JSON_TABLE reads an object, a
-- scalar or a null as no rows (the caller would be told nothing was pushed instead of being
-- refused), and a number or true as text that FROM_BASE64 turns into garbage bytes. A null
-- element or one that is not base64 is refused too (23000, as a NULL payload is), before any
-- row is written or number taken. One pass over the elements checks both: each JSON_TABLE
-- parses the whole batch again, the larger part of a small batch's cost.
IF p_batch IS NULL OR JSON_VALID(p_batch) = 0 THEN
        SIGNAL SQLSTATE '22032' SET MESSAGE_TEXT = 'push_many: the batch is not a JSON array';
    ELSEIF JSON_TYPE(p_batch) <> 'ARRAY' THEN
        SIGNAL SQLSTATE '22032' SET MESSAGE_TEXT = 'push_many: the batch is not a JSON array';
    END IF;
    CASE (SELECT MAX(CASE WHEN JSON_TYPE(e.j) NOT IN ('STRING', 'NULL') THEN 2
                          WHEN FROM_BASE64(e.p) IS NULL THEN 1 ELSE 0 END)
          FROM JSON_TABLE(p_batch, '$[*]' COLUMNS (j JSON PATH '$', p LONGTEXT PATH '$')) AS e)
        WHEN 2 THEN
            SIGNAL SQLSTATE '22032'
                SET MESSAGE_TEXT = 'push_many: an element is not a base64 string';
        WHEN 1 THEN
            SIGNAL SQLSTATE '23000'
                SET MESSAGE_TEXT = 'push_many: a payload is NULL or not base64';
        ELSE
            DO 0;
    END CASE

-- name: batch_next
OPEN batch_rows;
    take: LOOP
        FETCH batch_rows INTO v_payload;
        IF v_done = 1 THEN
            LEAVE take;
        END IF;

-- name: batch_declare
DECLARE v_payload LONGTEXT;
    DECLARE v_done INT DEFAULT 0;
    {txn_declare()};
    DECLARE batch_rows CURSOR FOR
        SELECT t.p FROM JSON_TABLE(p_batch, '$[*]' COLUMNS (n FOR ORDINALITY,
                                                      p LONGTEXT PATH '$')) AS t ORDER BY t.n;
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = 1;
    {txn_handler()};
    {batch_guard()};
    {txn_begin()};  -- all or nothing for an autocommit caller too
    SET @qadmin_pushed = '';

-- name: pushed_add
-- The ids a batch inserted, one by one, gathered in a session variable: appending to a local
-- LONGTEXT cost as much as the INSERT itself (12 us against 3 us a time, measured), so the
-- list is @qadmin_pushed, emptied when the batch begins and ends.
SET @qadmin_pushed = CONCAT(@qadmin_pushed, ',', LAST_INSERT_ID())

-- name: pushed_ids
-- The ids gathered, as the JSON array the result set is read from.
CONCAT('[', SUBSTRING(@qadmin_pushed, 2), ']')

-- name: push_many_rows
-- Many messages in one call (push --lines, --file; applications too): p_batch is a JSON array
-- of base64 payloads, inserted in array order, returned as ONE result set (id, ...) in that
-- order. Each message is its own INSERT: one INSERT ... SELECT would be faster, but InnoDB
-- reserves AUTO_INCREMENT values for it in doubling steps and loses the unused ones at the end
-- of the statement (up to the batch size per batch), which made the ids-issued enqueue rate
-- overstate what was pushed; and under innodb_autoinc_lock_mode 2 (MySQL 8's default) its ids
-- could interleave with other sessions'. Measured: 7.6 s against 6.9 s for 100,000 lines.
CREATE PROCEDURE {push_many}(IN p_batch LONGTEXT)
BEGIN
    DECLARE v_at DATETIME(6) DEFAULT UTC_TIMESTAMP(6);
    {batch_declare()}
    {batch_next()}
        INSERT INTO {table} (enqueued_at, payload) VALUES (v_at, FROM_BASE64(v_payload));
        {pushed_add()};
    END LOOP;
    CLOSE batch_rows;
    SELECT t.id, v_at AS enqueued_at
    FROM JSON_TABLE({pushed_ids()}, '$[*]' COLUMNS (n FOR ORDINALITY, id BIGINT PATH '$')) AS t
    ORDER BY t.n;
    SET @qadmin_pushed = NULL;
    {txn_end()};
END

-- name: delete_each
OPEN next_rows;
    take: LOOP
        FETCH next_rows INTO v_id, v_at, v_payload;
        IF v_done = 1 THEN
            LEAVE take;
        END IF;
        DELETE FROM {table} WHERE id = v_id;
        SELECT v_id AS id, v_at AS enqueued_at, v_payload AS payload;

-- name: claim_each
OPEN next_rows;
    take: LOOP
        FETCH next_rows INTO v_id, v_at, v_attempts, v_payload;
        IF v_done = 1 THEN
            LEAVE take;
        END IF;
        UPDATE {table}
        SET processing_started_at = UTC_TIMESTAMP(6), claimed_by = p_worker,
            claimed_session = CONNECTION_ID(), attempts = attempts + 1
        WHERE id = v_id;
        SELECT v_id AS id, v_at AS enqueued_at, v_attempts + 1 AS attempts, v_payload AS payload;

-- name: wm_tick_end
IF v_id % {wm_every} = 0 THEN
            SET v_tick = 1;
        END IF;
    END LOOP;
    CLOSE next_rows;
    IF v_tick = 1 THEN
        CALL {wm_advance}(NULL);
    END IF;
    {txn_end()};
END

-- name: pop_rows
CREATE PROCEDURE {pop}(IN p_count INT)
BEGIN
    {pop_vars()}
    DECLARE next_rows CURSOR FOR
        SELECT id, enqueued_at, payload FROM {table} {order_by}
        LIMIT p_count FOR UPDATE {skip_locked};
    {cursor_begin()}
    {delete_each()}
    END LOOP;
    CLOSE next_rows;
    {txn_end()};
END

-- name: push_batch_calls
-- A queue created before push_many, many messages in one round trip on MariaDB: an anonymous
-- block calls the push procedure for each element of one JSON array of base64 payloads, in
-- array order (a convert's gate too); each call returns its result set.
-- MySQL 8 has no anonymous blocks: there qadmin does not use this section (MysqlEngine) and
-- pushes a batch one CALL at a time in one transaction.
BEGIN NOT ATOMIC
    FOR j IN (SELECT t.p FROM JSON_TABLE(:batch, '$[*]' COLUMNS (n FOR ORDINALITY,
                                                  p LONGTEXT PATH '$')) AS t ORDER BY t.n)
    DO
        CALL {push}(FROM_BASE64(j.p));
    END FOR;
END

-- name: cursor_begin
{txn_handler()};
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = 1;
    {paused_none()}
    {txn_begin()};

-- name: pop_vars
{txn_declare()};
    DECLARE v_id BIGINT;
    DECLARE v_at DATETIME(6);
    DECLARE v_payload LONGBLOB;
    DECLARE v_done INT DEFAULT 0;

-- name: push_row
CREATE PROCEDURE {push}(IN p_payload LONGBLOB)
BEGIN
    DECLARE v_at DATETIME(6) DEFAULT UTC_TIMESTAMP(6);
    INSERT INTO {table} (enqueued_at, payload) VALUES (v_at, p_payload);
    SELECT LAST_INSERT_ID() AS id, v_at AS enqueued_at;
END

-- name: lock_handler
DECLARE EXIT HANDLER FOR SQLEXCEPTION
        BEGIN
            IF v_lock IS NOT NULL THEN
                DO RELEASE_LOCK(v_lock);  -- a session's lock outlives the transaction
            END IF;
            IF v_own = 1 THEN
                ROLLBACK;
            END IF;
            SET @qadmin_fresh = NULL;
            RESIGNAL;
        END

-- name: committed_only
IF NOT {txn_fresh()} THEN
        SIGNAL SQLSTATE '25000'
            SET MESSAGE_TEXT = 'ring {w} runs only in autocommit or at READ COMMITTED';
    END IF;

-- name: ring_lock
SET v_name = CONCAT('qadmin_', MD5({obj.lit}));
    IF NOT GET_LOCK(v_name, @@innodb_lock_wait_timeout) <=> 1 THEN
        SIGNAL SQLSTATE 'HY000' SET MYSQL_ERRNO = 1205,
            MESSAGE_TEXT = 'ring {w}: lock wait timeout on the ring''s {w} lock';
    END IF;
    SET v_lock = v_name;

-- name: capped_vars
{txn_declare()};
    DECLARE v_seq BIGINT;
    DECLARE v_id BIGINT;
    DECLARE v_old BIGINT;
    DECLARE v_dup INT DEFAULT 0;
    DECLARE v_at DATETIME(6) DEFAULT UTC_TIMESTAMP(6);
    DECLARE v_cap INT;

-- name: slot_look
{next_value(seq)};
    SET v_id = v_seq;
    place: LOOP
        SET v_old = NULL, v_dup = 0;
        SELECT id INTO v_old FROM {table} WHERE slot = MOD(v_id, v_cap) FOR UPDATE;

-- name: paused
EXISTS (SELECT 1 FROM {catalog}
        WHERE name = {table.bare_lit} AND JSON_EXTRACT(options, '$.paused_at') IS NOT NULL)

-- name: paused_none
-- Also a count that is NULL or below 1 takes nothing (MySQL reads LIMIT -1 as no limit: one
-- unset variable in an application would drain the queue).
IF {paused()} OR COALESCE(p_count, 0) < 1 THEN
        SET p_count = 0;  -- paused (qadmin pause): take nothing
    END IF;

-- name: claim_pop
-- A claim queue's pop (claim.sql): one result set per message (MariaDB's is one in all).
CREATE PROCEDURE {pop}(IN p_count INT, IN p_worker VARCHAR(255))
BEGIN
    {pop_vars()}
    DECLARE v_attempts INT;
    DECLARE next_rows CURSOR FOR
        SELECT id, enqueued_at, attempts, payload FROM {table}
        WHERE processing_started_at IS NULL
        ORDER BY id LIMIT p_count FOR UPDATE SKIP LOCKED;
    {cursor_begin()}
    {claim_each()}
    END LOOP;
    CLOSE next_rows;
    {txn_end()};
END

-- name: pending_pop
-- A pending queue's pop (pending.sql): one result set per message (MariaDB's is one in all).
CREATE PROCEDURE {pop}(IN p_count INT)
BEGIN
    {pop_vars()}
    DECLARE v_due DATETIME(6);
    DECLARE next_rows CURSOR FOR
        SELECT id, enqueued_at, due_at, payload FROM {table}
        WHERE due_at <= UTC_TIMESTAMP(6)
        ORDER BY due_at, id LIMIT p_count FOR UPDATE SKIP LOCKED;
    {cursor_begin()}
    OPEN next_rows;
    take: LOOP
        FETCH next_rows INTO v_id, v_at, v_due, v_payload;
        IF v_done = 1 THEN
            LEAVE take;
        END IF;
        DELETE FROM {table} WHERE id = v_id;
        SELECT v_id AS id, v_at AS enqueued_at, v_due AS due_at, v_payload AS payload;
    END LOOP;
    CLOSE next_rows;
    {txn_end()};
END

-- name: live_sessions
SET @qadmin_live = (SELECT COALESCE(JSON_ARRAYAGG(ID), JSON_ARRAY())
                    FROM information_schema.PROCESSLIST)

-- name: taken_rows
JSON_TABLE(@qadmin_ids, '$[*]' COLUMNS (id BIGINT PATH '$')) AS t
STRAIGHT_JOIN {table} AS q FORCE INDEX (PRIMARY) ON q.id = t.id

-- name: claim_gone
(:include_live = 1 OR claimed_session IS NULL
 OR NOT JSON_CONTAINS(@qadmin_live, CAST(claimed_session AS CHAR)))

-- name: ring_pop
-- The ring's pop (ring.sql): one message at a time, each returned as its own result set.
CREATE PROCEDURE {pop}(IN p_count INT)
BEGIN
    {txn_declare()};
    DECLARE v_next BIGINT;
    DECLARE v_seq BIGINT;
    DECLARE v_present INT;
    DECLARE v_parked INT DEFAULT 1;
    DECLARE v_done INT DEFAULT 0;
    DECLARE v_taken INT DEFAULT 0;
    DECLARE v_at DATETIME(6);
    DECLARE v_data LONGBLOB;
    DECLARE v_cap INT;
    DECLARE v_name VARCHAR(64);
    DECLARE v_lock VARCHAR(64) DEFAULT NULL;
    -- Parked numbers are locked first, in one statement, before any slot: InnoDB can wait on
    -- a row another popper holds even with SKIP LOCKED, and waiting for a pending row while
    -- holding a slot is how two poppers deadlock.
    DECLARE parked CURSOR FOR
        SELECT message_id FROM {pending} ORDER BY message_id LIMIT p_count
        FOR UPDATE SKIP LOCKED;
    {lock_handler()};
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = 1;
    {paused_none()}
    {txn_begin()};
    -- A deadlock under REPEATABLE READ's gap locks rolls back after the number is taken, and
    -- no rollback returns a sequence number: refuse that level up front.
    {committed_only(w=pop)}
    {stats_fresh};  -- MySQL 8: the ticket counters live, not from a day-old cache
    SELECT capacity INTO v_cap FROM {ctl} WHERE one = 1 LOCK IN SHARE MODE;  -- the gate
    OPEN parked;
    take: WHILE v_taken < p_count DO
        SET v_seq = NULL, v_at = NULL, v_done = 0;
        IF v_parked = 1 THEN
            FETCH parked INTO v_seq;
            IF v_done = 1 THEN
                SET v_parked = 0, v_seq = NULL, v_done = 0;
            END IF;
        END IF;
        IF v_seq IS NULL THEN
            -- The pop lock, from the look at "next" to the number only (see the invariants).
            {ring_lock(pop_seq, w=pop)}
            -- Plain SELECT ... INTO: a subquery in SET or IF would take shared row locks.
            SELECT {next_expr(pop_seq)} INTO v_next;
            SELECT (SELECT COUNT(*) FROM {table}
                    WHERE slot = MOD(v_next, v_cap) AND message_id = v_next)
                 + (SELECT COUNT(*) FROM {overflow} WHERE message_id = v_next)
            INTO v_present;
            IF v_present > 0 THEN
                {next_take(pop_seq)};
            END IF;
            DO RELEASE_LOCK(v_lock);
            SET v_lock = NULL;
            IF v_present = 0 THEN
                LEAVE take;  -- empty: no number taken
            END IF;
            {next_prune(pop_seq)};
        END IF;
        -- A plain read first: the locking read would wait on the slot whatever it holds.
        SELECT COUNT(*) INTO v_present FROM {table}
        WHERE slot = MOD(v_seq, v_cap) AND message_id = v_seq;
        IF v_present = 1 THEN
            SELECT enqueued_at, payload INTO v_at, v_data FROM {table}
            WHERE slot = MOD(v_seq, v_cap) AND message_id = v_seq FOR UPDATE;
        END IF;
        IF v_at IS NOT NULL THEN
            UPDATE {table}
            SET reference_count = 0, message_id = NULL, payload = NULL, enqueued_at = NULL
            WHERE slot = MOD(v_seq, v_cap);
        ELSE
            SET v_done = 0;
            SELECT enqueued_at, payload INTO v_at, v_data FROM {overflow}
            WHERE message_id = v_seq FOR UPDATE;
            IF v_at IS NOT NULL THEN
                DELETE FROM {overflow} WHERE message_id = v_seq;
            END IF;
        END IF;
        IF v_at IS NULL AND v_parked = 0 THEN
            -- Our number's message is not there: something took a pop number without the
            -- pop lock (repair's skip) between our look and our number.
            INSERT INTO {pending} (message_id, taken_at) VALUES (v_seq, UTC_TIMESTAMP(6));
            LEAVE take;
        ELSEIF v_at IS NOT NULL THEN
            IF v_parked = 1 THEN
                DELETE FROM {pending} WHERE message_id = v_seq;
            END IF;
            SELECT v_seq AS id, v_at AS enqueued_at, v_data AS payload;
            SET v_taken = v_taken + 1;
        END IF;
    END WHILE;
    CLOSE parked;
    {txn_end()};
END

-- name: push_take_run
-- The ring's push_many numbers (ring.sql), one ticket each under the push lock, into v_ids.
SET v_ids = '[';
    WHILE v_free = 1 AND v_i < v_want DO
        {next_take(push_seq)};
        SET v_ids = CONCAT(v_ids, IF(v_i = 0, '', ','), v_seq), v_i = v_i + 1;
    END WHILE;
    SET v_ids = CONCAT(v_ids, ']'), v_i = 0;

-- name: push_fill
-- MySQL 8: push_many writes each message in turn (ring.sql).
DO 0;

-- name: nth_taken
-- The ring push_many's v_i-th number (from 0), as push_take_run took it.
JSON_EXTRACT(v_ids, CONCAT('$[', v_i, ']'))

-- name: push_many_result
-- The ring push_many's result: the numbers taken, in array order (none when it was refused).
SELECT t.id, v_at AS enqueued_at
    FROM JSON_TABLE(v_ids, '$[*]' COLUMNS (n FOR ORDINALITY, id BIGINT PATH '$')) AS t
    ORDER BY t.n
