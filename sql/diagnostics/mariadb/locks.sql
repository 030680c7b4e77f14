-- answers: sessions waiting on a lock of the queue table, who blocks each, how long: InnoDB
--          row-lock waits, and metadata-lock waits (an ALTER TABLE or LOCK TABLES waiting
--          behind an open transaction, and every later statement on the table queued behind
--          it: the pile-up of a lock incident), `lock` = 'metadata lock (table)'
-- params: :schema, :table
-- min version: MariaDB 10.6 (MariaDB has no performance_schema.data_locks; it keeps
--              INNODB_LOCKS / INNODB_LOCK_WAITS, which MySQL 8 removed)
-- privilege: PROCESS (error 1227 without it; without it PROCESSLIST shows only your sessions)
-- cost: INNODB_LOCKS lists only locks involved in a wait; PROCESSLIST and INNODB_TRX are
--       read once. No metadata lock is taken on the queue table.
-- holders of a metadata lock: MariaDB shows them only in information_schema.METADATA_LOCK_INFO,
--       which exists with the metadata_lock_info plugin (qadmin never installs it). With the
--       plugin: the sessions holding a granted lock on the table. Without it they are
--       inferred: sessions whose default database is the queue's, with an InnoDB transaction
--       that started before the wait began, not waiting themselves (blocker_source says
--       which). Not inferred: LOCK TABLES held outside a transaction, and holders working
--       from another default database. Waiters: PROCESSLIST rows in state 'Waiting for table
--       metadata lock' whose statement names the table. The anonymous block picks the branch
--       at run time, so the plugin's table is resolved only when it exists. A metadata-lock
--       blocker is the root of the queue (a SELECT behind a waiting ALTER names the ALTER's
--       blocker), so root_blocker = blocker.
BEGIN NOT ATOMIC
    IF EXISTS (SELECT 1 FROM information_schema.PLUGINS
                WHERE PLUGIN_NAME = 'METADATA_LOCK_INFO' AND PLUGIN_STATUS = 'ACTIVE') THEN
        SELECT CAST(r.trx_mysql_thread_id AS CHAR)                        AS waiter,
               CAST(b.trx_mysql_thread_id AS CHAR)                        AS blocker,
               CONCAT(rl.lock_type, ' ', rl.lock_mode, ' on ', COALESCE(rl.lock_index, 'table'))
                                                                          AS `lock`,
               TIMESTAMPDIFF(MICROSECOND, r.trx_wait_started, NOW(6)) / 1000000 AS wait_s,
               b.trx_state                                                AS blocker_state,
               TIMESTAMPDIFF(MICROSECOND, b.trx_started, NOW(6)) / 1000000 AS blocker_xact_age_s,
               LEFT(r.trx_query, 200)                                     AS waiter_query,
               LEFT(b.trx_query, 200)                                     AS blocker_query,
               'innodb_lock_waits'                                        AS blocker_source,
               CAST(b.trx_mysql_thread_id AS CHAR)                        AS root_blocker
        FROM information_schema.INNODB_LOCK_WAITS AS w
        JOIN information_schema.INNODB_TRX AS r ON r.trx_id = w.requesting_trx_id
        JOIN information_schema.INNODB_TRX AS b ON b.trx_id = w.blocking_trx_id
        JOIN information_schema.INNODB_LOCKS AS rl ON rl.lock_id = w.requested_lock_id
        WHERE rl.lock_table = CONCAT('`', REPLACE(:schema, '`', '``'), '`.`',
                                     REPLACE(:table, '`', '``'), '`')
        UNION ALL
        SELECT CAST(w.ID AS CHAR),
               CAST(h.ID AS CHAR),
               'metadata lock (table)',
               w.TIME_MS / 1000,
               COALESCE(t.trx_state, NULLIF(h.STATE, ''), h.COMMAND),
               TIMESTAMPDIFF(MICROSECOND, t.trx_started, NOW(6)) / 1000000,
               LEFT(w.INFO, 200),
               LEFT(COALESCE(t.trx_query, h.INFO), 200),
               CONCAT('metadata_lock_info: ', m.LOCK_MODE),
               CAST(h.ID AS CHAR)
        FROM information_schema.PROCESSLIST AS w
        JOIN information_schema.METADATA_LOCK_INFO AS m
          ON m.TABLE_SCHEMA = :schema AND m.TABLE_NAME = :table
         AND m.THREAD_ID NOT IN (w.ID, CONNECTION_ID())
        JOIN information_schema.PROCESSLIST AS h ON h.ID = m.THREAD_ID
        LEFT JOIN information_schema.INNODB_TRX AS t ON t.trx_mysql_thread_id = h.ID
        WHERE w.STATE = 'Waiting for table metadata lock'
          AND w.INFO REGEXP CONCAT('(^|[^A-Za-z0-9_$])`?', :table, '`?([^A-Za-z0-9_$]|$)')
          AND (w.DB = :schema OR w.INFO REGEXP CONCAT('`?', :schema, '`?[.]'))
          AND COALESCE(h.STATE, '') <> 'Waiting for table metadata lock'
        ORDER BY wait_s DESC;
    ELSE
        SELECT CAST(r.trx_mysql_thread_id AS CHAR)                        AS waiter,
               CAST(b.trx_mysql_thread_id AS CHAR)                        AS blocker,
               CONCAT(rl.lock_type, ' ', rl.lock_mode, ' on ', COALESCE(rl.lock_index, 'table'))
                                                                          AS `lock`,
               TIMESTAMPDIFF(MICROSECOND, r.trx_wait_started, NOW(6)) / 1000000 AS wait_s,
               b.trx_state                                                AS blocker_state,
               TIMESTAMPDIFF(MICROSECOND, b.trx_started, NOW(6)) / 1000000 AS blocker_xact_age_s,
               LEFT(r.trx_query, 200)                                     AS waiter_query,
               LEFT(b.trx_query, 200)                                     AS blocker_query,
               'innodb_lock_waits'                                        AS blocker_source,
               CAST(b.trx_mysql_thread_id AS CHAR)                        AS root_blocker
        FROM information_schema.INNODB_LOCK_WAITS AS w
        JOIN information_schema.INNODB_TRX AS r ON r.trx_id = w.requesting_trx_id
        JOIN information_schema.INNODB_TRX AS b ON b.trx_id = w.blocking_trx_id
        JOIN information_schema.INNODB_LOCKS AS rl ON rl.lock_id = w.requested_lock_id
        WHERE rl.lock_table = CONCAT('`', REPLACE(:schema, '`', '``'), '`.`',
                                     REPLACE(:table, '`', '``'), '`')
        UNION ALL
        SELECT CAST(w.ID AS CHAR),
               CAST(h.ID AS CHAR),
               'metadata lock (table)',
               w.TIME_MS / 1000,
               t.trx_state,
               TIMESTAMPDIFF(MICROSECOND, t.trx_started, NOW(6)) / 1000000,
               LEFT(w.INFO, 200),
               LEFT(COALESCE(t.trx_query, h.INFO), 200),
               'inferred: open transaction in this database that began before the wait',
               CAST(h.ID AS CHAR)
        FROM information_schema.PROCESSLIST AS w
        JOIN information_schema.INNODB_TRX AS t
          ON t.trx_started <= NOW(6) - INTERVAL ROUND(w.TIME_MS * 1000) MICROSECOND
         AND t.trx_mysql_thread_id NOT IN (w.ID, CONNECTION_ID())
        JOIN information_schema.PROCESSLIST AS h ON h.ID = t.trx_mysql_thread_id
        WHERE w.STATE = 'Waiting for table metadata lock'
          AND w.INFO REGEXP CONCAT('(^|[^A-Za-z0-9_$])`?', :table, '`?([^A-Za-z0-9_$]|$)')
          AND (w.DB = :schema OR w.INFO REGEXP CONCAT('`?', :schema, '`?[.]'))
          AND h.DB = :schema
          AND COALESCE(h.STATE, '') <> 'Waiting for table metadata lock'
        ORDER BY wait_s DESC;
    END IF;
END
