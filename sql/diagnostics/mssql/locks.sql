-- answers: sessions waiting on a lock on the queue table, who blocks each, how long
-- params: :schema, :table
-- min version: SQL Server 2016
-- privilege: VIEW SERVER STATE
-- cost: DMVs only
SELECT CAST(wt.session_id AS nvarchar(20))          AS waiter,
       CAST(wt.blocking_session_id AS nvarchar(20)) AS blocker,
       tl.resource_type + N' ' + tl.request_mode    AS [lock],
       wt.wait_duration_ms / 1000.0                 AS wait_s,
       bs.status                                    AS blocker_state,
       CAST(NULL AS float)                          AS blocker_xact_age_s,
       CAST(NULL AS nvarchar(200))                  AS waiter_query,
       CAST(NULL AS nvarchar(200))                  AS blocker_query
FROM sys.dm_os_waiting_tasks AS wt
JOIN sys.dm_tran_locks AS tl ON tl.lock_owner_address = wt.resource_address
LEFT JOIN sys.dm_exec_sessions AS bs ON bs.session_id = wt.blocking_session_id
WHERE tl.resource_database_id = DB_ID()
  AND (tl.resource_associated_entity_id IN (
           SELECT p.hobt_id FROM sys.partitions AS p
           JOIN sys.objects AS o ON o.object_id = p.object_id
           JOIN sys.schemas AS s ON s.schema_id = o.schema_id
           WHERE s.name = :schema AND o.name = :table)
       OR tl.resource_associated_entity_id IN (
           SELECT o.object_id FROM sys.objects AS o
           JOIN sys.schemas AS s ON s.schema_id = o.schema_id
           WHERE s.name = :schema AND o.name = :table))
ORDER BY wt.wait_duration_ms DESC
