-- The fifo dequeue with a watermark on PostgreSQL (see watermark.sql): the same DELETE ...
-- RETURNING as basic.sql, but the head is looked for from the watermark up, and a dequeue that
-- takes an id that is a multiple of {wm_every} tries to advance the watermark.

-- name: create
CREATE OR REPLACE FUNCTION {pop}(p_count integer DEFAULT 1)
RETURNS TABLE (id bigint, enqueued_at timestamptz, payload bytea)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_wm   bigint;
    v_tick boolean := false;
    v_low  bigint;  -- the lowest id taken, passed on when nothing else of ours can roll back
    v_fresh boolean := txid_current_if_assigned() IS NULL;
    r      record;
BEGIN
    IF {paused()} THEN
        RETURN;  -- paused (qadmin pause): take nothing
    END IF;
    SELECT s.last_value INTO v_wm FROM {wm_seq} AS s;
    FOR r IN
        DELETE FROM {table} AS q
        WHERE q.id IN (
            SELECT s.id FROM {table} AS s WHERE s.id >= v_wm
            ORDER BY s.id LIMIT p_count FOR UPDATE SKIP LOCKED)
        RETURNING q.id, q.enqueued_at, q.payload
    LOOP
        id := r.id; enqueued_at := r.enqueued_at; payload := r.payload;
        RETURN NEXT;
        v_tick := v_tick OR r.id % {wm_every} = 0;
        v_low := least(v_low, r.id);
    END LOOP;
    IF v_tick THEN
        PERFORM {wm_advance}(NULL, CASE WHEN v_fresh THEN v_low END);
    END IF;
END
$$

-- name: head
-- The dequeue's head, read-only (qadmin explain): the pop's own WHERE / ORDER BY for one
-- message, taking no row lock.
SELECT s.id FROM {table} AS s WHERE s.id >= (SELECT w.wm FROM {wm} AS w)
ORDER BY s.id LIMIT 1
