-- answers: whether InnoDB's persistent statistics of the queue table exist (the row in
--          mysql.innodb_table_stats, its row count and when it was last computed), beside the
--          table's auto-increment counter, which says whether rows were ever inserted
-- params: :schema, :table
-- min version: MySQL 8.0 / MariaDB 10.6
-- privilege: SELECT on mysql.innodb_table_stats (error 1142 without it: then a note)
-- cost: one dictionary row and one row of a system table; takes no lock on the queue table
SELECT t.TABLE_ROWS        AS table_rows,
       t.AUTO_INCREMENT    AS next_id,
       s.n_rows            AS stats_rows,
       s.last_update       AS stats_updated,
       s.table_name IS NOT NULL AS stats_present
FROM information_schema.TABLES AS t
LEFT JOIN mysql.innodb_table_stats AS s
       ON s.database_name = t.TABLE_SCHEMA AND s.table_name = t.TABLE_NAME
WHERE t.TABLE_SCHEMA = :schema AND t.TABLE_NAME = :table
