-- The fifo dequeue with a watermark on MySQL 8 and MariaDB (see watermark.sql): basic.sql's
-- cursor pop, looking for the head from the watermark up; taking an id that is a multiple of
-- {wm_every} tries to advance the watermark.

-- name: create
DROP PROCEDURE IF EXISTS {pop}

-- name: create
CREATE PROCEDURE {pop}(IN p_count INT)
BEGIN
    {pop_vars()}
    DECLARE v_tick INT DEFAULT 0;
    DECLARE v_wm BIGINT;
    DECLARE next_rows CURSOR FOR
        SELECT id, enqueued_at, payload FROM {table} WHERE id >= v_wm
        ORDER BY id LIMIT p_count FOR UPDATE SKIP LOCKED;
    {cursor_begin()}
    SELECT wm INTO v_wm FROM {wm} WHERE one = 1;
    {delete_each()}
        {wm_tick_end()}

-- name: head
-- The dequeue's head, read-only (qadmin explain): the pop's own WHERE / ORDER BY for one
-- message, taking no row lock.
SELECT id FROM {table} WHERE id >= (SELECT wm FROM {wm} WHERE one = 1) ORDER BY id LIMIT 1
