-- answers: who holds back vacuum of this database (the xmin horizon), the actual holder first:
--          backends of this database with an old snapshot or transaction id; backends of ANY
--          database with a transaction id (every snapshot taken here must treat it as running,
--          so an idle-in-transaction session elsewhere holds the xmin of every session here);
--          replication slots, prepared transactions (any database), standby feedback. Ordered
--          by the age of the xid each holds back (xmin_age_xids); on a tie the one whose own
--          transaction id it is (holds_own_xid) comes first: a session whose snapshot merely
--          started while that transaction ran holds it only as long as that one does
-- params: none
-- min version: PostgreSQL 10
-- privilege: none for pid, role, database and xmin age; pg_read_all_stats (or pg_monitor) to
--            see state, transaction start and query of other roles' sessions
-- cost: shared memory only
WITH backends AS (
    SELECT a.*,
           CASE
               WHEN a.datname IS DISTINCT FROM current_database()
                    AND a.backend_type <> 'walsender' THEN a.backend_xid
               WHEN a.backend_xid IS NULL THEN a.backend_xmin
               WHEN a.backend_xmin IS NULL THEN a.backend_xid
               WHEN age(a.backend_xid) >= age(a.backend_xmin) THEN a.backend_xid
               ELSE a.backend_xmin
           END AS held_xid
    FROM pg_catalog.pg_stat_activity AS a
    WHERE a.pid <> pg_backend_pid()
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
ORDER BY xmin_age_xids DESC NULLS LAST, holds_own_xid DESC, xact_age_s DESC NULLS LAST
LIMIT 10
