-- answers: the columns of a table (name, type, nullability, default) and each one's type
--          family, to read a table as a queue: which column can order it, date it, hold states
-- params: :schema, :table (names, bound)
-- min version: MySQL 8.0 / MariaDB 10.6
-- privilege: any privilege on the table (columns of tables the user cannot see are not listed)
-- cost: dictionary only
-- type_family: timestamp, date, integer, number, text, uuid, boolean, enum, json, other
--   (MariaDB's uuid type is 'uuid'; a tinyint(1) is taken as a boolean, as drivers do)
SELECT COLUMN_NAME                                             AS column_name,
       COLUMN_TYPE                                             AS data_type,
       CASE
           WHEN DATA_TYPE IN ('datetime', 'timestamp')         THEN 'timestamp'
           WHEN DATA_TYPE = 'date'                             THEN 'date'
           WHEN COLUMN_TYPE LIKE 'tinyint(1)%'                 THEN 'boolean'
           WHEN DATA_TYPE IN ('tinyint', 'smallint', 'mediumint', 'int', 'bigint')
                                                               THEN 'integer'
           WHEN DATA_TYPE IN ('decimal', 'float', 'double')    THEN 'number'
           WHEN DATA_TYPE = 'uuid'                             THEN 'uuid'
           WHEN DATA_TYPE = 'enum'                             THEN 'enum'
           WHEN DATA_TYPE = 'json'                             THEN 'json'
           WHEN DATA_TYPE IN ('char', 'varchar', 'tinytext', 'text', 'mediumtext', 'longtext')
                                                               THEN 'text'
           ELSE 'other'
       END                                                     AS type_family,
       IS_NULLABLE = 'YES'                                     AS nullable,
       NULLIF(COLUMN_DEFAULT, 'NULL')                          AS column_default,
       ORDINAL_POSITION                                        AS position
FROM information_schema.COLUMNS
WHERE TABLE_SCHEMA = :schema AND TABLE_NAME = :table
ORDER BY ORDINAL_POSITION
