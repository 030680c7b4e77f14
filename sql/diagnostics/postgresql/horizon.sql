-- answers: who holds back vacuum of this database (the xmin horizon), the actual holder first:
--          backends of this database with an old snapshot or transaction id; replication
--          slots and standby feedback (every database). A transaction of another database
--          (a backend's, a prepared one's) holds back vacuum here only through a snapshot
--          taken here while it ran (PostgreSQL keeps one horizon per database): it is listed,
--          as the root of that hold, while a session of this database holds a snapshot at
--          least that old or this database has traffic (a session active, in a transaction,
--          or done with a statement less than a second ago: its next snapshot is pinned the
--          same way); with neither, VACUUM removes the rows whatever it does, and it is not. Ordered by the age of the xid each holds back (xmin_age_xids); on a tie
--          the one whose own transaction id it is (holds_own_xid) comes first: a session whose
--          snapshot merely started while that transaction ran holds it only as long as that
--          one does
-- params: :sibling (another connection of the same qadmin run, never named a holder;
--         0: none)
-- min version: PostgreSQL 10
-- privilege: none for pid, role, database and xmin age; pg_read_all_stats (or pg_monitor) to
--            see state, transaction start and query of other roles' sessions
-- cost: shared memory only
WITH activity AS (
    SELECT a.* FROM pg_catalog.pg_stat_activity AS a
    WHERE a.pid NOT IN (pg_backend_pid(), :sibling)
), here AS (
    -- the age of the oldest snapshot a session of this database holds
    SELECT max(age(h.backend_xmin)) AS snapshot_age_xids,
           coalesce(bool_or(h.state IS DISTINCT FROM 'idle'
                            OR h.state_change > now() - interval '1 second'), false) AS busy
    FROM activity AS h
    WHERE h.datname = current_database() AND h.backend_type = 'client backend'
), backends AS (
    SELECT a.*,
           CASE
               WHEN a.datname IS DISTINCT FROM current_database()
                    AND a.backend_type <> 'walsender'
                    THEN CASE WHEN (SELECT busy FROM here)
                                   OR age(a.backend_xid) <= (SELECT snapshot_age_xids FROM here)
                              THEN a.backend_xid END
               WHEN a.backend_xid IS NULL THEN a.backend_xmin
               WHEN a.backend_xmin IS NULL THEN a.backend_xid
               WHEN age(a.backend_xid) >= age(a.backend_xmin) THEN a.backend_xid
               ELSE a.backend_xmin
           END AS held_xid
    FROM activity AS a
)
SELECT 'backend'                         AS holder_kind,
       b.pid::text                       AS holder,
       b.usename::text                   AS role,
       b.datname::text                   AS database,
       b.state                           AS state,
       age(b.held_xid)                   AS xmin_age_xids,
       coalesce(b.backend_xid = b.held_xid, false) AS holds_own_xid,
       -- NULL (not 0) when xact_start is hidden from this role: an age not read
       CASE WHEN b.xact_start IS NOT NULL
            THEN greatest(extract(epoch FROM now() - b.xact_start)::float8, 0) END AS xact_age_s,
       left(b.query, 200)                AS detail
FROM backends AS b
WHERE b.held_xid IS NOT NULL
UNION ALL
SELECT 'replication_slot', s.slot_name::text, NULL, s.database::text,
       CASE WHEN s.active THEN 'active' ELSE 'inactive' END,
       age(s.xmin), false, NULL, s.slot_type
FROM pg_catalog.pg_replication_slots AS s
WHERE s.xmin IS NOT NULL
UNION ALL
SELECT 'prepared_xact', p.gid, p.owner::text, p.database::text, 'prepared',
       age(p.transaction), true,
       greatest(extract(epoch FROM now() - p.prepared)::float8, 0), NULL
FROM pg_catalog.pg_prepared_xacts AS p
WHERE p.database = current_database() OR (SELECT busy FROM here)
   OR age(p.transaction) <= (SELECT snapshot_age_xids FROM here)
ORDER BY xmin_age_xids DESC NULLS LAST, holds_own_xid DESC, xact_age_s DESC NULLS LAST
LIMIT 10
