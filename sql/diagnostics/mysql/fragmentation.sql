-- answers: each index of the queue table: pages and leaf pages from InnoDB's persistent
--          statistics (updated by ANALYZE TABLE and automatic recalculation)
-- params: :schema, :table
-- min version: MySQL 8.0 / MariaDB 10.6
-- privilege: SELECT on mysql.innodb_index_stats (error 1142 without it)
-- cost: a few rows of a system table
SELECT index_name                                                     AS index_name,
       MAX(CASE WHEN stat_name = 'size' THEN stat_value END)          AS pages,
       MAX(CASE WHEN stat_name = 'n_leaf_pages' THEN stat_value END)  AS leaf_pages,
       MAX(CASE WHEN stat_name = 'size' THEN stat_value END) * @@innodb_page_size AS index_bytes,
       MAX(last_update)                                               AS stats_updated
FROM mysql.innodb_index_stats
WHERE database_name = :schema AND table_name = :table
GROUP BY index_name
ORDER BY index_name
