-- answers: how many rows the queue table holds (the planner's estimate, no scan) and its size
-- params: :schema, :table (names, bound)
-- min version: PostgreSQL 14 (reltuples = -1 for a never-analyzed table)
-- privilege: none (pg_class and pg_stat_user_tables need no grant)
-- cost: catalog and statistics reads only, and no lock on the queue table: sizes are
--       pg_class.relpages (set by VACUUM / ANALYZE / CREATE INDEX), not pg_table_size(), which
--       opens the table with AccessShareLock and so queues behind any ACCESS EXCLUSIVE lock,
--       granted or merely waiting (an ALTER TABLE behind an open transaction), in an incident.
--       A partitioned table (pg-boss's job) has no pages or rows of its own: its partitions'
--       (pg_inherits, recursively; no lock taken) are summed.
WITH RECURSIVE tree AS (
    SELECT c.oid AS relid
    FROM pg_catalog.pg_class AS c
    JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
    WHERE n.nspname = :schema AND c.relname = :table
    UNION ALL
    SELECT i.inhrelid FROM pg_catalog.pg_inherits AS i JOIN tree ON i.inhparent = tree.relid
), parts AS (
    -- a partitioned parent's own counters repeat its partitions' rows: leaves only
    SELECT coalesce(sum(greatest(st.n_live_tup, 0)) FILTER (WHERE pc.relkind <> 'p'), 0)
               ::bigint                                                          AS live,
           coalesce(sum(greatest(pc.relpages, 0)), 0)::bigint                    AS pages,
           coalesce(sum(greatest(pc.relpages, 0) + greatest(coalesce(tc.relpages, 0), 0)), 0)
               ::bigint                                                          AS all_pages,
           (SELECT coalesce(sum(greatest(ic.relpages, 0)), 0)::bigint
              FROM pg_catalog.pg_index AS i
              JOIN pg_catalog.pg_class AS ic ON ic.oid = i.indexrelid
             WHERE i.indrelid IN (SELECT relid FROM tree))                       AS index_pages
    FROM tree
    JOIN pg_catalog.pg_class AS pc ON pc.oid = tree.relid
    LEFT JOIN pg_catalog.pg_stat_user_tables AS st ON st.relid = tree.relid
    LEFT JOIN pg_catalog.pg_class AS tc ON tc.oid = pc.reltoastrelid
)
SELECT p.live                                                 AS estimated_rows,
       'pg_stat_user_tables.n_live_tup'                       AS estimate_source,
       p.all_pages * current_setting('block_size')::bigint    AS table_bytes,
       p.index_pages * current_setting('block_size')::bigint  AS index_bytes,
       p.pages                                                AS pages,
       'catalog (relpages, as of last VACUUM/ANALYZE)'        AS size_source,
       c.reltuples >= 0                                       AS stats_gathered,
       greatest(s.last_analyze, s.last_autoanalyze)           AS last_analyzed,
       s.n_mod_since_analyze                                  AS modified_since_analyze
FROM pg_catalog.pg_class AS c
JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_stat_user_tables AS s ON s.relid = c.oid
CROSS JOIN parts AS p
WHERE n.nspname = :schema AND c.relname = :table
