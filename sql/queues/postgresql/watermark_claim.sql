-- The claim dequeue with a watermark on PostgreSQL (see watermark.sql): claims from the
-- watermark up. Claimed rows stay in the table until acked, so the watermark never passes a
-- claim in progress and a stale claim that `qadmin requeue` releases is served again.

-- name: create
CREATE OR REPLACE FUNCTION {pop}(p_count integer DEFAULT 1, p_worker text DEFAULT NULL)
RETURNS TABLE (id bigint, enqueued_at timestamptz, attempts integer, payload bytea)
LANGUAGE plpgsql AS $$
{wm_pop_begin()}
        WITH d AS (
            UPDATE {table} AS q
            {claim_set()}
            WHERE q.id = ANY (ARRAY(
                SELECT s.id FROM {table} AS s
                WHERE s.processing_started_at IS NULL AND s.id >= v_wm
                ORDER BY s.id LIMIT greatest(p_count, 0) FOR UPDATE SKIP LOCKED))
            RETURNING q.id, q.enqueued_at, q.attempts, q.payload)
        SELECT d.id, d.enqueued_at, d.attempts, d.payload FROM d ORDER BY d.id
    LOOP
        id := r.id; enqueued_at := r.enqueued_at; attempts := r.attempts; payload := r.payload;
        RETURN NEXT;
        {wm_pop_end()}

-- name: head
-- The dequeue's head, read-only (qadmin explain): the pop's own WHERE / ORDER BY for one
-- message, taking no row lock.
SELECT s.id FROM {table} AS s
WHERE s.processing_started_at IS NULL AND s.id >= (SELECT w.wm FROM {wm} AS w)
ORDER BY s.id LIMIT 1
