-- answers: exact dead tuples and free space of the queue table (pgstattuple_approx reads the
--          pages the visibility map does not mark all-visible: for a queue, nearly all)
-- params: :schema, :table
-- min version: PostgreSQL 10 with the pgstattuple extension installed in the database
-- privilege: pg_stat_scan_tables (or pg_monitor)
-- cost: I/O up to the table's size (--deep only, after a page-count check)
SELECT st.dead_tuple_count     AS dead_tuples_exact,
       st.approx_tuple_count   AS live_tuples_approx,
       st.approx_free_percent  AS free_percent,
       st.scanned_percent      AS scanned_percent
FROM pg_catalog.pg_class AS c
JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
CROSS JOIN LATERAL pgstattuple_approx(c.oid::regclass) AS st
WHERE n.nspname = :schema AND c.relname = :table AND c.relkind = 'r'
