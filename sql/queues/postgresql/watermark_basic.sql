-- The fifo dequeue with a watermark on PostgreSQL (see watermark.sql): the same DELETE ...
-- RETURNING as basic.sql, but the head is looked for from the watermark up, and a dequeue that
-- takes an id that is a multiple of {wm_every} tries to advance the watermark.

-- name: create
CREATE OR REPLACE FUNCTION {pop}(p_count integer DEFAULT 1)
RETURNS TABLE (id bigint, enqueued_at timestamptz, payload bytea)
LANGUAGE plpgsql AS $$
{wm_pop_begin()}
        WITH d AS (
            DELETE FROM {table} AS q
            WHERE q.id = ANY (ARRAY(
                SELECT s.id FROM {table} AS s WHERE s.id >= v_wm
                ORDER BY s.id LIMIT greatest(p_count, 0) FOR UPDATE SKIP LOCKED))
            RETURNING q.id, q.enqueued_at, q.payload)
        SELECT d.id, d.enqueued_at, d.payload FROM d ORDER BY d.id
    LOOP
        id := r.id; enqueued_at := r.enqueued_at; payload := r.payload;
        RETURN NEXT;
        {wm_pop_end()}

-- name: head
-- The dequeue's head, read-only (qadmin explain): the pop's own WHERE / ORDER BY for one
-- message, taking no row lock.
SELECT s.id FROM {table} AS s WHERE s.id >= (SELECT w.wm FROM {wm} AS w)
ORDER BY s.id LIMIT 1
