-- answers: whether the planner's statistics of the queue table were ever gathered (reltuples
--          stays -1 until the first VACUUM or ANALYZE), how many rows it has seen since,
--          whether autovacuum may run on it (server setting, track_counts, table reloption),
--          and whether this role may VACUUM it (its owner, a member of the owner's role, the
--          database's owner or a superuser: else VACUUM only warns and skips the table)
-- params: :schema, :table
-- min version: PostgreSQL 14 (reltuples = -1 for a never-analyzed table)
-- privilege: none (pg_class, the pg_stat_get_* functions and current_setting need no grant)
-- cost: one pg_class row and its statistics, by oid (not pg_stat_user_tables, which
--       aggregates every table's indexes first); takes no lock on the table
SELECT c.reltuples                                        AS reltuples,
       pg_catalog.pg_stat_get_live_tuples(c.oid)          AS live_rows,
       pg_catalog.pg_stat_get_tuples_inserted(c.oid)      AS inserted_rows,
       pg_catalog.pg_stat_get_mod_since_analyze(c.oid)    AS modified_since_analyze,
       greatest(pg_catalog.pg_stat_get_last_analyze_time(c.oid),
                pg_catalog.pg_stat_get_last_autoanalyze_time(c.oid)) AS last_analyzed,
       current_setting('autovacuum') = 'on'               AS autovacuum_server,
       current_setting('track_counts') = 'on'             AS track_counts,
       coalesce((SELECT lower(o.option_value) IN ('false', 'off', 'no', '0', 'f', 'n')
                 FROM pg_catalog.pg_options_to_table(c.reloptions) AS o
                 WHERE o.option_name = 'autovacuum_enabled'), false) AS autovacuum_table_off,
       pg_catalog.pg_has_role(c.relowner, 'USAGE')
         OR pg_catalog.pg_has_role((SELECT d.datdba FROM pg_catalog.pg_database AS d
                                     WHERE d.datname = current_database()), 'USAGE')
                                                          AS may_vacuum
FROM pg_catalog.pg_class AS c
WHERE c.relname = :table AND c.relkind IN ('r', 't', 'm', 'p')
  AND c.relnamespace = (SELECT n.oid FROM pg_catalog.pg_namespace AS n WHERE n.nspname = :schema)
