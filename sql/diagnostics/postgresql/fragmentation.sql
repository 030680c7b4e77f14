-- answers: each index of the queue table: size, entries, and an estimate of the space beyond
--          what its live entries need (bloat_pct), from catalog statistics only; valid =
--          false for an index a failed CREATE INDEX CONCURRENTLY left behind (INVALID: still
--          maintained by every write, never used by a query)
-- params: :schema, :table
-- min version: PostgreSQL 14
-- privilege: none
-- cost: catalog only, no lock on the table or its indexes (sizes are relpages, not
--       pg_relation_size(), which waits behind an ACCESS EXCLUSIVE lock). The estimate
--       assumes 8-byte key columns (all qadmin's indexes) at the default fillfactor 90, and
--       relies on reltuples from the last VACUUM / ANALYZE (NULL while the table was never
--       analyzed: no estimate rather than a wrong 0.0);
--       confirm with --deep (pgstatindex) before a REINDEX CONCURRENTLY
SELECT ic.relname                           AS index_name,
       ic.relpages::bigint * current_setting('block_size')::bigint AS index_bytes,
       ic.relpages                          AS pages,
       greatest(ic.reltuples, 0)::bigint    AS entries,
       e.expected_pages                     AS expected_pages,
       CASE WHEN ic.relpages > 0 AND t.reltuples >= 0
            THEN round(100.0 * greatest(ic.relpages - e.expected_pages, 0) / ic.relpages, 1)
       END                                  AS bloat_pct,
       pg_catalog.pg_stat_get_numscans(i.indexrelid) AS scans,
       i.indisvalid                         AS valid
FROM pg_catalog.pg_class AS t
JOIN pg_catalog.pg_index AS i ON i.indrelid = t.oid
JOIN pg_catalog.pg_class AS ic ON ic.oid = i.indexrelid
CROSS JOIN LATERAL (
    SELECT 2 + ceil(greatest(ic.reltuples, 0)
                    / floor((current_setting('block_size')::int - 40) * 0.9
                            / (12 + 8 * i.indnatts)))::bigint AS expected_pages
) AS e
WHERE t.relname = :table
  AND t.relnamespace = (SELECT n.oid FROM pg_catalog.pg_namespace AS n WHERE n.nspname = :schema)
ORDER BY ic.relname
