-- answers: how many rows the queue table holds (the planner's estimate, no scan) and its size
-- params: :schema, :table (names, bound)
-- min version: PostgreSQL 14 (reltuples = -1 for a never-analyzed table)
-- privilege: none (pg_class and the pg_stat_get_* functions need no grant)
-- cost: catalog and statistics reads only, and no lock on the queue table: sizes are
--       pg_class.relpages (set by VACUUM / ANALYZE / CREATE INDEX), not pg_table_size(), which
--       opens the table with AccessShareLock and so queues behind any ACCESS EXCLUSIVE lock,
--       granted or merely waiting (an ALTER TABLE behind an open transaction), in an incident.
--       A partitioned table (pg-boss's job) has no pages or rows of its own: its partitions'
--       (pg_inherits, recursively; no lock taken) are summed. The statistics are read with the
--       pg_stat_get_* functions by oid, not through pg_stat_user_tables, a view that
--       aggregates every table's indexes first (19 ms a call in a database of 2,000 tables:
--       qadmin status reads it once per queue).
WITH RECURSIVE tree AS (
    SELECT c.oid AS relid
    FROM pg_catalog.pg_class AS c
    WHERE c.relname = :table
      AND c.relnamespace = (SELECT n.oid FROM pg_catalog.pg_namespace AS n WHERE n.nspname = :schema)
    UNION ALL
    SELECT i.inhrelid FROM pg_catalog.pg_inherits AS i JOIN tree ON i.inhparent = tree.relid
), parts AS (
    -- a partitioned parent's own counters repeat its partitions' rows: leaves only. Each
    -- relation is read by its oid (correlated lookups through the catalog's indexes), never
    -- a scan of pg_class or pg_index, whose size grows with every table of the database.
    SELECT coalesce(sum(greatest(pg_catalog.pg_stat_get_live_tuples(t.relid), 0))
                        FILTER (WHERE t.relkind <> 'p'), 0)::bigint             AS live,
           coalesce(sum(greatest(t.relpages, 0)), 0)::bigint                     AS pages,
           coalesce(sum(greatest(t.relpages, 0) + greatest(coalesce(t.toast_pages, 0), 0)),
                    0)::bigint                                                   AS all_pages,
           coalesce(sum(t.index_pages), 0)::bigint                               AS index_pages,
           -- no VACUUM, ANALYZE or CREATE INDEX has measured any of it yet: its relpages 0
           -- is not a size (the table may hold rows), so the sizes are unknown, not 0 (its
           -- indexes' relpages are as their CREATE INDEX left them: empty)
           coalesce(bool_and(t.relpages = 0 AND t.reltuples < 0)
                        FILTER (WHERE t.relkind <> 'p'), false)                  AS unmeasured
    FROM tree
    CROSS JOIN LATERAL (
        SELECT tree.relid, pc.relkind, pc.relpages, pc.reltuples,
               (SELECT tc.relpages FROM pg_catalog.pg_class AS tc
                 WHERE tc.oid = pc.reltoastrelid)                                AS toast_pages,
               (SELECT sum(greatest(ic.relpages, 0))
                  FROM pg_catalog.pg_index AS i
                  JOIN pg_catalog.pg_class AS ic ON ic.oid = i.indexrelid
                 WHERE i.indrelid = pc.oid)                                      AS index_pages
        FROM pg_catalog.pg_class AS pc WHERE pc.oid = tree.relid
        OFFSET 0  -- kept a lookup per relation (the planner would hash-join all of pg_class)
    ) AS t
)
SELECT p.live                                                 AS estimated_rows,
       'pg_stat_user_tables.n_live_tup'                       AS estimate_source,
       CASE WHEN NOT p.unmeasured
            THEN p.all_pages * current_setting('block_size')::bigint END AS table_bytes,
       CASE WHEN NOT p.unmeasured
            THEN p.index_pages * current_setting('block_size')::bigint END AS index_bytes,
       CASE WHEN NOT p.unmeasured THEN p.pages END            AS pages,
       CASE WHEN p.unmeasured
            THEN 'unknown: never measured (no VACUUM, ANALYZE or CREATE INDEX yet; run ANALYZE)'
            ELSE 'catalog (relpages, as of last VACUUM/ANALYZE)' END AS size_source,
       c.reltuples >= 0                                       AS stats_gathered,
       greatest(pg_catalog.pg_stat_get_last_analyze_time(c.oid),
                pg_catalog.pg_stat_get_last_autoanalyze_time(c.oid)) AS last_analyzed,
       pg_catalog.pg_stat_get_mod_since_analyze(c.oid)        AS modified_since_analyze
FROM pg_catalog.pg_class AS c
CROSS JOIN parts AS p
WHERE c.relname = :table
  AND c.relnamespace = (SELECT n.oid FROM pg_catalog.pg_namespace AS n WHERE n.nspname = :schema)
