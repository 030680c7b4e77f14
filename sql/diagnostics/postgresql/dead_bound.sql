-- answers: how many dead entries a walk of the queue's index from its first entry can meet at
--          most: the table's dead tuples (a DELETE or UPDATE not yet vacuumed away, index
--          entries included), so size knows whether that walk is cheap; and how many rows the
--          statistics saw inserted (rolled back or not), so that a count begun after most of
--          the queue's ids were issued (statistics reset, a restore) is not trusted, and the
--          rows the last VACUUM / ANALYZE counted, the estimate left after such a reset;
--          whether the counters saw fewer writes than the heap has pages and no VACUUM or
--          ANALYZE (a reset since the rows were written), which a role that may not read the
--          id sequence cannot check against the ids issued
-- params: :schema, :table
-- min version: PostgreSQL 13
-- privilege: none (the pg_stat_get_* functions read every table of the database)
-- cost: one shared-memory statistics row (flushed by backends up to a second late) and one
--       pg_class row (relpages: the heap's pages at the last VACUUM / ANALYZE), by oid: not
--       pg_stat_user_tables, which aggregates every table's indexes first
SELECT pg_catalog.pg_stat_get_dead_tuples(c.oid) AS dead_bound,
       'n_dead_tup ' || pg_catalog.pg_stat_get_dead_tuples(c.oid) AS dead_bound_source,
       pg_catalog.pg_stat_get_tuples_inserted(c.oid) AS ids_seen,
       -- the live rows as the last VACUUM / ANALYZE counted them (-1: never): what size
       -- estimates from when a reset has emptied the counters above
       c.reltuples::bigint AS analyzed_rows,
       -- relpages, not pg_relation_size: that opens the table, which waits behind an ACCESS
       -- EXCLUSIVE lock (a diagnostic must answer behind a waiting ALTER)
       (pg_catalog.pg_stat_get_tuples_inserted(c.oid)
        + pg_catalog.pg_stat_get_tuples_updated(c.oid)
        + pg_catalog.pg_stat_get_tuples_deleted(c.oid) < c.relpages
        AND coalesce(pg_catalog.pg_stat_get_last_vacuum_time(c.oid),
                     pg_catalog.pg_stat_get_last_autovacuum_time(c.oid),
                     pg_catalog.pg_stat_get_last_analyze_time(c.oid),
                     pg_catalog.pg_stat_get_last_autoanalyze_time(c.oid)) IS NULL)
           AS counters_short,
       c.relpages AS heap_pages
FROM pg_catalog.pg_class AS c
WHERE c.relname = :table AND c.relkind IN ('r', 'p')
  AND c.relnamespace = (SELECT n.oid FROM pg_catalog.pg_namespace AS n WHERE n.nspname = :schema)
