-- answers: row-lock waits on the queue table: waiter, blocker, lock, wait time
-- params: :schema, :table
-- min version: MariaDB 10.6 (MariaDB has no performance_schema.data_locks; it keeps
--              INNODB_LOCKS / INNODB_LOCK_WAITS, which MySQL 8 removed)
-- privilege: PROCESS (error 1227 without it)
-- cost: INNODB_LOCKS lists only locks involved in a wait
SELECT CAST(r.trx_mysql_thread_id AS CHAR)                        AS waiter,
       CAST(b.trx_mysql_thread_id AS CHAR)                        AS blocker,
       CONCAT(rl.lock_type, ' ', rl.lock_mode, ' on ', COALESCE(rl.lock_index, 'table'))
                                                                  AS `lock`,
       TIMESTAMPDIFF(MICROSECOND, r.trx_wait_started, NOW(6)) / 1000000 AS wait_s,
       b.trx_state                                                AS blocker_state,
       TIMESTAMPDIFF(MICROSECOND, b.trx_started, NOW(6)) / 1000000 AS blocker_xact_age_s,
       LEFT(r.trx_query, 200)                                     AS waiter_query,
       LEFT(b.trx_query, 200)                                     AS blocker_query
FROM information_schema.INNODB_LOCK_WAITS AS w
JOIN information_schema.INNODB_TRX AS r ON r.trx_id = w.requesting_trx_id
JOIN information_schema.INNODB_TRX AS b ON b.trx_id = w.blocking_trx_id
JOIN information_schema.INNODB_LOCKS AS rl ON rl.lock_id = w.requested_lock_id
WHERE rl.lock_table = CONCAT('`', REPLACE(:schema, '`', '``'), '`.`', REPLACE(:table, '`', '``'), '`')
ORDER BY wait_s DESC
