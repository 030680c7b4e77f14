-- Preallocated ring of slots driven by two sequences (article 003, LMAX-style), on MySQL 8 and
-- MariaDB. The sequences are fragments.sql's: SEQUENCE objects on MariaDB, AUTO_INCREMENT
-- ticket tables on MySQL 8.
--
-- Invariants (README, "The ring"), the same as the PostgreSQL ring:
-- * Message k lives in slot k % capacity; slots are only UPDATEd, so the table never grows.
-- * The bound: a ring never holds more than its capacity, uncommitted pushes included. Push
--   counts the messages taken = push_next - pop_next + parked numbers (the sequences are not
--   transactional, so a number an uncommitted push took counts at once) and takes a number
--   only while that count stays within the capacity; a push_many that does not fit is refused
--   whole. Counting and taking are one step: pushers hold the ring's push lock (GET_LOCK, a
--   session's named lock: released before the push writes anything, and by the error handler,
--   never held to commit, so a push never waits on another transaction) from the count to the
--   number. Pops take their numbers under the ring's pop lock the same way, so no two poppers
--   race for "next" (which parked a number, uncounted until its pop committed). The lock
--   names are 'qadmin_' || MD5 of the sequence's qualified name (user locks are server-wide
--   and at most 64 characters).
-- * push also takes a number only after seeing the slot of the next number free (or holding
--   that number or a later one: the read was stale): a slot still holding an older message (an
--   orphan, a pop not yet committed) refuses the push, no number used. A number whose slot
--   another transaction holds is kept in the overflow table: no number is abandoned.
-- * pop takes a number only after seeing message "next" present: an empty ring returns nothing
--   and uses no number. A number whose message is not there (something took a pop number
--   without the pop lock: repair's skip) is parked in the pending table and served first by
--   later pops: it is never skipped, so no later message is lost.
-- * A push never waits on a row lock: it locks k's slot only if no other transaction holds it
--   (SKIP LOCKED), else message k goes to the overflow table. A pop locks a slot only after a
--   plain read shows its own message there (InnoDB's locking read waits on a held row whatever
--   it holds), so it waits only on a pusher's passing lock. A deadlock would roll back a write
--   but not the number taken before it: with no cycle of waits, none forms.
-- * The capacity lives in {ctl}; push and pop read it with a share lock on its row, which
--   resize holds exclusively while it moves messages to their new slots.
-- A pop returns one result set per message on MySQL 8 and one in all on MariaDB (each
-- engine's fragments.sql, ring_pop), in the caller's transaction (an autocommit caller's call
-- runs in one transaction of its own: fragments.sql, txn_begin).
-- extends: queues/common/ring.sql (the statements it shares with other engines)

-- name: create
{create_sequence(push_seq)}

-- name: create
{create_sequence(pop_seq)}

-- name: create
CREATE TABLE {table} (
    slot            INT NOT NULL PRIMARY KEY,
    message_id      BIGINT NULL,
    enqueued_at     DATETIME(6) NULL,
    reference_count SMALLINT NOT NULL DEFAULT 0,
    payload         LONGBLOB NULL
) ENGINE=InnoDB

-- name: create
CREATE TABLE {overflow} (
    message_id  BIGINT NOT NULL PRIMARY KEY,
    enqueued_at DATETIME(6) NOT NULL,
    payload     LONGBLOB NOT NULL
) ENGINE=InnoDB

-- name: create
CREATE TABLE {pending} (
    message_id BIGINT NOT NULL PRIMARY KEY,
    taken_at   DATETIME(6) NOT NULL
) ENGINE=InnoDB

-- name: create
CREATE TABLE {ctl} (
    one      TINYINT NOT NULL PRIMARY KEY,
    capacity INT NOT NULL
) ENGINE=InnoDB

-- name: create
INSERT INTO {ctl} (one, capacity) VALUES (1, {capacity})

-- name: create
CREATE PROCEDURE {push}(IN p_payload LONGBLOB)
BEGIN
    {txn_declare()};
    DECLARE v_next BIGINT;
    DECLARE v_seq BIGINT;
    DECLARE v_free INT;
    DECLARE v_slot INT DEFAULT NULL;
    DECLARE v_at DATETIME(6) DEFAULT UTC_TIMESTAMP(6);
    DECLARE v_cap INT;
    DECLARE v_name VARCHAR(64);
    DECLARE v_lock VARCHAR(64) DEFAULT NULL;
    {lock_handler()};
    {txn_begin()};
    -- A deadlock under REPEATABLE READ's gap locks rolls back after the number is taken, and
    -- no rollback returns a sequence number: refuse that level up front.
    {committed_only(w=push)}
    -- A slot's payload column allows NULL (a free slot): refuse one, before a number is taken.
    IF p_payload IS NULL THEN
        SIGNAL SQLSTATE '23000' SET MESSAGE_TEXT = 'ring push: the payload is NULL';
    END IF;
    {stats_fresh};  -- MySQL 8: the ticket counters live, not from a day-old cache
    -- The capacity gate: resize holds this row exclusively while it moves the slots.
    SELECT capacity INTO v_cap FROM {ctl} WHERE one = 1 LOCK IN SHARE MODE;
    -- The push lock, from the count to the number only (see the invariants).
    {ring_lock(push_seq, w=push)}
    -- Plain SELECT ... INTO: a subquery in SET or IF would take shared row locks.
    SELECT {next_expr(push_seq)} INTO v_next;
    SELECT (SELECT COUNT(*) FROM {table}
            WHERE slot = MOD(v_next, v_cap) AND (reference_count = 0 OR message_id >= v_next))
         * (v_next + 1 - {next_expr(pop_seq)} + (SELECT COUNT(*) FROM {pending}) <= v_cap)
      INTO v_free;
    IF v_free = 1 THEN
        {next_take(push_seq)};
    END IF;
    DO RELEASE_LOCK(v_lock);
    SET v_lock = NULL;
    IF v_free = 1 THEN
        {next_prune(push_seq)};
        SELECT slot INTO v_slot FROM {table}
        WHERE slot = MOD(v_seq, v_cap) AND reference_count = 0 FOR UPDATE SKIP LOCKED;
        IF v_slot IS NOT NULL THEN
            UPDATE {table}
            SET message_id = v_seq, payload = p_payload, reference_count = 1, enqueued_at = v_at
            WHERE slot = v_slot;
        ELSE
            INSERT INTO {overflow} (message_id, enqueued_at, payload)
            VALUES (v_seq, v_at, p_payload);
        END IF;
    END IF;
    -- One result set either way: the message's id, or no row when the full ring refused it
    -- (an application reads the same columns whether or not it went in).
    SELECT v_seq AS id, v_at AS enqueued_at FROM DUAL WHERE v_free = 1;
    {txn_end()};
END

-- name: create
-- Many messages in one call, returned as ONE result set (id, enqueued_at) in array order:
-- p_batch is a JSON array of base64 payloads, all or none: unless the whole batch fits (the
-- count of messages taken, as in push, plus the batch within the capacity, and every slot its
-- numbers map to free) it is refused whole, no number taken, and the result set is empty.
-- The numbers are taken under the push lock, then each message is written as push does it.
CREATE PROCEDURE {push_many}(IN p_batch LONGTEXT)
BEGIN
    {txn_declare()};
    DECLARE v_next BIGINT;
    DECLARE v_seq BIGINT;
    DECLARE v_free INT DEFAULT 0;
    DECLARE v_slot INT DEFAULT NULL;
    DECLARE v_at DATETIME(6) DEFAULT UTC_TIMESTAMP(6);
    DECLARE v_cap INT;
    DECLARE v_want INT;
    DECLARE v_i INT DEFAULT 0;
    DECLARE v_payload LONGBLOB;
    DECLARE v_ids LONGTEXT DEFAULT '[]';  -- the numbers taken (MySQL 8), a JSON array
    DECLARE v_filled INT DEFAULT 0;  -- every message written already (push_fill)
    DECLARE v_done INT DEFAULT 0;
    DECLARE v_name VARCHAR(64);
    DECLARE v_lock VARCHAR(64) DEFAULT NULL;
    DECLARE batch_rows CURSOR FOR
        SELECT FROM_BASE64(t.p) FROM JSON_TABLE(p_batch, '$[*]' COLUMNS (n FOR ORDINALITY,
                                                       p LONGTEXT PATH '$')) AS t ORDER BY t.n;
    {lock_handler()};
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = 1;
    {batch_guard()};
    {txn_begin()};
    {committed_only(w=push)}
    {stats_fresh};  -- MySQL 8: the ticket counters live, not from a day-old cache
    SELECT capacity INTO v_cap FROM {ctl} WHERE one = 1 LOCK IN SHARE MODE;  -- the gate
    SET v_want = JSON_LENGTH(p_batch);
    -- The push lock, from the count to the last number only (see the invariants).
    {ring_lock(push_seq, w=push)}
    SELECT {next_expr(push_seq)} INTO v_next;
    SELECT v_want > 0
       AND v_next + v_want - {next_expr(pop_seq)} + (SELECT COUNT(*) FROM {pending}) <= v_cap
       -- the batch's slots, one key range (two when it wraps; a batch that fits has
       -- v_want <= v_cap)
       AND NOT EXISTS (SELECT 1 FROM {table} AS r
                       WHERE (r.slot BETWEEN MOD(v_next, v_cap)
                                         AND LEAST(MOD(v_next, v_cap) + v_want - 1, v_cap - 1)
                              OR r.slot <= MOD(v_next, v_cap) + v_want - 1 - v_cap)
                         AND NOT (r.reference_count = 0
                                  OR r.message_id >= v_next + MOD(r.slot - MOD(v_next, v_cap)
                                                                  + v_cap, v_cap)))
      INTO v_free;
    {push_take_run()}
    DO RELEASE_LOCK(v_lock);
    SET v_lock = NULL;
    IF v_free = 1 THEN
        {push_fill()}
    END IF;
    IF v_free = 1 AND v_filled = 0 THEN
        {batch_next()}
            SET v_seq = {nth_taken()}, v_i = v_i + 1;
            {next_prune(push_seq)};
            SET v_slot = NULL;
            SELECT slot INTO v_slot FROM {table}
            WHERE slot = MOD(v_seq, v_cap) AND reference_count = 0 FOR UPDATE SKIP LOCKED;
            SET v_done = 0;  -- no free slot is not the end of the batch
            IF v_slot IS NOT NULL THEN
                UPDATE {table}
                SET message_id = v_seq, payload = v_payload, reference_count = 1,
                    enqueued_at = v_at
                WHERE slot = v_slot;
            ELSE
                INSERT INTO {overflow} (message_id, enqueued_at, payload)
                VALUES (v_seq, v_at, v_payload);
            END IF;
        END LOOP;
        CLOSE batch_rows;
    END IF;
    {push_many_result()};
    {txn_end()};
END

-- name: create
{ring_pop()}

-- name: drop
DROP PROCEDURE IF EXISTS {pop}

-- name: drop
DROP PROCEDURE IF EXISTS {push_many}

-- name: drop
DROP PROCEDURE IF EXISTS {push}

-- name: drop
DROP TABLE IF EXISTS {table}

-- name: drop
DROP TABLE IF EXISTS {overflow}

-- name: drop
DROP TABLE IF EXISTS {pending}

-- name: drop
{drop_sequence(push_seq)}

-- name: drop
{drop_sequence(pop_seq)}

-- name: drop
DROP TABLE IF EXISTS {ctl}

-- name: push
CALL {push}(:payload)

-- name: push_many
CALL {push_many}(:batch)

-- name: pop
CALL {pop}(:count)

-- name: peek
SELECT id, enqueued_at, payload FROM (
    SELECT message_id AS id, enqueued_at, payload FROM {table} WHERE reference_count = 1
    UNION ALL
    SELECT message_id, enqueued_at, payload FROM {overflow}
) AS m
ORDER BY id LIMIT :count

-- Purge empties the ring as a set, holding the capacity gate (the {ctl} row, FOR UPDATE, so no
-- push or pop is half done): every message in a slot or the overflow table goes, parked
-- numbers are dropped and the pop sequence catches up with the push sequence. Draining through
-- pop would stop at a missing number (a killed pusher's) and leave the rest.

-- name: purge
SELECT capacity FROM {ctl} WHERE one = 1 FOR UPDATE

-- name: purge
SELECT (SELECT COUNT(*) FROM {table} WHERE reference_count = 1)
     + (SELECT COUNT(*) FROM {overflow}) AS purged

-- name: purge
UPDATE {table} SET reference_count = 0, message_id = NULL, payload = NULL, enqueued_at = NULL
WHERE reference_count = 1

-- name: purge
DELETE FROM {overflow}

-- name: purge
DELETE FROM {pending}

-- name: purge
SET @qadmin_n = {next_expr(push_seq)}

-- name: purge
SET @qadmin_sql = {catch_up_sql(pop_seq)}

-- name: purge
PREPARE qadmin_catch_up FROM @qadmin_sql

-- name: purge
EXECUTE qadmin_catch_up

-- name: purge
DEALLOCATE PREPARE qadmin_catch_up

-- name: depth
-- What pops will deliver: every number pushers took that poppers have not (its message is in
-- a slot or, after a resize, in the overflow table), plus every parked number (a converted
-- backlog, a number a racing popper could not serve yet, an orphan repair parked): parked
-- numbers are below the pop sequence, so the difference of the sequences leaves them out. The
-- oldest message may be in the overflow table (a converted backlog lives only there).
SELECT GREATEST({next_expr(push_seq)} - {next_expr(pop_seq)}, 0)
           + (SELECT COUNT(*) FROM {pending}) AS depth,
       LEAST(COALESCE(m.slots, m.overflow), COALESCE(m.overflow, m.slots)) AS oldest_enqueued_at
FROM (SELECT (SELECT MIN(enqueued_at) FROM {table} WHERE reference_count = 1) AS slots,
             (SELECT MIN(enqueued_at) FROM {overflow}) AS overflow) AS m

-- name: counters
SELECT {next_expr(push_seq)} AS enqueued_total, {next_expr(pop_seq)} AS dequeued_total

-- name: ring_state
-- The sequences first, into variables: the slot ranges below are then constants, which the
-- optimizer reads as primary-key ranges (correlated values would make it scan the ring).
SET @qadmin_push_next = {next_expr(push_seq)}, @qadmin_pop_next = {next_expr(pop_seq)}

-- name: ring_state
SET @qadmin_behind = LEAST({capacity}, 10000, @qadmin_pop_next),
    @qadmin_behind_from = MOD(@qadmin_pop_next - LEAST({capacity}, 10000, @qadmin_pop_next),
                              {capacity}),
    @qadmin_ahead_from = MOD(@qadmin_pop_next + 1, {capacity})

-- An orphan is a message whose number the pop sequence has passed, still in its slot and not
-- parked: its popper died before committing. Looked up in the slots of the min(capacity,
-- 10,000) numbers behind the pop sequence, as at most two key ranges (a live ring cannot pass
-- an orphan by more than a lap: its slot stops the pushes), and the slot the next push needs.
-- A pop in flight looks the same for a moment: the finding waits for the ring-stall limit.

-- name: ring_state
SELECT x.push_next,
       x.pop_next,
       (SELECT COUNT(*) FROM {pending}) AS parked,
       (SELECT TIMESTAMPDIFF(MICROSECOND, MIN(p.taken_at), UTC_TIMESTAMP(6)) / 1000000
          FROM {pending} AS p) AS oldest_parked_s,
       (SELECT COUNT(*) FROM {overflow}) AS overflow,
       x.orphan_id,
       COALESCE(o.slot = MOD(x.push_next, {capacity}), 0) AS orphan_blocks_push,
       CONCAT('INSERT INTO ', {pending.lit}, ' (message_id, taken_at) VALUES (',
              x.orphan_id, ', UTC_TIMESTAMP(6))') AS orphan_fix,
       {skip_sql(pop_seq)} AS hole_fix,
       o.slot AS orphan_slot,
       TIMESTAMPDIFF(MICROSECOND, COALESCE(o.enqueued_at, ov.enqueued_at), UTC_TIMESTAMP(6))
           / 1000000 AS orphan_age_s,
       CASE WHEN x.pop_next < x.push_next
             AND NOT EXISTS (SELECT 1 FROM {table} AS r
                              WHERE r.slot = MOD(@qadmin_pop_next, {capacity})
                                AND r.message_id = @qadmin_pop_next)
             AND NOT EXISTS (SELECT 1 FROM {overflow} AS o2
                              WHERE o2.message_id = @qadmin_pop_next)
            THEN x.pop_next END AS missing_id,
       (SELECT TIMESTAMPDIFF(MICROSECOND, MIN(r.enqueued_at), UTC_TIMESTAMP(6)) / 1000000
          FROM {table} AS r
         WHERE r.reference_count = 1 AND r.message_id > @qadmin_pop_next
           -- the slots of the next min(capacity, 10,000) numbers, as at most two key ranges:
           -- a killed batch push leaves up to 10,000 holes in a row (qadmin's batch limit)
           AND (r.slot BETWEEN @qadmin_ahead_from
                           AND LEAST(@qadmin_ahead_from + LEAST({capacity}, 10000) - 1,
                                     {capacity} - 1)
                OR r.slot <= @qadmin_ahead_from + LEAST({capacity}, 10000) - 1 - {capacity}))
           AS waiting_behind_age_s
FROM (SELECT s.push_next, s.pop_next,
             LEAST(COALESCE(s.slotted, s.spilled), COALESCE(s.spilled, s.slotted)) AS orphan_id
      FROM (
      SELECT @qadmin_push_next AS push_next, @qadmin_pop_next AS pop_next,
             -- in the overflow table too (a killed popper's message there): the same window
             (SELECT MIN(v.message_id) FROM {overflow} AS v
               WHERE v.message_id BETWEEN @qadmin_pop_next - @qadmin_behind
                                      AND @qadmin_pop_next - 1
                 AND NOT EXISTS (SELECT 1 FROM {pending} AS p
                                  WHERE p.message_id = v.message_id)) AS spilled,
             (SELECT MIN(r.message_id) FROM {table} AS r
               WHERE r.reference_count = 1 AND r.message_id < @qadmin_pop_next
                 AND NOT EXISTS (SELECT 1 FROM {pending} AS p
                                  WHERE p.message_id = r.message_id)
                 AND (r.slot = MOD(@qadmin_push_next, {capacity})
                      OR (r.message_id >= @qadmin_pop_next - @qadmin_behind
                          AND (r.slot BETWEEN @qadmin_behind_from
                                          AND LEAST(@qadmin_behind_from + @qadmin_behind - 1,
                                                    {capacity} - 1)
                               OR r.slot <= @qadmin_behind_from + @qadmin_behind - 1
                                            - {capacity}))))
                 AS slotted) AS s) AS x
LEFT JOIN {table} AS o ON o.slot = MOD(x.orphan_id, {capacity}) AND o.message_id = x.orphan_id
LEFT JOIN {overflow} AS ov ON ov.message_id = x.orphan_id

-- name: repair_orphans
SELECT r.message_id AS id FROM {table} AS r
WHERE r.reference_count = 1 AND r.message_id < {next_expr(pop_seq)}
  AND NOT EXISTS (SELECT 1 FROM {pending} AS p WHERE p.message_id = r.message_id)
UNION ALL
SELECT o.message_id FROM {overflow} AS o
WHERE o.message_id < {next_expr(pop_seq)}
  AND NOT EXISTS (SELECT 1 FROM {pending} AS p WHERE p.message_id = o.message_id)
ORDER BY 1

-- name: repair_park
SET @qadmin_pop_next = {next_expr(pop_seq)}

-- name: repair_park
SELECT r.message_id AS id FROM {table} AS r
WHERE r.reference_count = 1 AND r.message_id < @qadmin_pop_next
  AND NOT EXISTS (SELECT 1 FROM {pending} AS p WHERE p.message_id = r.message_id)
UNION ALL
SELECT o.message_id FROM {overflow} AS o
WHERE o.message_id < @qadmin_pop_next
  AND NOT EXISTS (SELECT 1 FROM {pending} AS p WHERE p.message_id = o.message_id)

-- name: repair_park
INSERT IGNORE INTO {pending} (message_id, taken_at)
SELECT r.message_id, UTC_TIMESTAMP(6) FROM {table} AS r
WHERE r.reference_count = 1 AND r.message_id < @qadmin_pop_next
UNION ALL
SELECT o.message_id, UTC_TIMESTAMP(6) FROM {overflow} AS o
WHERE o.message_id < @qadmin_pop_next

-- name: repair_stale
SELECT p.message_id AS id FROM {pending} AS p
WHERE p.taken_at < UTC_TIMESTAMP(6) - INTERVAL :older_s SECOND
  AND NOT EXISTS (SELECT 1 FROM {table} AS r
                   WHERE r.slot = MOD(p.message_id, {capacity})
                     AND r.message_id = p.message_id)
  AND NOT EXISTS (SELECT 1 FROM {overflow} AS o WHERE o.message_id = p.message_id)
ORDER BY 1

-- name: repair_void
SET @qadmin_cutoff = UTC_TIMESTAMP(6) - INTERVAL :older_s SECOND

-- name: repair_void
SELECT p.message_id AS id FROM {pending} AS p
WHERE p.taken_at < @qadmin_cutoff
  AND NOT EXISTS (SELECT 1 FROM {table} AS r
                   WHERE r.slot = MOD(p.message_id, {capacity})
                     AND r.message_id = p.message_id)
  AND NOT EXISTS (SELECT 1 FROM {overflow} AS o WHERE o.message_id = p.message_id)
FOR UPDATE

-- name: repair_void
DELETE p FROM {pending} AS p
WHERE p.taken_at < @qadmin_cutoff
  AND NOT EXISTS (SELECT 1 FROM {table} AS r
                   WHERE r.slot = MOD(p.message_id, {capacity})
                     AND r.message_id = p.message_id)
  AND NOT EXISTS (SELECT 1 FROM {overflow} AS o WHERE o.message_id = p.message_id)

-- name: repair_skip
{skip_take(pop_seq)}

-- name: repair_skip
SET @qadmin_n = {skip_value(pop_seq)}

-- name: repair_skip
INSERT INTO {pending} (message_id, taken_at)
SELECT @qadmin_n, UTC_TIMESTAMP(6) FROM DUAL
WHERE EXISTS (SELECT 1 FROM {table} AS r
               WHERE r.slot = MOD(@qadmin_n, {capacity}) AND r.message_id = @qadmin_n)
   OR EXISTS (SELECT 1 FROM {overflow} AS o WHERE o.message_id = @qadmin_n)

-- name: repair_skip
SELECT @qadmin_n AS id,
       CASE WHEN ROW_COUNT() > 0 THEN 'parked' ELSE 'voided' END AS action

-- Resize (qadmin resize): one transaction holding the capacity gate. Messages leave their
-- slots for the overflow table, the slot rows are cut or extended (in chunks, so a progress
-- bar can follow), then the
-- lowest message of each new slot moves back; the rest stay in the overflow table, where pop
-- finds them by id. Sequences, parked numbers and message ids are untouched.

-- name: resize_lock
SELECT capacity FROM {ctl} WHERE one = 1 FOR UPDATE

-- name: resize_state
SELECT (SELECT COUNT(*) FROM {table} WHERE reference_count = 1)
     + (SELECT COUNT(*) FROM {overflow}) AS messages,
       (SELECT capacity FROM {ctl} WHERE one = 1) AS capacity

-- name: resize_grow
-- A chunk of up to 1,000,000 slots from 1,000 × 1,000 numbers: no recursion deeper than 1,000,
-- MySQL 8's cte_max_recursion_depth (MariaDB's max_recursive_iterations when set like it).
-- No IGNORE: the slots added cannot exist yet, and each caller adds them in one transaction
-- (see postgresql/ring.sql); IGNORE would also hide any other error as a warning.
INSERT INTO {table} (slot)
WITH RECURSIVE k (n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM k WHERE n + 1 < 1000)
SELECT :lo + a.n * 1000 + b.n FROM k AS a CROSS JOIN k AS b
WHERE a.n <= (:hi - :lo - 1) DIV 1000 AND :lo + a.n * 1000 + b.n < :hi

-- name: resize_place
UPDATE {table} AS r
JOIN (SELECT MIN(message_id) AS message_id FROM {overflow}
      GROUP BY MOD(message_id, :capacity)) AS f ON r.slot = MOD(f.message_id, :capacity)
JOIN {overflow} AS o ON o.message_id = f.message_id
SET r.message_id = o.message_id, r.enqueued_at = o.enqueued_at, r.payload = o.payload,
    r.reference_count = 1

-- name: resize_place
DELETE o FROM {overflow} AS o
JOIN {table} AS r ON r.slot = MOD(o.message_id, :capacity) AND r.message_id = o.message_id

-- name: resize_place
UPDATE {ctl} SET capacity = :capacity WHERE one = 1

-- name: head
-- The dequeue's head, read-only (qadmin explain): the pop's own WHERE / ORDER BY for one
-- message, taking no row lock.
SELECT message_id FROM {table}
WHERE slot = MOD({next_expr(pop_seq)}, (SELECT c.capacity FROM {ctl} AS c WHERE c.one = 1))
  AND message_id = {next_expr(pop_seq)}
