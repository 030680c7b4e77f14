-- answers: the indexes of a table with their key columns in order, so a diagnostic can tell
--          whether an index fits a query (its leading columns) before it runs one
-- params: :schema, :table (names, bound)
-- min version: PostgreSQL 10
-- privilege: none
-- cost: catalog only; no lock on the table
-- columns: expression keys are shown as NULL in key_columns; partial is true for an index
--          with a WHERE clause (it fits only queries that imply the predicate)
SELECT ic.relname                                              AS index_name,
       (SELECT array_to_string(array_agg(a.attname ORDER BY k.position), ',')
          FROM unnest(i.indkey) WITH ORDINALITY AS k(attnum, position)
          JOIN pg_catalog.pg_attribute AS a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
         WHERE k.position <= i.indnkeyatts)                    AS key_columns,
       i.indisunique                                           AS is_unique,
       i.indisprimary                                          AS is_primary,
       i.indpred IS NOT NULL                                   AS partial,
       i.indisvalid                                            AS valid
FROM pg_catalog.pg_class AS t
JOIN pg_catalog.pg_index AS i ON i.indrelid = t.oid
JOIN pg_catalog.pg_class AS ic ON ic.oid = i.indexrelid
WHERE t.relname = :table
  AND t.relnamespace = (SELECT n.oid FROM pg_catalog.pg_namespace AS n WHERE n.nspname = :schema)
ORDER BY ic.relname
