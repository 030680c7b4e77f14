-- answers: the indexes of a table with their key columns in order, so a diagnostic can tell
--          whether an index fits a query (its leading columns) before it runs one
-- params: :schema, :table (names, bound)
-- min version: MySQL 8.0 / MariaDB 10.6
-- privilege: any privilege on the table
-- cost: dictionary only
-- columns: InnoDB has no partial indexes; every index is valid once created
SELECT INDEX_NAME                                              AS index_name,
       GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX SEPARATOR ',') AS key_columns,
       MIN(NON_UNIQUE) = 0                                     AS is_unique,
       INDEX_NAME = 'PRIMARY'                                  AS is_primary,
       FALSE                                                   AS partial,
       TRUE                                                    AS valid
FROM information_schema.STATISTICS
WHERE TABLE_SCHEMA = :schema AND TABLE_NAME = :table
GROUP BY INDEX_NAME
ORDER BY INDEX_NAME
