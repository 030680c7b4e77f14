-- answers: who keeps readers off the queue table or its dead-letter table: sessions holding,
--          or queued for, an ACCESS EXCLUSIVE lock on either (LOCK TABLE, ALTER TABLE, VACUUM
--          FULL, TRUNCATE, REINDEX). Named when a diagnostic part gave up waiting for its own
--          lock (the dead part reads <queue>_dead)
-- params: :schema, :table, :dead (the dead table; the queue table again when it has none),
--         :sibling (another connection of the same qadmin run, never named a holder;
--         0: none)
-- min version: PostgreSQL 10
-- privilege: none for pids and lock modes; pg_read_all_stats to see other roles' queries
-- cost: pg_locks and pg_stat_activity (shared memory); takes no lock on the table
SELECT l.pid::text                                       AS holder,
       l.mode                                            AS mode,
       c.relname                                         AS relation,
       l.granted                                         AS granted,
       a.state                                           AS state,
       greatest(extract(epoch FROM now() - a.xact_start)::float8, 0)  AS xact_age_s,
       left(a.query, 200)                                AS query
FROM pg_catalog.pg_locks AS l
JOIN pg_catalog.pg_class AS c ON c.oid = l.relation
JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
LEFT JOIN pg_catalog.pg_stat_activity AS a ON a.pid = l.pid
WHERE n.nspname = :schema AND c.relname IN (:table, :dead)
  AND l.mode = 'AccessExclusiveLock'
  AND l.pid NOT IN (pg_backend_pid(), :sibling)
ORDER BY l.granted DESC, a.xact_start
