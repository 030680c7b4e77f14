-- Online maintenance of one queue table on MariaDB 10.11 and MySQL 8 (qadmin maintain). Reads
-- first, then the actions, each stated with its lock.
-- min version: MySQL 8.0 / MariaDB 10.6
-- privilege: ALTER, INSERT and SELECT on the table (ALTER TABLE, OPTIMIZE, ANALYZE)

-- name: online
-- answers: whether the table can be rebuilt in place without blocking writes: its storage
--          engine, and its FULLTEXT and SPATIAL indexes (either forces a copying,
--          write-blocking rebuild); and InnoDB's page size, to tell a mostly empty table
-- params: :schema, :table
-- cost: dictionary rows only; no lock on the table
SELECT t.ENGINE AS storage_engine, @@innodb_page_size AS page_size,
       (SELECT COUNT(DISTINCT s.INDEX_NAME) FROM information_schema.STATISTICS AS s
         WHERE s.TABLE_SCHEMA = t.TABLE_SCHEMA AND s.TABLE_NAME = t.TABLE_NAME
           AND s.INDEX_TYPE IN ('FULLTEXT', 'SPATIAL')) AS blocking_indexes
FROM information_schema.TABLES AS t
WHERE t.TABLE_SCHEMA = :schema AND t.TABLE_NAME = :table

-- name: rebuild
-- Fails (rather than blocking writes) when the server cannot rebuild this table online.
ALTER TABLE {table} FORCE, ALGORITHM=INPLACE, LOCK=NONE

-- name: optimize
OPTIMIZE TABLE {table}

-- name: analyze
ANALYZE TABLE {table}
