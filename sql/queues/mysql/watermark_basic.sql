-- The fifo dequeue with a watermark on MySQL 8 and MariaDB (see watermark.sql): basic.sql's
-- cursor pop, looking for the head from the watermark up; taking an id that is a multiple of
-- {wm_every} tries to advance the watermark.

-- name: create
DROP PROCEDURE IF EXISTS {pop}

-- name: create
CREATE PROCEDURE {pop}(IN p_count INT)
BEGIN
    {txn_declare()};
    DECLARE v_id BIGINT;
    DECLARE v_at DATETIME(6);
    DECLARE v_payload LONGBLOB;
    DECLARE v_done INT DEFAULT 0;
    DECLARE v_tick INT DEFAULT 0;
    DECLARE v_wm BIGINT;
    DECLARE next_rows CURSOR FOR
        SELECT id, enqueued_at, payload FROM {table} WHERE id >= v_wm
        ORDER BY id LIMIT p_count FOR UPDATE SKIP LOCKED;
    {txn_handler()};
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = 1;
    IF {paused()} THEN
        SET p_count = 0;  -- paused (qadmin pause): take nothing
    END IF;
    {txn_begin()};
    SELECT wm INTO v_wm FROM {wm} WHERE one = 1;
    OPEN next_rows;
    take: LOOP
        FETCH next_rows INTO v_id, v_at, v_payload;
        IF v_done = 1 THEN
            LEAVE take;
        END IF;
        DELETE FROM {table} WHERE id = v_id;
        SELECT v_id AS id, v_at AS enqueued_at, v_payload AS payload;
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

-- name: head
-- The dequeue's head, read-only (qadmin explain): the pop's own WHERE / ORDER BY for one
-- message, taking no row lock.
SELECT id FROM {table} WHERE id >= (SELECT wm FROM {wm} WHERE one = 1) ORDER BY id LIMIT 1
