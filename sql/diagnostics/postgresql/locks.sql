-- answers: sessions waiting on a lock that involves the queue table, who blocks each, how long
-- params: :schema, :table, :sibling (another connection of the same qadmin run, never listed:
--         its own short wait is the diagnostics'; 0: none)
-- min version: PostgreSQL 14 (pg_locks.waitstart)
-- privilege: none for pids and wait times; pg_read_all_stats to see other roles' queries
-- cost: pg_blocking_pids() briefly takes the lock manager's locks: run on demand, not polled.
--       No lock on the queue table: answers while it is locked, or while an ALTER waits for it
-- root_blocker: the session(s) at the head of the chain, not waiting themselves: a reader
--       queued behind a waiting ALTER TABLE is blocked by the ALTER, and at the root by the
--       transaction the ALTER waits for (comma-separated when several)
WITH RECURSIVE target AS (
    SELECT c.oid AS relid
    FROM pg_catalog.pg_class AS c
    WHERE c.relname = :table
      AND c.relnamespace = (SELECT n.oid FROM pg_catalog.pg_namespace AS n WHERE n.nspname = :schema)
),
waiting AS (
    SELECT a.pid, pg_blocking_pids(a.pid) AS blocked_by, a.wait_event, a.state_change, a.query,
           (SELECT max(l.waitstart) FROM pg_catalog.pg_locks AS l
             WHERE l.pid = a.pid AND NOT l.granted) AS wait_started
    FROM pg_catalog.pg_stat_activity AS a
    WHERE a.wait_event_type = 'Lock'
      AND a.pid <> :sibling
      AND EXISTS (SELECT 1 FROM pg_catalog.pg_locks AS l, target AS t
                   WHERE l.pid = a.pid AND l.relation = t.relid)
),
chain (waiter, pid, depth) AS (
    SELECT w.pid, bp.pid, 1 FROM waiting AS w CROSS JOIN LATERAL unnest(w.blocked_by) AS bp(pid)
    UNION
    SELECT c.waiter, nb.pid, c.depth + 1
    FROM chain AS c
    JOIN waiting AS w ON w.pid = c.pid
    CROSS JOIN LATERAL unnest(w.blocked_by) AS nb(pid)
    WHERE c.depth < 16
),
roots AS (
    SELECT c.waiter, string_agg(DISTINCT c.pid::text, ',') AS root_blocker
    FROM chain AS c
    WHERE NOT EXISTS (SELECT 1 FROM waiting AS w WHERE w.pid = c.pid)
    GROUP BY c.waiter
)
SELECT w.pid::text                                        AS waiter,
       b.pid::text                                        AS blocker,
       w.wait_event                                       AS lock,
       greatest(extract(epoch FROM now() - coalesce(w.wait_started, w.state_change))::float8, 0) AS wait_s,
       b.state                                            AS blocker_state,
       greatest(extract(epoch FROM now() - b.xact_start)::float8, 0)   AS blocker_xact_age_s,
       left(w.query, 200)                                 AS waiter_query,
       left(b.query, 200)                                 AS blocker_query,
       r.root_blocker                                     AS root_blocker
FROM waiting AS w
CROSS JOIN LATERAL unnest(w.blocked_by) AS bp(pid)
LEFT JOIN pg_catalog.pg_stat_activity AS b ON b.pid = bp.pid
LEFT JOIN roots AS r ON r.waiter = w.pid
ORDER BY wait_s DESC
