-- Watermark for fifo and claim queues on PostgreSQL (article 004), laid over basic.sql or
-- claim.sql. The dequeue range-scans from {wm}.wm instead of from the start of the index, so
-- it does not walk through the dead index entries that a long snapshot keeps from being cleaned.
--
-- Safety: identity values are handed out before commit, so a producer can commit id 41 after
-- id 42 has been dequeued. A watermark moved past 41 would strand it. The advance is therefore
-- in two phases. Phase 1 reads a candidate (the lowest id visible now, or the next identity
-- value when the queue is empty) and only then records the transactions that hold
-- RowExclusiveLock on {table}. Every INSERT (and COPY) takes that mode while it is parsed or
-- its plan is checked, before its identity default is evaluated, even when the transaction
-- already holds a stronger lock, and keeps it to commit; so every transaction that could still
-- commit an id below the candidate is in that set, and VACUUM, ANALYZE or CREATE INDEX (which
-- hold other modes and write no rows) are not. Phase 2, on a later advance in
-- READ COMMITTED, moves the watermark to the candidate (or lower, to any row that committed
-- late: a fresh statement snapshot sees it) once none of them is running. Transactions that
-- never wrote {table} (readers, writers of other tables or databases) do not hold it back; an
-- open producer does. No grace period: the id is taken after the lock, never before it.
-- A REPEATABLE READ or SERIALIZABLE caller only records candidates: its old snapshot could
-- miss a late row, so the move is left to the next READ COMMITTED call.
-- Rows below the watermark (a watermark set too high by hand, or an id taken with nextval on
-- the identity sequence outside an INSERT) are "stranded": `qadmin watermark` counts them and
-- `qadmin watermark QUEUE repair` lowers the watermark so they are served.
--
-- The dequeue does not read {wm}: under a held snapshot every advance leaves a row version
-- that cannot be pruned, and the read walked them all. It reads {wm_seq}, a copy that MVCC
-- does not version (one buffer, however old the snapshot). A sequence is not transactional,
-- so the copy is only ever a value that stays safe if the caller rolls back: the advance
-- publishes it when its transaction had written nothing before the call, and a dequeue
-- passes the lowest id it took (p_taken) when its transaction had written nothing before
-- the dequeue; a rolled-back dequeue's rows are then at or above the copy. Any other caller
-- moves {wm} only, and the next such advance publishes it. Queues created before the copy
-- existed keep their routines, which read {wm}.
-- extends: queues/common/watermark.sql (the statements it shares with other engines)

-- name: create
CREATE TABLE {wm} (
    one            boolean PRIMARY KEY DEFAULT true CHECK (one),
    wm             bigint NOT NULL DEFAULT 0,
    candidate      bigint,
    candidate_writers text[],
    candidate_at   timestamptz,
    advanced_at    timestamptz
)

-- name: create
INSERT INTO {wm} (one, wm) VALUES (true, 0)

-- name: create
CREATE SEQUENCE {wm_seq} AS bigint MINVALUE 0 START WITH 0

-- name: create
CREATE FUNCTION {wm_advance}(p_to bigint DEFAULT NULL, p_taken bigint DEFAULT NULL)
RETURNS TABLE (wm bigint, candidate bigint, moved boolean)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    w      record;
    v_head bigint;
    v_new  bigint;
    v_fresh boolean := txid_current_if_assigned() IS NULL;  -- nothing of ours to roll back
