-- answers: how many rows the queue table holds (the planner's estimate, no scan) and its size
-- params: :schema, :table (names, bound)
-- min version: PostgreSQL 14 (reltuples = -1 for a never-analyzed table)
-- privilege: none (pg_class and pg_stat_user_tables need no grant)
-- cost: catalog and statistics reads only, and no lock on the queue table: sizes are
--       pg_class.relpages (set by VACUUM / ANALYZE / CREATE INDEX), not pg_table_size(), which
--       opens the table with AccessShareLock and so queues behind any ACCESS EXCLUSIVE lock,
--       granted or merely waiting (an ALTER TABLE behind an open transaction), in an incident
SELECT greatest(s.n_live_tup, 0)                              AS estimated_rows,
       'pg_stat_user_tables.n_live_tup'                       AS estimate_source,
       (c.relpages + coalesce(tc.relpages, 0))::bigint
           * current_setting('block_size')::bigint            AS table_bytes,
       (SELECT coalesce(sum(ic.relpages), 0)::bigint * current_setting('block_size')::bigint
          FROM pg_catalog.pg_index AS i
          JOIN pg_catalog.pg_class AS ic ON ic.oid = i.indexrelid
         WHERE i.indrelid = c.oid)                            AS index_bytes,
       c.relpages                                             AS pages,
       'catalog (relpages, as of last VACUUM/ANALYZE)'        AS size_source,
       c.reltuples >= 0                                       AS stats_gathered,
       greatest(s.last_analyze, s.last_autoanalyze)           AS last_analyzed,
       s.n_mod_since_analyze                                  AS modified_since_analyze
FROM pg_catalog.pg_class AS c
JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_stat_user_tables AS s ON s.relid = c.oid
LEFT JOIN pg_catalog.pg_class AS tc ON tc.oid = c.reltoastrelid
WHERE n.nspname = :schema AND c.relname = :table
