-- answers: the columns of a table (name, declared type, nullability, default) and each one's
--          type family, to read a table as a queue: which column can order it, date it, hold states
-- params: :table
-- min version: SQLite 3.16
-- privilege: read access to the file
-- cost: reads the schema
-- type_family: from the declared type (SQLite stores any value in any column): DATE/TIME ->
--   timestamp, INT -> integer, CHAR/CLOB/TEXT -> text, BOOL -> boolean, UUID -> uuid
SELECT name                                                    AS column_name,
       type                                                    AS data_type,
       CASE
           WHEN upper(type) LIKE '%TIME%' OR upper(type) = 'DATETIME' THEN 'timestamp'
           WHEN upper(type) = 'DATE'                           THEN 'date'
           WHEN upper(type) LIKE '%BOOL%'                      THEN 'boolean'
           WHEN upper(type) LIKE '%INT%'                       THEN 'integer'
           WHEN upper(type) LIKE '%UUID%'                      THEN 'uuid'
           WHEN upper(type) LIKE '%JSON%'                      THEN 'json'
           WHEN upper(type) LIKE '%CHAR%' OR upper(type) LIKE '%CLOB%'
             OR upper(type) LIKE '%TEXT%'                      THEN 'text'
           WHEN upper(type) LIKE '%REAL%' OR upper(type) LIKE '%FLOA%'
             OR upper(type) LIKE '%DOUB%' OR upper(type) LIKE '%NUM%'
             OR upper(type) LIKE '%DEC%'                       THEN 'number'
           ELSE 'other'
       END                                                     AS type_family,
       "notnull" = 0 AND pk = 0                                AS nullable,
       dflt_value                                              AS column_default,
       cid + 1                                                 AS position
FROM pragma_table_info(:table)
ORDER BY cid
