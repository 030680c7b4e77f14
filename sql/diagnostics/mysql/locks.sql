-- answers: row-lock waits on the queue table: waiter, blocker, lock, wait time
-- params: :schema, :table
-- min version: MySQL 8.0.1 (performance_schema.data_lock_waits)
-- privilege: PROCESS, and SELECT on performance_schema
-- cost: reads data_lock_waits first and joins data_locks by its key only: a scan of all of
--       data_locks holds InnoDB's lock-system mutex (MySQL bug #111082)
SELECT CAST(r.trx_mysql_thread_id AS CHAR)                        AS waiter,
       CAST(b.trx_mysql_thread_id AS CHAR)                        AS blocker,
       CONCAT(rl.LOCK_TYPE, ' ', rl.LOCK_MODE, ' on ', COALESCE(rl.INDEX_NAME, 'table'))
                                                                  AS `lock`,
       TIMESTAMPDIFF(MICROSECOND, r.trx_wait_started, NOW(6)) / 1000000 AS wait_s,
       b.trx_state                                                AS blocker_state,
       TIMESTAMPDIFF(MICROSECOND, b.trx_started, NOW(6)) / 1000000 AS blocker_xact_age_s,
       LEFT(r.trx_query, 200)                                     AS waiter_query,
       LEFT(b.trx_query, 200)                                     AS blocker_query
FROM performance_schema.data_lock_waits AS w
JOIN performance_schema.data_locks AS rl
  ON rl.ENGINE = w.ENGINE AND rl.ENGINE_LOCK_ID = w.REQUESTING_ENGINE_LOCK_ID
JOIN information_schema.INNODB_TRX AS r ON r.trx_id = w.REQUESTING_ENGINE_TRANSACTION_ID
JOIN information_schema.INNODB_TRX AS b ON b.trx_id = w.BLOCKING_ENGINE_TRANSACTION_ID
WHERE rl.OBJECT_SCHEMA = :schema AND rl.OBJECT_NAME = :table
ORDER BY wait_s DESC
