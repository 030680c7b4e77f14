-- answers: the primary key columns of a table, in key order (to find a hand-built queue's
--          ordering key)
-- params: :schema, :table
-- min version: PostgreSQL 10
-- privilege: none
-- cost: catalog only
SELECT a.attname AS column_name
FROM pg_catalog.pg_index AS i
JOIN pg_catalog.pg_class AS t ON t.oid = i.indrelid
JOIN pg_catalog.pg_namespace AS n ON n.oid = t.relnamespace
CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, position)
JOIN pg_catalog.pg_attribute AS a ON a.attrelid = t.oid AND a.attnum = k.attnum
WHERE n.nspname = :schema AND t.relname = :table AND i.indisprimary
ORDER BY k.position
