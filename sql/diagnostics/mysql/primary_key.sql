-- answers: the primary key columns of a table, in key order (to find a hand-built queue's
--          ordering key)
-- params: :schema, :table
-- min version: MySQL 8.0 / MariaDB 10.6
-- privilege: any privilege on the table
-- cost: dictionary only
SELECT COLUMN_NAME AS column_name
FROM information_schema.KEY_COLUMN_USAGE
WHERE TABLE_SCHEMA = :schema AND TABLE_NAME = :table AND CONSTRAINT_NAME = 'PRIMARY'
ORDER BY ORDINAL_POSITION
