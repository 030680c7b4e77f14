-- answers: how many rows the queue table holds (InnoDB's sampled estimate, no scan), its size
--          and its free space
-- params: :schema, :table
-- min version: MySQL 8.0 / MariaDB 10.6 (MySQL 8 caches these figures unless the session sets
--              information_schema_stats_expiry = 0, which qadmin's sessions do)
-- privilege: any privilege on the table (TABLES lists only tables the user can see)
-- cost: one dictionary row; TABLE_ROWS may be 40-50 % off (MySQL docs). TABLES opens the
--       table under a high-priority shared metadata lock, granted while an ALTER TABLE waits
--       for the exclusive lock and while LOCK TABLES ... WRITE is held (both tested on
--       MariaDB); only a granted exclusive lock (the instant an ALTER swaps the table) makes
--       it wait, bounded by lock_wait_timeout
SELECT TABLE_ROWS                 AS estimated_rows,
       'information_schema.TABLES.TABLE_ROWS' AS estimate_source,
       DATA_LENGTH                AS table_bytes,
       INDEX_LENGTH               AS index_bytes,
       DATA_FREE                  AS free_bytes
FROM information_schema.TABLES
WHERE TABLE_SCHEMA = :schema AND TABLE_NAME = :table
