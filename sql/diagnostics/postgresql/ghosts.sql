-- answers: dead tuples on the queue table, and whether autovacuum is due or has run
-- params: :schema, :table
-- min version: PostgreSQL 13 (n_ins_since_vacuum)
-- privilege: none (the pg_stat_get_* functions read every table of the database)
-- cost: shared-memory statistics and one pg_class row, by oid (not pg_stat_user_tables, which
--       aggregates every table's indexes first); estimates, flushed by backends with up to a
--       second of delay. No lock on the queue table (answers behind an ACCESS EXCLUSIVE lock)
SELECT pg_catalog.pg_stat_get_live_tuples(c.oid)               AS live_rows,
       pg_catalog.pg_stat_get_dead_tuples(c.oid)               AS dead_rows,
       pg_catalog.pg_stat_get_last_autovacuum_time(c.oid)      AS last_autovacuum,
       pg_catalog.pg_stat_get_last_vacuum_time(c.oid)          AS last_vacuum,
       pg_catalog.pg_stat_get_autovacuum_count(c.oid)          AS autovacuum_count,
       pg_catalog.pg_stat_get_dead_tuples(c.oid)
         > current_setting('autovacuum_vacuum_threshold')::float8
           + current_setting('autovacuum_vacuum_scale_factor')::float8
             * greatest(c.reltuples, 0)                        AS autovacuum_due,
       current_setting('autovacuum')::boolean
           AND coalesce((SELECT bool_and(o.option_value::boolean)
                           FROM pg_catalog.pg_options_to_table(c.reloptions) AS o
                          WHERE o.option_name = 'autovacuum_enabled'), true)
                                                               AS autovacuum_enabled
FROM pg_catalog.pg_class AS c
WHERE c.relname = :table AND c.relkind IN ('r', 't', 'm', 'p')
  AND c.relnamespace = (SELECT n.oid FROM pg_catalog.pg_namespace AS n WHERE n.nspname = :schema)
