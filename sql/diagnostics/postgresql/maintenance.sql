-- answers: whether the planner's statistics of the queue table were ever gathered (reltuples
--          stays -1 until the first VACUUM or ANALYZE), how many rows it has seen since, and
--          whether autovacuum may run on it (server setting, track_counts, table reloption)
-- params: :schema, :table
-- min version: PostgreSQL 14 (reltuples = -1 for a never-analyzed table)
-- privilege: none (pg_class, pg_stat_user_tables and current_setting need no grant)
-- cost: catalog and statistics reads only; takes no lock on the table
SELECT c.reltuples                                        AS reltuples,
       s.n_live_tup                                       AS live_rows,
       s.n_tup_ins                                        AS inserted_rows,
       s.n_mod_since_analyze                              AS modified_since_analyze,
       greatest(s.last_analyze, s.last_autoanalyze)       AS last_analyzed,
       current_setting('autovacuum') = 'on'               AS autovacuum_server,
       current_setting('track_counts') = 'on'             AS track_counts,
       coalesce((SELECT lower(o.option_value) IN ('false', 'off', 'no', '0', 'f', 'n')
                 FROM pg_catalog.pg_options_to_table(c.reloptions) AS o
                 WHERE o.option_name = 'autovacuum_enabled'), false) AS autovacuum_table_off
FROM pg_catalog.pg_class AS c
JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_stat_user_tables AS s ON s.relid = c.oid
WHERE n.nspname = :schema AND c.relname = :table
