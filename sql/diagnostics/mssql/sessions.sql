-- answers: which sessions exist, to tell whether a stale claim's consumer is still connected
-- params: none
-- min version: SQL Server 2016
-- privilege: VIEW SERVER STATE (without it: only your own session, a partial view)
-- cost: DMV only
SELECT CAST(session_id AS nvarchar(20)) AS session FROM sys.dm_exec_sessions
