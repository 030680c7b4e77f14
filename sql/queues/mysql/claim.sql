-- Claim queue on MySQL 8 and MariaDB (article 002): pop locks the first unclaimed row with
-- SKIP LOCKED and sets processing_started_at in the same transaction (test and set); ack
-- deletes, fail records the error. claimed_session is CONNECTION_ID() of the claimer.

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
    payload               LONGBLOB NOT NULL,
    KEY {pop_idx.bare} (processing_started_at, id)
) ENGINE=InnoDB

-- name: create
CREATE PROCEDURE {push}(IN p_payload LONGBLOB)
BEGIN
    DECLARE v_at DATETIME(6) DEFAULT UTC_TIMESTAMP(6);
    INSERT INTO {table} (enqueued_at, payload) VALUES (v_at, p_payload);
    SELECT LAST_INSERT_ID() AS id, v_at AS enqueued_at;
END

-- name: create
CREATE PROCEDURE {pop}(IN p_count INT, IN p_worker VARCHAR(255))
BEGIN
    {txn_declare()};
    DECLARE v_id BIGINT;
    DECLARE v_at DATETIME(6);
    DECLARE v_attempts INT;
    DECLARE v_payload LONGBLOB;
    DECLARE v_done INT DEFAULT 0;
    DECLARE next_rows CURSOR FOR
        SELECT id, enqueued_at, attempts, payload FROM {table}
        WHERE processing_started_at IS NULL
        ORDER BY id LIMIT p_count FOR UPDATE SKIP LOCKED;
    {txn_handler()};
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = 1;
    {txn_begin()};
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
    END LOOP;
    CLOSE next_rows;
    {txn_end()};
END

-- name: create
CREATE PROCEDURE {ack}(IN p_id BIGINT)
BEGIN
    DELETE FROM {table} WHERE id = p_id AND processing_started_at IS NOT NULL;
    IF ROW_COUNT() > 0 THEN
        SELECT p_id AS id;
    END IF;
END

-- name: create
CREATE PROCEDURE {fail}(IN p_id BIGINT, IN p_error TEXT, IN p_retry BOOLEAN)
BEGIN
    {txn_declare()};
    {txn_handler()};
    {txn_begin()};
    -- One transaction: in autocommit another consumer could claim and ack the released row
    -- between the UPDATE and the SELECT, and the release would report nothing.
    UPDATE {table}
    SET last_error = p_error,
        failed_at = UTC_TIMESTAMP(6),
        processing_started_at = IF(p_retry, NULL, processing_started_at),
        claimed_by = IF(p_retry, NULL, claimed_by),
        claimed_session = IF(p_retry, NULL, claimed_session)
    WHERE id = p_id AND processing_started_at IS NOT NULL;
    IF ROW_COUNT() > 0 THEN
        SELECT id, attempts FROM {table} WHERE id = p_id;
    END IF;
    {txn_end()};
END

-- name: drop
DROP PROCEDURE IF EXISTS {fail}

-- name: drop
DROP PROCEDURE IF EXISTS {ack}

-- name: drop
DROP PROCEDURE IF EXISTS {pop}

-- name: drop
DROP PROCEDURE IF EXISTS {push}

-- name: drop
DROP TABLE IF EXISTS {table}

-- name: push
CALL {push}(:payload)

-- name: push_batch
-- Many messages in one round trip (push --lines, --file) on MariaDB: an anonymous block calls
-- the push procedure for each element of one JSON array of base64 payloads, in array order, so
-- a batch takes the procedure's path (a convert's gate too); each call returns its result set.
-- MySQL 8 has no anonymous blocks: there qadmin does not use this section (MysqlEngine) and
-- pushes a batch one CALL at a time in one transaction.
BEGIN NOT ATOMIC
    FOR j IN (SELECT t.p FROM JSON_TABLE(:batch, '$[*]' COLUMNS (n FOR ORDINALITY,
                                                  p LONGTEXT PATH '$')) AS t ORDER BY t.n)
    DO
        CALL {push}(FROM_BASE64(j.p));
    END FOR;
END

-- name: pop
CALL {pop}(:count, :worker)

-- name: ack
CALL {ack}(:id)

-- name: fail
CALL {fail}(:id, :error, :retry)

-- name: peek
SELECT id, enqueued_at, processing_started_at, claimed_by, attempts, last_error, payload
FROM {table} ORDER BY id LIMIT :count

-- name: purge
SELECT count(*) AS purged FROM {table} FOR UPDATE

-- name: purge
DELETE FROM {table}

-- name: depth
SELECT count(*) AS depth, min(enqueued_at) AS oldest_enqueued_at FROM {table}

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
SET @qadmin_cutoff = UTC_TIMESTAMP(6) - INTERVAL :stale_s SECOND

-- name: requeue
SELECT id FROM {table} WHERE processing_started_at < @qadmin_cutoff FOR UPDATE

-- name: requeue
UPDATE {table}
SET processing_started_at = NULL, claimed_by = NULL, claimed_session = NULL
WHERE processing_started_at < @qadmin_cutoff

-- name: oldest
SELECT enqueued_at AS oldest_enqueued_at FROM {table} ORDER BY id LIMIT 1

-- name: counters
SELECT AUTO_INCREMENT - 1 AS enqueued_total FROM information_schema.TABLES
WHERE TABLE_SCHEMA = :schema AND TABLE_NAME = :table
