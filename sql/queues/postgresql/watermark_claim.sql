-- The claim dequeue with a watermark on PostgreSQL (see watermark.sql): claims from the
-- watermark up. Claimed rows stay in the table until acked, so the watermark never passes a
-- claim in progress and a stale claim that `qadmin requeue` releases is served again.

-- name: create
CREATE OR REPLACE FUNCTION {pop}(p_count integer DEFAULT 1, p_worker text DEFAULT NULL)
RETURNS TABLE (id bigint, enqueued_at timestamptz, attempts integer, payload bytea)
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
        UPDATE {table} AS q
        SET processing_started_at = clock_timestamp(),
            claimed_by = p_worker,
            claimed_session = pg_backend_pid(),
            attempts = q.attempts + 1
        WHERE q.id IN (
            SELECT s.id FROM {table} AS s
            WHERE s.processing_started_at IS NULL AND s.id >= v_wm
            ORDER BY s.id LIMIT p_count FOR UPDATE SKIP LOCKED)
        RETURNING q.id, q.enqueued_at, q.attempts, q.payload
    LOOP
        id := r.id; enqueued_at := r.enqueued_at; attempts := r.attempts; payload := r.payload;
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
SELECT s.id FROM {table} AS s
WHERE s.processing_started_at IS NULL AND s.id >= (SELECT w.wm FROM {wm} AS w)
ORDER BY s.id LIMIT 1
