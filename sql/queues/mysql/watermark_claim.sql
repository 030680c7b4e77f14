-- The claim dequeue with a watermark on MySQL 8 and MariaDB (see watermark.sql). Claimed rows
-- stay until acked, so the watermark never passes a claim in progress and a stale claim that
-- `qadmin requeue` releases is served again.

-- name: create
DROP PROCEDURE IF EXISTS {pop}

-- name: create
CREATE PROCEDURE {pop}(IN p_count INT, IN p_worker VARCHAR(255))
BEGIN
    {pop_vars()}
    DECLARE v_attempts INT;
    DECLARE v_tick INT DEFAULT 0;
    DECLARE v_wm BIGINT;
    DECLARE next_rows CURSOR FOR
        SELECT id, enqueued_at, attempts, payload FROM {table}
        WHERE processing_started_at IS NULL AND id >= v_wm
        ORDER BY id LIMIT p_count FOR UPDATE SKIP LOCKED;
    {cursor_begin()}
    SELECT wm INTO v_wm FROM {wm} WHERE one = 1;
    {claim_each()}
        {wm_tick_end()}

-- name: head
-- The dequeue's head, read-only (qadmin explain): the pop's own WHERE / ORDER BY for one
-- message, taking no row lock.
SELECT id FROM {table}
WHERE processing_started_at IS NULL AND id >= (SELECT wm FROM {wm} WHERE one = 1)
ORDER BY id LIMIT 1
