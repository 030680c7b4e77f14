-- Watermark for fifo and claim queues on MySQL 8 and MariaDB (article 004), laid over
-- basic.sql or claim.sql. The dequeue range-scans from {wm}.wm, past the delete-marked records
-- that purge cannot remove while an old read view is open (the history list).
--
-- Safety: AUTO_INCREMENT values are handed out before commit, so a producer can commit id 41
-- after id 42 was dequeued; a watermark moved past 41 would strand it. The advance has two
-- phases. Phase 1 reads the lowest id visible now (or the next AUTO_INCREMENT value when the
-- queue is empty) and only then records the time, in the server's clock (INNODB_TRX shows
-- start times in the system time zone, to the second: a truncated start only counts more).
-- Phase 2, on a later advance, moves the watermark to that candidate, or lower to a row that
-- committed late, once no other transaction that started before phase 1 can still commit an
-- id below it. INNODB_TRX does not say which tables a transaction wrote, so the tightest safe
-- test is: it has modified rows (trx_rows_modified > 0: an insert anywhere, the queue's own
-- producers among them) or is inside a statement that uses tables (trx_tables_in_use > 0: an
-- INSERT between taking its AUTO_INCREMENT value and writing its row, or waiting for a lock).
-- A transaction that only read, holds a snapshot, or locked rows with a locking read has taken
-- no id and does not hold the watermark back; an open writer of any table on the server does,
-- and so does a read-write transaction while it runs any statement (a long SELECT in a
-- transaction not declared READ ONLY). A read-only one (an autocommit SELECT, START
-- TRANSACTION READ ONLY: trx_is_read_only = 1) cannot take an id and never counts.
-- Phase 2 also reads the head, so it moves the watermark only from a READ COMMITTED
-- transaction: the routine's own (an autocommit caller; qadmin's routines start theirs at
-- READ COMMITTED) or a caller's. REPEATABLE READ could miss a row that committed late; READ
-- UNCOMMITTED sees a pop's delete before it commits and would pass the row that pop then rolls
-- back; SERIALIZABLE reads would wait on locks. The level is the transaction's own, as
-- INNODB_TRX shows it, not the session variable, which a SET TRANSACTION for one transaction
-- leaves as it was (a REPEATABLE READ transaction in a READ COMMITTED session had stranded a
-- row), nor a session variable a caller could set.
-- INNODB_TRX is a cache, refilled only when nobody has read it for 0.1 s: under a monitor
-- polling it faster it stays as it was, and a producer that started since is not in it
-- (measured on MariaDB 10.11: a writer unseen for 3 s under a 20 ms poller). So phase 2 reads
-- it through a prepared statement that carries a fresh token, and trusts it only when it shows
-- that statement as this session's query, i.e. it was refilled during it; else it waits. The
-- queue's own pops would keep it frozen too (a tick every few ms under load), so phase 2
-- reads it at most every 0.2 s per queue (probed_at). Why the last phase 2 did not move the
-- watermark is kept in held_by, for `qadmin watermark` and `check`. The prepared statement is
-- named qadmin_wm_probe and the session variables it uses start with @qadmin_wm_.
-- Privilege: reading INNODB_TRX needs PROCESS. The routine runs with its definer's rights,
-- so the account that creates the queue needs PROCESS; without it the watermark never moves
-- (held_by says so), it is never wrong.
-- extends: queues/common/watermark.sql (the statements it shares with other engines)

-- name: create
CREATE TABLE {wm} (
    one          TINYINT NOT NULL PRIMARY KEY,
    wm           BIGINT NOT NULL,
    candidate    BIGINT NULL,
    candidate_at DATETIME(6) NULL,
    advanced_at  DATETIME(6) NULL,
    probed_at    DATETIME(6) NULL,
    held_by      VARCHAR(200) NULL
) ENGINE=InnoDB

