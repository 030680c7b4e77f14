-- answers: sessions waiting on a lock of the queue table, who blocks each, how long: InnoDB
--          row-lock waits, and metadata-lock waits (an ALTER TABLE or LOCK TABLES waiting
--          behind an open transaction, and every later statement on the table queued behind
--          it: the pile-up of a lock incident), `lock` = 'metadata lock (table)'
-- params: :schema, :table, :sibling (another connection of the same qadmin run, never listed:
--         its own short wait is the diagnostics'; 0: none)
-- min version: MySQL 8.0.1 (performance_schema.data_lock_waits; metadata_locks instrumented,
--              the default since 8.0)
-- privilege: PROCESS, and SELECT on performance_schema
-- cost: reads data_lock_waits first and joins data_locks by its key only: a scan of all of
--       data_locks holds InnoDB's lock-system mutex (MySQL bug #111082); metadata_locks is
--       filtered to the queue table. No metadata lock is taken on the queue table.
-- caveat: INNODB_TRX (the waiting and blocking transactions' details) is a cache refilled only
--         after 0.1 s without readers; under a monitor polling it faster it can lag
-- UNVERIFIED: the metadata-lock half has not run against a MySQL 8 server (none here; the
--       MariaDB flavour has its own file). A metadata-lock blocker is a session holding a
--       GRANTED lock on the table while not waiting itself: the root of the queue, as the
--       MariaDB file reports it (a SELECT queued behind a waiting ALTER names the ALTER's
--       blocker, not the ALTER).
SELECT CAST(r.trx_mysql_thread_id AS CHAR)                        AS waiter,
       CAST(b.trx_mysql_thread_id AS CHAR)                        AS blocker,
       CONCAT(rl.LOCK_TYPE, ' ', rl.LOCK_MODE, ' on ', COALESCE(rl.INDEX_NAME, 'table'))
                                                                  AS `lock`,
       GREATEST(TIMESTAMPDIFF(MICROSECOND, r.trx_wait_started, NOW(6)) / 1000000, 0) AS wait_s,
       b.trx_state                                                AS blocker_state,
       GREATEST(TIMESTAMPDIFF(MICROSECOND, b.trx_started, NOW(6)) / 1000000, 0) AS blocker_xact_age_s,
       LEFT(r.trx_query, 200)                                     AS waiter_query,
       LEFT(b.trx_query, 200)                                     AS blocker_query,
       'data_lock_waits'                                          AS blocker_source,
       CAST(b.trx_mysql_thread_id AS CHAR)                        AS root_blocker
FROM performance_schema.data_lock_waits AS w
JOIN performance_schema.data_locks AS rl
  ON rl.ENGINE = w.ENGINE AND rl.ENGINE_LOCK_ID = w.REQUESTING_ENGINE_LOCK_ID
JOIN information_schema.INNODB_TRX AS r ON r.trx_id = w.REQUESTING_ENGINE_TRANSACTION_ID
JOIN information_schema.INNODB_TRX AS b ON b.trx_id = w.BLOCKING_ENGINE_TRANSACTION_ID
WHERE rl.OBJECT_SCHEMA = :schema AND rl.OBJECT_NAME = :table
UNION ALL
SELECT CAST(wt.PROCESSLIST_ID AS CHAR),
       CAST(ht.PROCESSLIST_ID AS CHAR),
       'metadata lock (table)',
       wt.PROCESSLIST_TIME,
       COALESCE(t.trx_state, ht.PROCESSLIST_STATE, ht.PROCESSLIST_COMMAND),
       TIMESTAMPDIFF(MICROSECOND, t.trx_started, NOW(6)) / 1000000,
       LEFT(wt.PROCESSLIST_INFO, 200),
       LEFT(COALESCE(t.trx_query, ht.PROCESSLIST_INFO), 200),
       CONCAT('metadata_locks: ', h.LOCK_TYPE),
       CAST(ht.PROCESSLIST_ID AS CHAR)
FROM performance_schema.metadata_locks AS p
JOIN performance_schema.threads AS wt ON wt.THREAD_ID = p.OWNER_THREAD_ID
JOIN performance_schema.metadata_locks AS h
  ON h.OBJECT_TYPE = p.OBJECT_TYPE AND h.OBJECT_SCHEMA = p.OBJECT_SCHEMA
 AND h.OBJECT_NAME = p.OBJECT_NAME AND h.LOCK_STATUS = 'GRANTED'
 AND h.OWNER_THREAD_ID <> p.OWNER_THREAD_ID
JOIN performance_schema.threads AS ht ON ht.THREAD_ID = h.OWNER_THREAD_ID
LEFT JOIN information_schema.INNODB_TRX AS t ON t.trx_mysql_thread_id = ht.PROCESSLIST_ID
WHERE p.OBJECT_TYPE = 'TABLE' AND p.OBJECT_SCHEMA = :schema AND p.OBJECT_NAME = :table
  AND p.LOCK_STATUS = 'PENDING'
  AND wt.PROCESSLIST_ID <> :sibling
  AND NOT EXISTS (SELECT 1 FROM performance_schema.metadata_locks AS hp
                   WHERE hp.OWNER_THREAD_ID = h.OWNER_THREAD_ID AND hp.LOCK_STATUS = 'PENDING')
ORDER BY wait_s DESC
