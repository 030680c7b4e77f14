-- answers: who holds back vacuum of this database (the xmin horizon): backends with an old
--          snapshot, replication slots, prepared transactions, standby feedback
-- params: none
-- min version: PostgreSQL 10
-- privilege: none for pid, role and xmin age; pg_read_all_stats (or pg_monitor) to see state,
--            transaction start and query of other roles' sessions
-- cost: shared memory only
SELECT 'backend'                         AS holder_kind,
       a.pid::text                       AS holder,
       a.usename::text                   AS role,
       a.state                           AS state,
       age(a.backend_xmin)               AS xmin_age_xids,
       greatest(extract(epoch FROM now() - a.xact_start)::float8, 0) AS xact_age_s,
       left(a.query, 200)                AS detail
FROM pg_catalog.pg_stat_activity AS a
WHERE a.backend_xmin IS NOT NULL
  AND a.pid <> pg_backend_pid()
  AND (a.datname = current_database() OR a.backend_type = 'walsender')
UNION ALL
SELECT 'replication_slot', s.slot_name::text, NULL,
       CASE WHEN s.active THEN 'active' ELSE 'inactive' END,
       age(s.xmin), NULL, s.slot_type
FROM pg_catalog.pg_replication_slots AS s
WHERE s.xmin IS NOT NULL
UNION ALL
SELECT 'prepared_xact', p.gid, p.owner::text, 'prepared',
       age(p.transaction), greatest(extract(epoch FROM now() - p.prepared)::float8, 0), NULL
FROM pg_catalog.pg_prepared_xacts AS p
WHERE p.database = current_database()
ORDER BY xmin_age_xids DESC NULLS LAST
LIMIT 10
