-- Online maintenance of one queue table on PostgreSQL (qadmin maintain). Reads first, then the
-- actions, each stated with its lock. None takes ACCESS EXCLUSIVE: VACUUM leaves out its
-- end-of-file truncation (TRUNCATE false) unless --allow-blocking.
-- min version: PostgreSQL 14 (VACUUM (TRUNCATE ...), REINDEX ... CONCURRENTLY)
-- privilege: owner of the table (VACUUM, ALTER TABLE, REINDEX, DROP INDEX)

-- name: settings
-- answers: the table's storage settings and how it is written: its autovacuum reloptions (NULL
--          when the server's default applies), its fillfactor, and inserts/updates/deletes
--          with the share of updates that were HOT (stayed on their page)
-- params: :schema, :table
-- cost: pg_class and shared-memory statistics; no lock on the table
SELECT (SELECT o.option_value FROM pg_catalog.pg_options_to_table(c.reloptions) AS o
         WHERE o.option_name = 'autovacuum_vacuum_scale_factor')   AS vacuum_scale_factor,
       (SELECT o.option_value FROM pg_catalog.pg_options_to_table(c.reloptions) AS o
         WHERE o.option_name = 'autovacuum_vacuum_threshold')      AS vacuum_threshold,
       (SELECT o.option_value FROM pg_catalog.pg_options_to_table(c.reloptions) AS o
         WHERE o.option_name = 'fillfactor')                       AS fillfactor,
       s.n_tup_ins                                                 AS inserted_rows,
       s.n_tup_upd                                                 AS updated_rows,
       s.n_tup_hot_upd                                             AS hot_updated_rows,
       s.n_tup_del                                                 AS deleted_rows
FROM pg_catalog.pg_class AS c
JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_stat_user_tables AS s ON s.relid = c.oid
WHERE n.nspname = :schema AND c.relname = :table

-- name: vacuum
VACUUM (ANALYZE, TRUNCATE false) {table}

-- name: vacuum_truncate
VACUUM (ANALYZE) {table}

-- name: autovacuum
-- A queue's table stays small while millions of rows pass through it: the default scale factor
-- (20 % of the table) waits far too long, a fixed threshold does not.
ALTER TABLE {table} SET (autovacuum_vacuum_scale_factor = 0,
                         autovacuum_vacuum_threshold = 1000,
                         autovacuum_vacuum_cost_delay = 1)

-- name: fillfactor
-- Free room on each page for HOT updates (a claim, a ring slot written in place).
ALTER TABLE {table} SET (fillfactor = 70)

-- name: reindex
REINDEX INDEX CONCURRENTLY {index}

-- name: drop_index
DROP INDEX CONCURRENTLY IF EXISTS {index}

-- name: analyze
-- The planner's statistics, when missing and no VACUUM (which analyzes too) is proposed.
ANALYZE {table}
