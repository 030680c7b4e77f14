-- Watermark for fifo and claim queues on PostgreSQL (article 004), laid over basic.sql or
-- claim.sql. The dequeue range-scans from {wm}.wm instead of from the start of the index, so
-- it does not walk through the dead index entries that a long snapshot keeps from being cleaned.
--
-- Safety: identity values are handed out before commit, so a producer can commit id 41 after
-- id 42 has been dequeued. A watermark moved past 41 would strand it. The advance is therefore
-- in two phases. Phase 1 records a candidate: the lowest id visible now (or the next identity
-- value when the queue is empty) and the snapshot's xmax. Phase 2, on a later advance, moves
-- the watermark to the candidate (or lower, to any row that committed late) only once every
-- transaction that was running at phase 1 has ended (pg_snapshot_xmin of a fresh snapshot has
-- passed the recorded xmax) and at least 0.5 s has passed (a producer takes its identity value
-- a moment before it is given a transaction id). A snapshot held by a read-only transaction
-- has no transaction id and does not hold the watermark back; an open producer does.
-- Rows below the watermark (a watermark set too high by hand, or a producer stalled between
-- nextval and its insert for longer than the grace) are "stranded": `qadmin watermark` counts
-- them and `qadmin watermark QUEUE repair` lowers the watermark so they are served.

-- name: create
CREATE TABLE {wm} (
    one            boolean PRIMARY KEY DEFAULT true CHECK (one),
    wm             bigint NOT NULL DEFAULT 0,
    candidate      bigint,
    candidate_xmax xid8,
    candidate_at   timestamptz,
    advanced_at    timestamptz
)

-- name: create
INSERT INTO {wm} (one, wm) VALUES (true, 0)

-- name: create
CREATE FUNCTION {wm_advance}(p_to bigint DEFAULT NULL)
RETURNS TABLE (wm bigint, candidate bigint, moved boolean)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    w      record;
    v_head bigint;
    v_new  bigint;
BEGIN
    -- One advancer at a time; a dequeue that finds the row busy simply does not advance.
    SELECT x.wm, x.candidate, x.candidate_xmax, x.candidate_at INTO w
      FROM {wm} AS x FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    v_new := w.wm;
    IF w.candidate IS NOT NULL
       AND w.candidate_at < clock_timestamp() - interval '0.5 seconds'
       AND pg_snapshot_xmin(pg_current_snapshot()) >= w.candidate_xmax THEN
        -- Every writer that could still hold an id below the candidate has ended: rows it
        -- committed are visible now, so the lowest live id bounds the move.
        SELECT min(t.id) INTO v_head FROM {table} AS t WHERE t.id >= w.wm;
        v_new := greatest(w.wm, least(w.candidate, coalesce(v_head, w.candidate),
                                      coalesce(p_to, w.candidate)));
        w.candidate := NULL;
    END IF;
    IF w.candidate IS NULL THEN
        SELECT min(t.id) INTO v_head FROM {table} AS t WHERE t.id >= v_new;
        UPDATE {wm} AS x
           SET wm = v_new,
               advanced_at = CASE WHEN v_new > w.wm THEN clock_timestamp() ELSE x.advanced_at END,
               candidate = coalesce(v_head, coalesce(pg_sequence_last_value(
                               pg_get_serial_sequence({lit_table}, 'id')), 0) + 1),
               candidate_xmax = pg_snapshot_xmax(pg_current_snapshot()),
               candidate_at = clock_timestamp();
    END IF;
    RETURN QUERY SELECT x.wm, x.candidate, x.wm > w.wm FROM {wm} AS x;
END
$$

-- name: drop
DROP FUNCTION IF EXISTS {wm_advance}(bigint)

-- name: drop
DROP TABLE IF EXISTS {wm}

-- name: wm_show
SELECT w.wm,
       w.candidate,
       extract(epoch FROM clock_timestamp() - w.candidate_at)::float8 AS candidate_age_s,
       w.advanced_at,
       (SELECT min(t.id) FROM {table} AS t WHERE t.id >= w.wm) AS head_id,
       (SELECT count(*) FROM (SELECT 1 FROM {table} AS t WHERE t.id < w.wm LIMIT 10000) AS s)
           AS stranded,
       (SELECT min(t.id) FROM {table} AS t WHERE t.id < w.wm) AS stranded_min_id,
       (SELECT extract(epoch FROM clock_timestamp() - t.enqueued_at)::float8
          FROM {table} AS t WHERE t.id < w.wm ORDER BY t.id LIMIT 1) AS oldest_stranded_s
FROM {wm} AS w

-- name: wm_advance
SELECT wm, candidate, moved FROM {wm_advance}(:to)

-- name: wm_lock
SELECT wm FROM {wm} FOR UPDATE

-- name: wm_stranded
SELECT min(t.id) AS stranded_min_id FROM {table} AS t WHERE t.id < :wm

-- name: wm_set
UPDATE {wm} SET wm = :wm, candidate = NULL, candidate_xmax = NULL, candidate_at = NULL
