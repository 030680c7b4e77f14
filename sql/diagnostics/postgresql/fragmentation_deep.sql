-- answers: measured leaf density, fragmentation and empty / deleted (recyclable) pages of each
--          btree index of the queue table
-- params: :schema, :table
-- min version: PostgreSQL 10 with the pgstattuple extension installed in the database
-- privilege: pg_stat_scan_tables (or pg_monitor) to execute pgstatindex
-- cost: reads every page of each index (--deep only, after a page-count check)
SELECT ic.relname              AS index_name,
       st.leaf_pages           AS leaf_pages,
       st.empty_pages          AS empty_pages,
       st.deleted_pages        AS deleted_pages,
       st.avg_leaf_density     AS avg_leaf_density,
       st.leaf_fragmentation   AS leaf_fragmentation,
       round(100.0 * (st.empty_pages + st.deleted_pages)
             / nullif(st.leaf_pages + st.empty_pages + st.deleted_pages, 0), 1)
                               AS free_pages_pct
FROM pg_catalog.pg_index AS i
JOIN pg_catalog.pg_class AS t ON t.oid = i.indrelid
JOIN pg_catalog.pg_namespace AS n ON n.oid = t.relnamespace
JOIN pg_catalog.pg_class AS ic ON ic.oid = i.indexrelid
JOIN pg_catalog.pg_am AS am ON am.oid = ic.relam AND am.amname = 'btree'
CROSS JOIN LATERAL pgstatindex(ic.oid::regclass) AS st
WHERE n.nspname = :schema AND t.relname = :table
ORDER BY ic.relname
