-- answers: the columns of a table (name, type, nullability, default) and each one's type
--          family, to read a table as a queue: which column can order it, date it, hold states
-- params: :schema, :table (names, bound)
-- min version: PostgreSQL 10
-- privilege: none (pg_attribute needs no grant)
-- cost: catalog only; no lock on the table (pg_get_expr with relation 0 never opens the
--       table, so it answers behind an ACCESS EXCLUSIVE lock; a generated column's
--       expression, which names columns, is left out)
-- enum_labels: an enum's labels in order (pg_enum), else NULL
-- type_family: timestamp, date, integer, number, text, uuid, boolean, enum, json, other
SELECT a.attname                                               AS column_name,
       pg_catalog.format_type(a.atttypid, a.atttypmod)         AS data_type,
       CASE
           WHEN t.typtype = 'e'                                THEN 'enum'
           WHEN t.typname IN ('timestamptz', 'timestamp')      THEN 'timestamp'
           WHEN t.typname = 'date'                             THEN 'date'
           WHEN t.typname IN ('int2', 'int4', 'int8')          THEN 'integer'
           WHEN t.typcategory = 'N'                            THEN 'number'
           WHEN t.typname = 'uuid'                             THEN 'uuid'
           WHEN t.typname = 'bool'                             THEN 'boolean'
           WHEN t.typname IN ('json', 'jsonb')                 THEN 'json'
           WHEN t.typcategory = 'S'                            THEN 'text'
           ELSE 'other'
       END                                                     AS type_family,
       NOT a.attnotnull                                        AS nullable,
       CASE WHEN a.attgenerated = ''
            THEN pg_catalog.pg_get_expr(d.adbin, 0) END        AS column_default,
       a.attnum                                                AS position,
       (SELECT array_agg(e.enumlabel::text ORDER BY e.enumsortorder)
          FROM pg_catalog.pg_enum AS e WHERE e.enumtypid = t.oid)  AS enum_labels
FROM pg_catalog.pg_attribute AS a
JOIN pg_catalog.pg_class AS c ON c.oid = a.attrelid
JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_type AS t ON t.oid = a.atttypid
LEFT JOIN pg_catalog.pg_attrdef AS d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE n.nspname = :schema AND c.relname = :table AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum
