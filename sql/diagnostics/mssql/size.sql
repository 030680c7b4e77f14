-- answers: rows in the queue table (partition statistics, no scan) and its size
-- params: :schema, :table (names joined, never OBJECT_ID(): a NULL id means "every object")
-- min version: SQL Server 2016
-- privilege: VIEW DATABASE STATE (2022+: VIEW DATABASE PERFORMANCE STATE)
-- cost: metadata only
SELECT SUM(CASE WHEN ps.index_id IN (0, 1) THEN ps.row_count ELSE 0 END) AS estimated_rows,
       N'sys.dm_db_partition_stats.row_count'                           AS estimate_source,
       SUM(CASE WHEN ps.index_id IN (0, 1) THEN ps.used_page_count ELSE 0 END) * 8192
                                                                        AS table_bytes,
       SUM(CASE WHEN ps.index_id > 1 THEN ps.used_page_count ELSE 0 END) * 8192
                                                                        AS index_bytes,
       SUM(ps.used_page_count)                                          AS pages
FROM sys.dm_db_partition_stats AS ps
JOIN sys.objects AS o ON o.object_id = ps.object_id
JOIN sys.schemas AS s ON s.schema_id = o.schema_id
WHERE s.name = :schema AND o.name = :table
