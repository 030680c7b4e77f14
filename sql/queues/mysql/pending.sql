-- Pending queue on MySQL 8 and MariaDB (article 000): due times are UTC DATETIME(6); pop takes
-- due messages earliest first, skipping rows other consumers hold.

-- name: create
CREATE TABLE {table} (
    id          BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    due_at      DATETIME(6) NOT NULL,
    enqueued_at DATETIME(6) NOT NULL,
    payload     LONGBLOB NOT NULL,
    KEY {pop_idx.bare} (due_at, id)
) ENGINE=InnoDB

-- name: create
CREATE PROCEDURE {push}(IN p_payload LONGBLOB, IN p_due_at DATETIME(6))
BEGIN
    DECLARE v_at DATETIME(6) DEFAULT UTC_TIMESTAMP(6);
    DECLARE v_due DATETIME(6) DEFAULT COALESCE(p_due_at, v_at);
    INSERT INTO {table} (due_at, enqueued_at, payload) VALUES (v_due, v_at, p_payload);
    SELECT LAST_INSERT_ID() AS id, v_at AS enqueued_at, v_due AS due_at;
END

-- name: create
CREATE PROCEDURE {pop}(IN p_count INT)
BEGIN
    {txn_declare()};
    DECLARE v_id BIGINT;
    DECLARE v_at DATETIME(6);
    DECLARE v_due DATETIME(6);
    DECLARE v_payload LONGBLOB;
    DECLARE v_done INT DEFAULT 0;
    DECLARE next_rows CURSOR FOR
        SELECT id, enqueued_at, due_at, payload FROM {table}
        WHERE due_at <= UTC_TIMESTAMP(6)
        ORDER BY due_at, id LIMIT p_count FOR UPDATE SKIP LOCKED;
    {txn_handler()};
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = 1;
    {txn_begin()};
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

-- name: drop
DROP PROCEDURE IF EXISTS {pop}

-- name: drop
DROP PROCEDURE IF EXISTS {push}

-- name: drop
DROP TABLE IF EXISTS {table}

-- name: push
CALL {push}(:payload, :due_at)

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
        CALL {push}(FROM_BASE64(j.p), :due_at);
    END FOR;
END

-- name: pop
CALL {pop}(:count)

-- name: peek
SELECT id, enqueued_at, due_at, payload FROM {table} ORDER BY due_at, id LIMIT :count

-- name: purge
SELECT count(*) AS purged FROM {table} FOR UPDATE

-- name: purge
DELETE FROM {table}

-- name: depth
SELECT count(*) AS depth, min(enqueued_at) AS oldest_enqueued_at FROM {table}

-- name: oldest
SELECT enqueued_at AS oldest_enqueued_at FROM {table} ORDER BY id LIMIT 1

-- name: due
SELECT count(*) AS due FROM (
    SELECT 1 FROM {table} WHERE due_at <= UTC_TIMESTAMP(6) LIMIT 10000) AS d

-- name: counters
SELECT AUTO_INCREMENT - 1 AS enqueued_total FROM information_schema.TABLES
WHERE TABLE_SCHEMA = :schema AND TABLE_NAME = :table
