-- answers: ghost records on the queue's indexes, from the cheap operational counters
--          (cumulative since the metadata was cached, not a current count; the exact count
--          needs dm_db_index_physical_stats in SAMPLED or DETAILED mode: --deep only)
-- params: :schema, :table
-- min version: SQL Server 2016
-- privilege: VIEW DATABASE STATE
-- cost: no page reads; takes an intent-shared lock on the table, bounded by LOCK_TIMEOUT
SELECT SUM(os.leaf_ghost_count)        AS ghost_records_cumulative,
       SUM(os.leaf_delete_count)       AS leaf_deletes_cumulative,
       SUM(os.row_lock_wait_count)     AS row_lock_waits_cumulative,
       SUM(os.row_lock_wait_in_ms)     AS row_lock_wait_ms_cumulative
FROM sys.objects AS o
JOIN sys.schemas AS s ON s.schema_id = o.schema_id
CROSS APPLY sys.dm_db_index_operational_stats(DB_ID(), o.object_id, NULL, NULL) AS os
WHERE s.name = :schema AND o.name = :table AND o.type = 'U'
