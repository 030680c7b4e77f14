-- answers: logical fragmentation and page counts of each index of the queue table
-- params: :schema, :table
-- min version: SQL Server 2016
-- privilege: VIEW DATABASE STATE
-- cost: LIMITED mode reads only the levels above the leaf. The object id is resolved first and
--       a missing table is an error: a NULL object id would make the function scan every object
DECLARE @object_id int = (
    SELECT o.object_id FROM sys.objects AS o
    JOIN sys.schemas AS s ON s.schema_id = o.schema_id
    WHERE s.name = :schema AND o.name = :table AND o.type = 'U');
IF @object_id IS NULL
    THROW 50001, N'queue table not found: refusing a whole-database scan', 1;
SELECT i.name                            AS index_name,
       ips.page_count                    AS pages,
       ips.avg_fragmentation_in_percent  AS fragmentation_pct,
       i.fill_factor                     AS fill_factor
FROM sys.dm_db_index_physical_stats(DB_ID(), @object_id, NULL, NULL, 'LIMITED') AS ips
JOIN sys.indexes AS i ON i.object_id = ips.object_id AND i.index_id = ips.index_id
WHERE ips.alloc_unit_type_desc = 'IN_ROW_DATA' AND ips.index_level = 0
ORDER BY i.name;
