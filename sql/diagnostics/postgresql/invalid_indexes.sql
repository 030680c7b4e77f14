-- answers: indexes of the queue table that PostgreSQL marks INVALID: left by a CREATE INDEX
--          CONCURRENTLY (or REINDEX CONCURRENTLY) that failed or was cancelled. Queries never
--          use such an index, yet every insert and update still maintains it
-- params: :schema, :table
-- min version: PostgreSQL 12 (REINDEX INDEX CONCURRENTLY, in the fix)
-- privilege: none (pg_index and pg_class need no grant)
-- cost: catalog only; takes no lock on the table or its indexes (the size is relpages, not
--       pg_relation_size, which would lock the index)
SELECT ic.relname                                                        AS index_name,
       pg_catalog.pg_get_indexdef(i.indexrelid)                          AS definition,
       ic.relpages::bigint * current_setting('block_size')::bigint       AS index_bytes,
       i.indisready                                                      AS maintained
FROM pg_catalog.pg_index AS i
JOIN pg_catalog.pg_class AS t ON t.oid = i.indrelid
JOIN pg_catalog.pg_namespace AS n ON n.oid = t.relnamespace
JOIN pg_catalog.pg_class AS ic ON ic.oid = i.indexrelid
WHERE n.nspname = :schema AND t.relname = :table AND NOT i.indisvalid
ORDER BY ic.relname
