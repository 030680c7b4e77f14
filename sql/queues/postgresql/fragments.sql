-- PostgreSQL's pieces of statements that several templates share ({name()} in a template):
-- each is written once here. A fragment's text is all SQL: its comments are sent with it.
--
-- paused: true while the queue is paused (qadmin pause): its catalog entry's options carry
-- paused_at. One primary-key read of the catalog, a plain MVCC read that takes no lock (a
-- pause being written never blocks it, nor it the pause). Every pop routine reads it first and
-- takes nothing while it is true; pushes, acks and fails never read it. A call sees a pause
-- committed before its statement's snapshot (a READ COMMITTED caller: before the call; a
-- REPEATABLE READ caller: before its transaction's first statement). paused_return: a pop
-- routine's first statement, returning nothing while it is true.
--
-- claim_gone: requeue's guard on a claim queue's row: its claiming session (claimed_session,
-- the consumer's backend pid) is no longer connected, or the caller passed include_live = 1.
-- A slow consumer that is still connected keeps its claim (its message would run twice).

-- name: push_many_rows
-- Many messages in one statement (push --lines, --file; applications too): inserted in array
-- order, so a fifo's ids ascend in input order; one notification for the batch.
CREATE FUNCTION {push_many}(p_payloads bytea[])
RETURNS TABLE (id bigint, enqueued_at timestamptz)
LANGUAGE sql AS $$
    SELECT pg_notify('qadmin_' || md5({table.lit}), '');
    INSERT INTO {table} (payload)
    SELECT u.p FROM unnest(p_payloads) WITH ORDINALITY AS u(p, n) ORDER BY u.n
    RETURNING id, enqueued_at
$$

-- name: committed_only
IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'ring {w} runs only at READ COMMITTED, not %',
            current_setting('transaction_isolation')
            USING ERRCODE = 'invalid_transaction_state',
                  HINT = 'call it in autocommit or a READ COMMITTED transaction';
    END IF;

-- name: lock_released
EXCEPTION WHEN OTHERS OR query_canceled THEN
        PERFORM pg_advisory_unlock(v_key);
        RAISE;
    END;
    PERFORM pg_advisory_unlock(v_key);

-- name: wm_pop_begin
#variable_conflict use_column
DECLARE
    v_wm   bigint;
    v_tick boolean := false;
    v_low  bigint;  -- the lowest id taken, passed on when nothing else of ours can roll back
    v_fresh boolean := txid_current_if_assigned() IS NULL;
    r      record;
BEGIN
    {paused_return()}
    SELECT s.last_value INTO v_wm FROM {wm_seq} AS s;
    FOR r IN

-- name: wm_pop_end
v_tick := v_tick OR r.id % {wm_every} = 0;
        v_low := least(v_low, r.id);
    END LOOP;
    IF v_tick THEN
        PERFORM {wm_advance}(NULL, CASE WHEN v_fresh THEN v_low END);
    END IF;
END
$$

-- name: claim_set
SET processing_started_at = clock_timestamp(),
        claimed_by = p_worker,
        claimed_session = pg_backend_pid(),
        attempts = q.attempts + 1

-- name: gate_wait
#variable_conflict use_column
BEGIN
    LOCK TABLE {src} IN ROW EXCLUSIVE MODE;
    IF to_regclass({ctl.lit}) IS NOT NULL THEN

-- name: paused
EXISTS (SELECT 1 FROM {catalog} AS qz
        WHERE qz.name = {table.bare_lit} AND (qz.options::jsonb ->> 'paused_at') IS NOT NULL)

-- name: paused_return
IF {paused()} THEN
        RETURN;  -- paused (qadmin pause): take nothing
    END IF;

-- name: claim_gone
(:include_live = 1 OR claimed_session IS NULL
 OR NOT EXISTS (SELECT 1 FROM pg_stat_activity AS a WHERE a.pid = claimed_session))
