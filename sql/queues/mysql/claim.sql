-- Claim queue on MySQL 8 and MariaDB (article 002): pop locks the first unclaimed row with
-- SKIP LOCKED and sets processing_started_at in the same transaction (test and set); ack
-- deletes, fail records the error. claimed_session is CONNECTION_ID() of the claimer.
-- Dead letters: fail appends each attempt's error to errors (a JSON array of objects with
-- attempt, error and at); the fail that records attempt max_attempts (read from the catalog
-- entry's options on every call) moves the message to the queue's _dead table in the same
-- transaction. Redrive moves it back as a new delivery: a new id at the tail (so no attempt
-- token of the old id can match it), attempts reset, enqueued_at and errors kept.
-- extends: queues/mysql/basic.sql (its messages go in as a basic queue's do: push, push_many, purge and counters come from there)
-- extends: queues/common/claim.sql (the statements it shares with other engines)

-- name: create
CREATE TABLE {table} (
    id                    BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    enqueued_at           DATETIME(6) NOT NULL,
    processing_started_at DATETIME(6) NULL,
    claimed_by            VARCHAR(255) NULL,
    claimed_session       BIGINT NULL,
    attempts              INT NOT NULL DEFAULT 0,
    last_error            TEXT NULL,
    failed_at             DATETIME(6) NULL,
    errors                LONGTEXT NULL,
    payload               LONGBLOB NOT NULL,
    KEY {pop_idx.bare} (processing_started_at, id)
) ENGINE=InnoDB

-- name: create
CREATE TABLE {dead} (
    id          BIGINT NOT NULL PRIMARY KEY,
    enqueued_at DATETIME(6) NOT NULL,
    attempts    INT NOT NULL,
    last_error  TEXT NULL,
    errors      LONGTEXT NULL,
    died_at     DATETIME(6) NOT NULL,
    payload     LONGBLOB NOT NULL,
    KEY {dead_idx.bare} (died_at)
) ENGINE=InnoDB

-- name: create
{push_row()}

-- name: create
{claim_pop()}

-- name: create
-- Fencing: the _fenced procedures take p_attempt, the attempt number pop returned (NULL =
-- unfenced), and act only while the row's attempts still equal it, so a consumer whose claim
-- went stale and was requeued and claimed again cannot ack or fail the new claim. Procedures
-- have no default arguments here, so {ack} and {fail} keep their signatures (existing callers)
-- and call these unfenced.
CREATE PROCEDURE {ack_fenced}(IN p_id BIGINT, IN p_attempt INT)
BEGIN
    DELETE FROM {table}
    WHERE id = p_id AND processing_started_at IS NOT NULL
      AND (p_attempt IS NULL OR attempts = p_attempt);
    IF ROW_COUNT() > 0 THEN
        SELECT p_id AS id;
    END IF;
END

-- name: create
CREATE PROCEDURE {ack}(IN p_id BIGINT)
BEGIN
    CALL {ack_fenced}(p_id, NULL);
END

-- name: create
CREATE PROCEDURE {fail_fenced}(
    IN p_id BIGINT, IN p_error LONGTEXT, IN p_retry BOOLEAN, IN p_attempt INT)
BEGIN
    {txn_declare()};
    DECLARE v_attempts INT;
    DECLARE v_max INT;
    DECLARE v_dead INT DEFAULT 0;
    {txn_handler()};
    -- LONGTEXT: a TEXT parameter refuses 64 KiB and more. Cut to {error_chars} characters, then
    -- "... (truncated, N chars)" (kinds.ERROR_CHARS).
    IF CHAR_LENGTH(p_error) > {error_chars} THEN
        SET p_error = CONCAT(LEFT(p_error, {error_chars}), '... (truncated, ',
                             CHAR_LENGTH(p_error), ' chars)');
    END IF;
    {txn_begin()};
    -- One transaction: in autocommit another consumer could claim and ack the released row
    -- between the UPDATE and the SELECT, and the release would report nothing.
    UPDATE {table}
    SET last_error = p_error,
        failed_at = UTC_TIMESTAMP(6),
        -- The first error and the latest: element 1 goes once {errors_kept} are kept.
        errors = JSON_ARRAY_APPEND(
            IF(JSON_LENGTH(COALESCE(errors, JSON_ARRAY())) >= {errors_kept},
               JSON_REMOVE(errors, '$[1]'), COALESCE(errors, JSON_ARRAY())),
            '$', JSON_OBJECT('attempt', attempts, 'error', p_error, 'at', UTC_TIMESTAMP(6))),
        processing_started_at = IF(p_retry, NULL, processing_started_at),
        claimed_by = IF(p_retry, NULL, claimed_by),
        claimed_session = IF(p_retry, NULL, claimed_session)
    WHERE id = p_id AND processing_started_at IS NOT NULL
      AND (p_attempt IS NULL OR attempts = p_attempt);
    IF ROW_COUNT() > 0 THEN
        SELECT attempts INTO v_attempts FROM {table} WHERE id = p_id;
        SELECT CAST(JSON_UNQUOTE(JSON_EXTRACT(options, '$.max_attempts')) AS SIGNED)
          INTO v_max FROM {catalog} WHERE name = {table.bare_lit};
        IF v_attempts >= v_max THEN
            INSERT INTO {dead} (id, enqueued_at, attempts, last_error, errors, died_at, payload)
            SELECT id, enqueued_at, attempts, last_error, errors, UTC_TIMESTAMP(6), payload
            FROM {table} WHERE id = p_id;
            DELETE FROM {table} WHERE id = p_id;
            SET v_dead = 1;
        END IF;
        SELECT p_id AS id, v_attempts AS attempts, v_dead AS dead;
    END IF;
    {txn_end()};
END

-- name: create
CREATE PROCEDURE {fail}(IN p_id BIGINT, IN p_error LONGTEXT, IN p_retry BOOLEAN)
BEGIN
    CALL {fail_fenced}(p_id, p_error, p_retry, NULL);
END

-- name: create
{push_many_rows()}

-- name: drop
DROP PROCEDURE IF EXISTS {push_many}

-- name: drop
DROP PROCEDURE IF EXISTS {fail}

-- name: drop
DROP PROCEDURE IF EXISTS {fail_fenced}

-- name: drop
DROP PROCEDURE IF EXISTS {ack_fenced}

-- name: drop
DROP PROCEDURE IF EXISTS {ack}

-- name: drop
DROP PROCEDURE IF EXISTS {pop}

-- name: drop
DROP PROCEDURE IF EXISTS {push}

-- name: drop
DROP TABLE IF EXISTS {dead}

-- name: drop
DROP TABLE IF EXISTS {table}

-- name: pop
CALL {pop}(:count, :worker)

-- name: ack
CALL {ack}(:id)

-- name: fail
CALL {fail}(:id, :error, :retry)

-- name: ack_fenced
CALL {ack_fenced}(:id, :attempt)

-- name: fail_fenced
CALL {fail_fenced}(:id, :error, :retry, :attempt)

-- name: claims
SELECT id, processing_started_at, claimed_by, CAST(claimed_session AS CHAR) AS claimed_session,
       attempts, last_error,
       TIMESTAMPDIFF(MICROSECOND, processing_started_at, UTC_TIMESTAMP(6)) / 1000000
           AS claimed_for_s
FROM {table}
WHERE processing_started_at IS NOT NULL
ORDER BY processing_started_at
LIMIT :limit

-- name: requeue
-- A stale claim at its last allowed attempt (max_attempts) is a message that killed its
-- consumer every time (it never reached fail): it moves to the dead table with an error entry
-- saying so, instead of being released forever; the rest are released (one transaction).
-- The stale claims are locked first with SKIP LOCKED and their ids kept in @qadmin_ids: a
-- row locked by its consumer's ack or fail in progress (or a transaction left open) is
-- skipped, and the statements after touch only the ids taken, so one such row never blocks
-- the rest; the next requeue takes it if it is still stale.
-- With :include_live = 0 (requeue --skip-live), a claim whose session is still connected is
-- neither (live_sessions and claim_gone in fragments.sql); 1 judges it by its age alone.
SET @qadmin_cutoff = UTC_TIMESTAMP(6) - INTERVAL :stale_s SECOND

-- name: requeue
{live_sessions()}

-- name: requeue
SET @qadmin_max = (SELECT CAST(JSON_UNQUOTE(JSON_EXTRACT(options, '$.max_attempts')) AS SIGNED)
                   FROM {catalog} WHERE name = {table.bare_lit})

-- name: requeue
SELECT COALESCE(JSON_ARRAYAGG(s.id), JSON_ARRAY()) INTO @qadmin_ids
FROM (SELECT id FROM {table}
      WHERE processing_started_at < @qadmin_cutoff AND {claim_gone()}
      FOR UPDATE SKIP LOCKED) AS s

-- name: requeue
SELECT q.id, COALESCE(q.attempts >= @qadmin_max, 0) AS dead
FROM {taken_rows()}

-- name: requeue
INSERT INTO {dead} (id, enqueued_at, attempts, last_error, errors, died_at, payload)
SELECT q.id, q.enqueued_at, q.attempts,
       CONCAT('claim went stale after attempt ', q.attempts, ' (consumer lost)'),
       JSON_ARRAY_APPEND(
           IF(JSON_LENGTH(COALESCE(q.errors, JSON_ARRAY())) >= {errors_kept},
              JSON_REMOVE(q.errors, '$[1]'), COALESCE(q.errors, JSON_ARRAY())),
           '$', JSON_OBJECT(
               'attempt', q.attempts,
               'error', CONCAT('claim went stale after attempt ', q.attempts, ' (consumer lost)'),
               'at', UTC_TIMESTAMP(6))),
       UTC_TIMESTAMP(6), q.payload
FROM {taken_rows()}
WHERE q.attempts >= @qadmin_max

-- name: requeue
DELETE q FROM {taken_rows()}
WHERE q.attempts >= @qadmin_max

-- name: requeue
UPDATE {taken_rows()}
SET q.processing_started_at = NULL, q.claimed_by = NULL, q.claimed_session = NULL

-- name: dead_depth
-- Bounded like inspect's other counts: at most :limit rows are counted.
SELECT (SELECT count(*) FROM (SELECT 1 FROM {dead} LIMIT :limit) AS s) AS dead,
       (SELECT TIMESTAMPDIFF(MICROSECOND, died_at, UTC_TIMESTAMP(6)) / 1000000
          FROM {dead} ORDER BY died_at LIMIT 1) AS oldest_dead_s

-- name: dead_list
-- The dead messages, first to die first, at most count; the filters of dead, discard and
-- redrive, each on when its flag is 1: died more than older_s seconds ago, within the last
-- newer_s seconds, the error it died with matching the LIKE pattern ('!' escapes;
-- case-insensitive). Flags, not NULLs: every parameter keeps one type.
SELECT d.id, d.enqueued_at, d.attempts, d.died_at, d.errors,
       SUBSTRING(d.payload, 1, :preview) AS payload
FROM {dead} AS d
WHERE 1 = 1
  AND (:has_older = 0 OR d.died_at < UTC_TIMESTAMP(6) - INTERVAL :older_s SECOND)
  AND (:has_newer = 0 OR d.died_at >= UTC_TIMESTAMP(6) - INTERVAL :newer_s SECOND)
  AND (:has_error = 0 OR LOWER(d.last_error) LIKE LOWER(:pattern) ESCAPE '!')
ORDER BY d.died_at, d.id LIMIT :count

-- name: dead_match
-- The dead messages a filter picks, in id order after one id and up to another (the highest
-- when a run began: deaths during it wait for the next run), bounded. Read without
-- locks: a dead row never changes, so a mover locks each id by its key and finds it still
-- the same, or gone (another redrive or discard took it).
SELECT d.id FROM {dead} AS d
WHERE d.id > :after AND d.id <= :upto
  AND (:has_older = 0 OR d.died_at < UTC_TIMESTAMP(6) - INTERVAL :older_s SECOND)
  AND (:has_newer = 0 OR d.died_at >= UTC_TIMESTAMP(6) - INTERVAL :newer_s SECOND)
  AND (:has_error = 0 OR LOWER(d.last_error) LIKE LOWER(:pattern) ESCAPE '!')
ORDER BY d.id LIMIT :limit

-- name: dead_one
-- One dead message whole (dead --id): its error history and payload.
SELECT id, enqueued_at, attempts, died_at, last_error, errors, payload
FROM {dead} WHERE id = :id

-- name: redrive_one
INSERT INTO {table} (enqueued_at, attempts, last_error, errors, payload)
SELECT enqueued_at, 0, last_error, errors, payload FROM {dead} WHERE id = :id

-- name: redrive_one
SELECT LAST_INSERT_ID() AS new_id

-- name: redrive_one
DELETE FROM {dead} WHERE id = :id

-- name: head_index
-- The index that makes the head a seek in dequeue order (explain's fix when the plan sorts
-- or scans); create makes it (or the primary key serves).
ALTER TABLE {table} ADD INDEX {pop_idx.bare} (processing_started_at, id), ALGORITHM=INPLACE, LOCK=NONE