BEGIN
    -- One advancer at a time; a dequeue that finds the row busy simply does not advance.
    SELECT x.wm, x.candidate, x.candidate_writers INTO w
      FROM {wm} AS x FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    v_new := w.wm;
    IF w.candidate IS NOT NULL
       AND current_setting('transaction_isolation') = 'read committed'
       AND (cardinality(w.candidate_writers) = 0 OR NOT EXISTS (
               SELECT 1 FROM pg_locks AS l
                WHERE l.virtualtransaction = ANY (w.candidate_writers))) THEN
        -- Every writer that could still hold an id below the candidate has ended: rows it
        -- committed are visible to this statement's snapshot, so the lowest live id bounds
        -- the move.
        SELECT min(t.id) INTO v_head FROM {table} AS t WHERE t.id >= w.wm;
        v_new := greatest(w.wm, least(w.candidate, coalesce(v_head, w.candidate),
                                      coalesce(p_to, w.candidate)));
        w.candidate := NULL;
    END IF;
    IF w.candidate IS NULL THEN
        -- The candidate first, then the writers: one that took an id below it before this
        -- read is either still running below (and recorded) or has committed (and is seen by
        -- phase 2's read of the head).
        SELECT min(t.id) INTO v_head FROM {table} AS t WHERE t.id >= v_new;
        v_head := coalesce(v_head, coalesce(pg_sequence_last_value(
                      pg_get_serial_sequence({table.lit}, 'id')), 0) + 1);
        UPDATE {wm} AS x
           SET wm = v_new,
               advanced_at = CASE WHEN v_new > w.wm THEN clock_timestamp() ELSE x.advanced_at END,
               candidate = v_head,
               candidate_writers = ARRAY(
                   SELECT DISTINCT l.virtualtransaction FROM pg_locks AS l
                    WHERE l.locktype = 'relation'
                      AND l.database = (SELECT d.oid FROM pg_database AS d
                                         WHERE d.datname = current_database())
                      AND l.relation = {table.lit}::regclass
                      AND l.mode = 'RowExclusiveLock'
                      AND l.pid IS DISTINCT FROM pg_backend_pid()),
               candidate_at = clock_timestamp();
        w.candidate := v_head;
    END IF;
    IF v_fresh OR p_taken IS NOT NULL THEN
        PERFORM setval({wm_seq.lit}, least(v_new, p_taken));
    END IF;
    RETURN QUERY SELECT v_new, w.candidate, v_new > w.wm;  -- no second read of the row
END
$$

-- name: drop
DROP FUNCTION IF EXISTS {wm_advance}(bigint, bigint)

-- name: drop
DROP FUNCTION IF EXISTS {wm_advance}(bigint)

-- name: drop
DROP SEQUENCE IF EXISTS {wm_seq}

-- name: drop
DROP TABLE IF EXISTS {wm}

-- name: wm_show
-- Stranded rows are looked for in the 1,000 ids below the watermark only: below them lie the
-- dead index entries a held snapshot keeps, which a walk to the bottom would read one by one.
SELECT w.wm,
       w.candidate,
       extract(epoch FROM clock_timestamp() - w.candidate_at)::float8 AS candidate_age_s,
       w.advanced_at,
       (SELECT min(t.id) FROM {table} AS t WHERE t.id >= w.wm) AS head_id,
       (SELECT count(*) FROM (SELECT 1 FROM {table} AS t WHERE t.id BETWEEN w.wm - 1000 AND w.wm - 1
                                                         LIMIT 10000) AS s)
           AS stranded,
       (SELECT min(t.id) FROM {table} AS t WHERE t.id BETWEEN w.wm - 1000 AND w.wm - 1
                                           ) AS stranded_min_id,
       (SELECT extract(epoch FROM clock_timestamp() - t.enqueued_at)::float8
          FROM {table} AS t WHERE t.id BETWEEN w.wm - 1000 AND w.wm - 1
                            ORDER BY t.id LIMIT 1) AS oldest_stranded_s
FROM {wm} AS w

-- name: wm_advance
SELECT wm, candidate, moved FROM {wm_advance}(:to)

-- name: wm_lock
SELECT wm FROM {wm} FOR UPDATE

-- name: wm_set
UPDATE {wm} SET wm = :wm, candidate = NULL, candidate_at = NULL

-- name: wm_set
-- The dequeues' copy, lowered with it (a queue created before the copy existed has none).
SELECT setval(to_regclass({wm_seq.lit}), :wm) WHERE to_regclass({wm_seq.lit}) IS NOT NULL
