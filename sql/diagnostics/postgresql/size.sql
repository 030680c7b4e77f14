-- answers: how many rows the queue table holds (the planner's estimate, no scan) and its size
-- params: :schema, :table (names, bound)
-- min version: PostgreSQL 14 (reltuples = -1 for a never-analyzed table)
-- privilege: none (pg_class, pg_stat_user_tables and the size functions need no grant)
-- cost: catalog and statistics reads; the size functions take AccessShareLock, bounded by
--       qadmin's lock_timeout
SELECT greatest(s.n_live_tup, 0)          AS estimated_rows,
       'pg_stat_user_tables.n_live_tup'   AS estimate_source,
       pg_table_size(c.oid)               AS table_bytes,
       pg_indexes_size(c.oid)             AS index_bytes,
       c.relpages                         AS pages
FROM pg_catalog.pg_class AS c
JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_stat_user_tables AS s ON s.relid = c.oid
WHERE n.nspname = :schema AND c.relname = :table
