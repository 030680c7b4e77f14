-- answers: cumulative leaf-level insert / delete / update counts of the queue's table
--          (heap or clustered index), sampled twice to give rates
-- params: :schema, :table
-- min version: SQL Server 2016
-- privilege: VIEW DATABASE STATE
-- cost: no page reads; counters reset when the metadata cache entry is evicted
SELECT SUM(os.leaf_insert_count) AS inserted,
       SUM(os.leaf_update_count) AS updated,
       SUM(os.leaf_delete_count) AS deleted
FROM sys.objects AS o
JOIN sys.schemas AS s ON s.schema_id = o.schema_id
CROSS APPLY sys.dm_db_index_operational_stats(DB_ID(), o.object_id, NULL, NULL) AS os
WHERE s.name = :schema AND o.name = :table AND o.type = 'U' AND os.index_id IN (0, 1)
