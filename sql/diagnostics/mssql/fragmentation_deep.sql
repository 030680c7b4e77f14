-- answers: page density and ghost records of each index of the queue table (SAMPLED mode: the
--          ghost counters are NULL in the default LIMITED mode)
-- params: :schema, :table, :max_pages (refuse above this many pages)
-- min version: SQL Server 2016
-- privilege: VIEW DATABASE STATE
-- cost: SAMPLED reads 1 % of leaf pages, and every page below 10,000 pages (it runs as
--       DETAILED then); refused above :max_pages. A missing table is an error, never a
--       whole-database scan
DECLARE @object_id int = (
    SELECT o.object_id FROM sys.objects AS o
    JOIN sys.schemas AS s ON s.schema_id = o.schema_id
    WHERE s.name = :schema AND o.name = :table AND o.type = 'U');
IF @object_id IS NULL
    THROW 50001, N'queue table not found: refusing a whole-database scan', 1;
IF (SELECT SUM(used_page_count) FROM sys.dm_db_partition_stats WHERE object_id = @object_id)
   > :max_pages
    THROW 50002, N'queue table is larger than --max-pages: deep scan refused', 1;
SELECT i.name                              AS index_name,
       ips.page_count                      AS pages,
       ips.avg_page_space_used_in_percent  AS page_density_pct,
       ips.avg_fragmentation_in_percent    AS fragmentation_pct,
       ips.ghost_record_count              AS ghost_records,
       ips.version_ghost_record_count      AS version_ghost_records
FROM sys.dm_db_index_physical_stats(DB_ID(), @object_id, NULL, NULL, 'SAMPLED') AS ips
JOIN sys.indexes AS i ON i.object_id = ips.object_id AND i.index_id = ips.index_id
WHERE ips.alloc_unit_type_desc = 'IN_ROW_DATA' AND ips.index_level = 0
ORDER BY i.name;
