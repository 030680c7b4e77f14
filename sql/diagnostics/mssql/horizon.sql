-- answers: the oldest open transactions: under snapshot isolation or RCSI an old one holds the
--          version store, and version ghosts in the queue cannot be cleaned up
-- params: :sibling (another connection of the same qadmin run, never named a holder;
--         0: none)
-- min version: SQL Server 2016
-- privilege: VIEW SERVER STATE
-- cost: DMVs only
SELECT TOP (10)
       N'session'                                                  AS holder_kind,
       CAST(st.session_id AS nvarchar(20))                         AS holder,
       es.login_name                                               AS role,
       es.status                                                   AS state,
       CAST(NULL AS bigint)                                        AS xmin_age_xids,
       DATEDIFF(SECOND, at.transaction_begin_time, SYSDATETIME())  AS xact_age_s,
       es.program_name                                             AS detail
FROM sys.dm_tran_active_transactions AS at
JOIN sys.dm_tran_session_transactions AS st ON st.transaction_id = at.transaction_id
JOIN sys.dm_exec_sessions AS es ON es.session_id = st.session_id
WHERE st.session_id NOT IN (@@SPID, :sibling)
ORDER BY at.transaction_begin_time