-- name: create
INSERT INTO {wm} (one, wm) VALUES (1, 0)

-- name: create
CREATE PROCEDURE {wm_advance}(IN p_to BIGINT)
BEGIN
    {txn_declare()};
    DECLARE v_locked INT DEFAULT 1;
    DECLARE v_wm BIGINT;
    DECLARE v_new BIGINT;
    DECLARE v_cand BIGINT;
    DECLARE v_cand_at DATETIME(6);
    DECLARE v_probed_at DATETIME(6);
    DECLARE v_probed INT DEFAULT 0;
    DECLARE v_head BIGINT;
    DECLARE v_held VARCHAR(200);
    {txn_handler()};
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_locked = 0;
    {txn_begin()};
    -- One advancer at a time; a dequeue that finds the row busy simply does not advance.
    SELECT wm, candidate, candidate_at, probed_at INTO v_wm, v_cand, v_cand_at, v_probed_at
      FROM {wm} WHERE one = 1 FOR UPDATE SKIP LOCKED;
    IF v_locked = 1 THEN
        SET v_new = v_wm;
        IF v_cand IS NOT NULL AND (v_probed_at IS NULL
                                   OR v_probed_at < UTC_TIMESTAMP(6) - INTERVAL 200000 MICROSECOND) THEN
            SET v_probed = 1;
            BEGIN
                DECLARE CONTINUE HANDLER FOR 1227
                    SET v_held = 'INNODB_TRX unreadable: the queue''s definer needs PROCESS';
                DECLARE CONTINUE HANDLER FOR SQLEXCEPTION
                    SET v_held = COALESCE(v_held, 'INNODB_TRX could not be read');
                SET @qadmin_wm_cand_at = v_cand_at, @qadmin_wm_busy = NULL,
                    @qadmin_wm_fresh = NULL, @qadmin_wm_iso = NULL;
                SET @qadmin_wm_probe = CONCAT(
                    'SELECT COALESCE(SUM(trx_mysql_thread_id = CONNECTION_ID()',
                    ' AND LOCATE(''', UUID(), ''', trx_query) > 0), 0),',
                    ' MAX(IF(trx_mysql_thread_id = CONNECTION_ID(), trx_isolation_level, NULL)),',
                    ' COALESCE(SUM(trx_mysql_thread_id <> CONNECTION_ID()',
                    ' AND trx_started <= ? AND trx_is_read_only = 0',
                    ' AND (trx_rows_modified > 0 OR trx_tables_in_use > 0)), 0)',
                    ' INTO @qadmin_wm_fresh, @qadmin_wm_iso, @qadmin_wm_busy',
                    ' FROM information_schema.INNODB_TRX');
                PREPARE qadmin_wm_probe FROM @qadmin_wm_probe;
                EXECUTE qadmin_wm_probe USING @qadmin_wm_cand_at;
                DEALLOCATE PREPARE qadmin_wm_probe;
            END;
            IF v_held IS NULL AND COALESCE(@qadmin_wm_fresh, 0) = 0 THEN
                SET v_held = 'INNODB_TRX not refilled: other sessions read it less than 0.1 s apart';
            ELSEIF v_held IS NULL AND NOT @qadmin_wm_iso <=> 'READ COMMITTED' THEN
                SET v_held = CONCAT('the dequeuing transaction is ', @qadmin_wm_iso,
                                    ': only autocommit and READ COMMITTED dequeues move it');
            ELSEIF v_held IS NULL AND @qadmin_wm_busy > 0 THEN
                SET v_held = 'a read-write transaction that has written or is inside a statement is open since the candidate was taken';
            END IF;
            SET @qadmin_wm_probe = NULL, @qadmin_wm_cand_at = NULL, @qadmin_wm_busy = NULL,
                @qadmin_wm_fresh = NULL, @qadmin_wm_iso = NULL;
            IF v_held IS NULL THEN
                SELECT min(id) INTO v_head FROM {table} WHERE id >= v_wm;
                SET v_new = GREATEST(v_wm, LEAST(v_cand, COALESCE(v_head, v_cand),
                                                 COALESCE(p_to, v_cand)));
                SET v_cand = NULL;
            ELSE
                UPDATE {wm} SET probed_at = UTC_TIMESTAMP(6), held_by = v_held WHERE one = 1;
            END IF;
        END IF;
        IF v_cand IS NULL THEN
            SELECT min(id) INTO v_head FROM {table} WHERE id >= v_new;
            IF v_head IS NULL THEN
                SELECT AUTO_INCREMENT INTO v_head FROM information_schema.TABLES
                 WHERE TABLE_SCHEMA = {table.schema_lit} AND TABLE_NAME = {table.bare_lit};
            END IF;
            UPDATE {wm}
               SET advanced_at = IF(v_new > wm, UTC_TIMESTAMP(6), advanced_at),
                   wm = v_new,
                   candidate = COALESCE(v_head, v_new),
                   candidate_at = CONVERT_TZ(UTC_TIMESTAMP(6), '+00:00', 'SYSTEM'),
                   probed_at = IF(v_probed = 1, UTC_TIMESTAMP(6), probed_at),
                   held_by = NULL
             WHERE one = 1;
        END IF;
    END IF;
    {txn_end()};
END

-- name: drop
DROP PROCEDURE IF EXISTS {wm_advance}

-- name: drop
DROP TABLE IF EXISTS {wm}

-- name: wm_show
-- The watermark first, into a variable: a subquery on the watermark row's column is a
-- dependent subquery, which MariaDB runs as a walk of the whole primary key (6.4 s behind
-- 3,000,000 delete-marked rows); on a variable each look is a range of the key (0.3 ms).
SELECT wm INTO @qadmin_wm FROM {wm}

-- name: wm_show
-- Stranded rows are looked for in the 1,000 ids below the watermark only: below them lie the
-- dead index entries a held snapshot keeps, which a walk to the bottom would read one by one.
SELECT w.*,  -- held_by and probed_at only where the queue was made with them
       TIMESTAMPDIFF(MICROSECOND, w.candidate_at,
                     CONVERT_TZ(UTC_TIMESTAMP(6), '+00:00', 'SYSTEM')) / 1e6 AS candidate_age_s,
       (SELECT min(t.id) FROM {table} AS t WHERE t.id >= @qadmin_wm) AS head_id,
       (SELECT count(*) FROM {table} AS t WHERE t.id BETWEEN @qadmin_wm - 1000 AND @qadmin_wm - 1)
           AS stranded,
       (SELECT min(t.id) FROM {table} AS t
         WHERE t.id BETWEEN @qadmin_wm - 1000 AND @qadmin_wm - 1) AS stranded_min_id,
       (SELECT TIMESTAMPDIFF(MICROSECOND, t.enqueued_at, UTC_TIMESTAMP(6)) / 1e6
          FROM {table} AS t WHERE t.id BETWEEN @qadmin_wm - 1000 AND @qadmin_wm - 1
         ORDER BY t.id LIMIT 1) AS oldest_stranded_s
FROM {wm} AS w

-- name: wm_advance
CALL {wm_advance}(:to)

-- name: wm_advance
SELECT wm, candidate FROM {wm}

-- name: wm_readable
-- What phase 2 reads, as the account that creates the queue (the routine's definer) reads it:
-- refused without PROCESS, and then the watermark never moves. A count, not LIMIT 0: a read
-- that needs no rows is answered without the privilege check.
SELECT count(*) AS open_transactions FROM information_schema.INNODB_TRX

-- name: wm_lock
SELECT wm FROM {wm} WHERE one = 1 FOR UPDATE

-- name: wm_set
UPDATE {wm} SET wm = :wm, candidate = NULL, candidate_at = NULL WHERE one = 1
