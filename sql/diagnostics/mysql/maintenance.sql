-- answers: whether InnoDB's persistent statistics of the queue table exist (the row in
--          mysql.innodb_table_stats, its row count and when it was last computed), beside the
--          table's auto-increment counter, which says whether rows were ever inserted, and
--          whether InnoDB recalculates them by itself (server and table setting)
-- params: :schema, :table
-- min version: MySQL 8.0 / MariaDB 10.6
-- privilege: SELECT on mysql.innodb_table_stats (error 1142 without it: then a note)
-- cost: one dictionary row and one row of a system table; takes no lock on the queue table
SELECT t.TABLE_ROWS        AS table_rows,
       t.AUTO_INCREMENT    AS next_id,
       s.n_rows            AS stats_rows,
       s.last_update       AS stats_updated,
       s.table_name IS NOT NULL AS stats_present,
       @@innodb_stats_auto_recalc = 1 AND @@innodb_stats_persistent = 1 AS auto_recalc_server,
       LOWER(t.CREATE_OPTIONS) LIKE '%stats_auto_recalc=0%' AS auto_recalc_table_off
FROM information_schema.TABLES AS t
LEFT JOIN mysql.innodb_table_stats AS s
       ON s.database_name = t.TABLE_SCHEMA AND s.table_name = t.TABLE_NAME
WHERE t.TABLE_SCHEMA = :schema AND t.TABLE_NAME = :table
