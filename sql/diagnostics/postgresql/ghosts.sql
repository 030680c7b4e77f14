-- answers: dead tuples on the queue table, and whether autovacuum is due or has run
-- params: :schema, :table
-- min version: PostgreSQL 13 (n_ins_since_vacuum)
-- privilege: none (pg_stat_user_tables shows every table of the database)
-- cost: shared-memory statistics and pg_class; estimates, flushed by backends with up to a
--       second of delay. No lock on the queue table (answers behind an ACCESS EXCLUSIVE lock)
SELECT s.n_live_tup                                    AS live_rows,
       s.n_dead_tup                                    AS dead_rows,
       s.last_autovacuum                               AS last_autovacuum,
       s.last_vacuum                                   AS last_vacuum,
       s.autovacuum_count                              AS autovacuum_count,
       s.n_dead_tup > current_setting('autovacuum_vacuum_threshold')::float8
           + current_setting('autovacuum_vacuum_scale_factor')::float8
             * greatest(c.reltuples, 0)                AS autovacuum_due,
       current_setting('autovacuum')::boolean
           AND coalesce((SELECT bool_and(o.option_value::boolean)
                           FROM pg_catalog.pg_options_to_table(c.reloptions) AS o
                          WHERE o.option_name = 'autovacuum_enabled'), true)
                                                       AS autovacuum_enabled
FROM pg_catalog.pg_stat_user_tables AS s
JOIN pg_catalog.pg_class AS c ON c.oid = s.relid
WHERE s.schemaname = :schema AND s.relname = :table
