-- answers: indexes of the queue table that PostgreSQL marks INVALID: left by a CREATE INDEX
--          CONCURRENTLY (or REINDEX CONCURRENTLY) that failed or was cancelled. Queries never
--          use such an index, yet every insert and update still maintains it. For a UNIQUE
--          one, two queries as text (run neither here): duplicates_query lists the keys held
--          by more than one row (what made the CREATE fail, and makes it fail again), and
--          duplicates_probe says, reading at most 100,000 rows, whether any key is held twice
--          (complete: false when the table holds more, so "none" is not known); qadmin runs
--          the probe and fills duplicate_keys with its answer (NULL here, and when unknown)
-- params: :schema, :table
-- min version: PostgreSQL 12 (REINDEX INDEX CONCURRENTLY, in the fix)
-- privilege: none (pg_index and pg_class need no grant)
-- cost: catalog only; takes no lock on the table or its indexes (the size is relpages, not
--       pg_relation_size, which would lock the index)
SELECT ic.relname                                                        AS index_name,
       pg_catalog.pg_get_indexdef(i.indexrelid)                          AS definition,
       ic.relpages::bigint * current_setting('block_size')::bigint       AS index_bytes,
       i.indisready                                                      AS maintained,
       i.indisunique                                                     AS is_unique,
       CASE WHEN i.indisunique THEN
         format('SELECT %s, count(*) AS copies FROM %I.%I WHERE %s GROUP BY %s '
                'HAVING count(*) > 1 ORDER BY count(*) DESC LIMIT 20',
                k.keys, n.nspname, t.relname, k.filter, k.positions)
       END                                                               AS duplicates_query,
       CASE WHEN i.indisunique THEN
         format('SELECT count(*) <= 100000 AS complete, count(*) > count(DISTINCT key) '
                'AS duplicated FROM (SELECT ROW(%s) AS key FROM %I.%I WHERE %s '
                'LIMIT 100001) AS head',
                k.keys, n.nspname, t.relname, k.filter)
       END                                                               AS duplicates_probe,
       NULL::boolean                                                     AS duplicate_keys
FROM pg_catalog.pg_class AS t
JOIN pg_catalog.pg_namespace AS n ON n.oid = t.relnamespace
JOIN pg_catalog.pg_index AS i ON i.indrelid = t.oid
JOIN pg_catalog.pg_class AS ic ON ic.oid = i.indexrelid
-- The index's key columns and expressions, and the rows it holds to be unique: those whose
-- keys are all NOT NULL (NULLs never collide), within its WHERE for a partial index.
CROSS JOIN LATERAL (
  SELECT string_agg(pg_catalog.pg_get_indexdef(i.indexrelid, c.pos, true), ', '
                    ORDER BY c.pos)                                      AS keys,
         string_agg(c.pos::text, ', ' ORDER BY c.pos)                    AS positions,
         string_agg('(' || pg_catalog.pg_get_indexdef(i.indexrelid, c.pos, true)
                    || ') IS NOT NULL', ' AND ' ORDER BY c.pos)
           || coalesce(' AND (' || pg_catalog.pg_get_expr(i.indpred, i.indrelid, true) || ')',
                       '')                                               AS filter
  FROM generate_series(1, i.indnkeyatts) AS c(pos)
) AS k
WHERE t.relname = :table AND NOT i.indisvalid
  AND t.relnamespace = (SELECT n.oid FROM pg_catalog.pg_namespace AS n WHERE n.nspname = :schema)
ORDER BY ic.relname
