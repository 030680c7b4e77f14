-- answers: sessions waiting on a lock of the queue table, who blocks each, how long: InnoDB
--          row-lock waits, and metadata-lock waits (an ALTER TABLE or LOCK TABLES waiting
--          behind an open transaction, and every later statement on the table queued behind
--          it: the pile-up of a lock incident), `lock` = 'metadata lock (table)'
-- params: :schema, :table, :sibling (another connection of the same qadmin run, never named a
--         holder; 0: none)
-- min version: MariaDB 10.6 (MariaDB has no performance_schema.data_locks; it keeps
--              INNODB_LOCKS / INNODB_LOCK_WAITS, which MySQL 8 removed)
-- privilege: PROCESS (error 1227 without it; without it PROCESSLIST shows only your sessions)
-- cost: INNODB_LOCKS lists only locks involved in a wait; PROCESSLIST and INNODB_TRX are
--       read once. No metadata lock is taken on the queue table.
-- holders of a metadata lock: MariaDB shows them only in information_schema.METADATA_LOCK_INFO,
--       which exists with the metadata_lock_info plugin (qadmin never installs it). With the
--       plugin: the sessions holding a granted lock on the table (blocker_source names the
--       lock mode). Without it the holder is a guess, blocker_source = 'inferred': an InnoDB
--       transaction of a session whose default database is the queue's, not waiting itself,
--       that began before the wait; the likeliest first (its statement names the table, else
--       it locks or uses tables, else the newest), the other such sessions in `candidates`.
--       When none fits (LOCK TABLES held outside a transaction, a holder working from another
--       default database) blocker and root_blocker are NULL, blocker_source = 'unknown'.
-- waiters: every PROCESSLIST row in state 'Waiting for table metadata lock' whose statement
--       names the table, once each, whatever the holder. A statement queued behind a pending
--       exclusive request (ALTER, LOCK TABLES ... WRITE, RENAME, DROP, TRUNCATE, CREATE INDEX,
--       OPTIMIZE waiting longer) is blocked by that request's session; root_blocker is the
--       holder the request waits for. The anonymous block picks the branch at run time, so
--       the plugin's table is resolved only when it exists.
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
               CAST(b.trx_mysql_thread_id AS CHAR)                        AS root_blocker,
               CAST(NULL AS CHAR)                                         AS candidates
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
               CAST(h.ID AS CHAR),
               NULL
        FROM information_schema.PROCESSLIST AS w
        JOIN information_schema.METADATA_LOCK_INFO AS m
          ON m.TABLE_SCHEMA = :schema AND m.TABLE_NAME = :table
         AND m.THREAD_ID NOT IN (w.ID, CONNECTION_ID(), :sibling)
        JOIN information_schema.PROCESSLIST AS h ON h.ID = m.THREAD_ID
        LEFT JOIN information_schema.INNODB_TRX AS t ON t.trx_mysql_thread_id = h.ID
        WHERE w.STATE = 'Waiting for table metadata lock'
          AND w.ID <> :sibling
          AND w.INFO REGEXP CONCAT('(^|[^A-Za-z0-9_$])`?', :table, '`?([^A-Za-z0-9_$]|$)')
          AND (w.DB = :schema OR w.INFO REGEXP CONCAT('`?', :schema, '`?[.]'))
          AND COALESCE(h.STATE, '') <> 'Waiting for table metadata lock'
        ORDER BY wait_s DESC;
    ELSE
        WITH waiter AS (
            SELECT w.ID, w.INFO, w.TIME_MS,
                   NOW(6) - INTERVAL ROUND(w.TIME_MS * 1000) MICROSECOND AS since,
                   LTRIM(w.INFO) REGEXP CONCAT('^(ALTER|RENAME|DROP|TRUNCATE|OPTIMIZE|',
                                               'CREATE( UNIQUE| FULLTEXT| SPATIAL)? INDEX|',
                                               'LOCK TABLES? .*WRITE)')   AS exclusive
            FROM information_schema.PROCESSLIST AS w
            WHERE w.STATE = 'Waiting for table metadata lock'
              AND w.ID NOT IN (CONNECTION_ID(), :sibling)
              AND w.INFO REGEXP CONCAT('(^|[^A-Za-z0-9_$])`?', :table, '`?([^A-Za-z0-9_$]|$)')
              AND (w.DB = :schema OR w.INFO REGEXP CONCAT('`?', :schema, '`?[.]'))
        ),
        ahead AS (
            SELECT r.ID AS waiter, d.ID AS request,
                   ROW_NUMBER() OVER (PARTITION BY r.ID ORDER BY d.TIME_MS DESC, d.ID) AS n
            FROM waiter AS r
            JOIN waiter AS d ON d.exclusive AND d.TIME_MS > r.TIME_MS
            WHERE NOT r.exclusive
        ),
        queued AS (
            SELECT w.ID, w.INFO, w.TIME_MS, a.request,
                   COALESCE(a.request, w.ID) AS head
            FROM waiter AS w
            LEFT JOIN ahead AS a ON a.waiter = w.ID AND a.n = 1
        ),
        candidate AS (
            SELECT w.ID AS waiter, t.trx_mysql_thread_id AS holder,
                   ROW_NUMBER() OVER (
                       PARTITION BY w.ID
                       ORDER BY COALESCE(t.trx_query, h.INFO, '')
                                    REGEXP CONCAT('(^|[^A-Za-z0-9_$])`?', :table,
                                                  '`?([^A-Za-z0-9_$]|$)') DESC,
                                t.trx_tables_locked + t.trx_tables_in_use > 0 DESC,
                                t.trx_started DESC, t.trx_mysql_thread_id DESC) AS n
            FROM waiter AS w
            JOIN information_schema.INNODB_TRX AS t
              ON t.trx_started <= w.since
             AND t.trx_mysql_thread_id NOT IN (CONNECTION_ID(), :sibling)
             AND t.trx_mysql_thread_id NOT IN (SELECT ID FROM waiter)
            JOIN information_schema.PROCESSLIST AS h ON h.ID = t.trx_mysql_thread_id
            WHERE h.DB = :schema
              AND COALESCE(h.STATE, '') <> 'Waiting for table metadata lock'
        ),
        guess AS (
            SELECT waiter,
                   MAX(CASE WHEN n = 1 THEN holder END) AS holder,
                   GROUP_CONCAT(CASE WHEN n > 1 THEN holder END ORDER BY n SEPARATOR ',')
                                                                          AS others
            FROM candidate
            GROUP BY waiter
        )
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
               CAST(b.trx_mysql_thread_id AS CHAR)                        AS root_blocker,
               CAST(NULL AS CHAR)                                         AS candidates
        FROM information_schema.INNODB_LOCK_WAITS AS w
        JOIN information_schema.INNODB_TRX AS r ON r.trx_id = w.requesting_trx_id
        JOIN information_schema.INNODB_TRX AS b ON b.trx_id = w.blocking_trx_id
        JOIN information_schema.INNODB_LOCKS AS rl ON rl.lock_id = w.requested_lock_id
        WHERE rl.lock_table = CONCAT('`', REPLACE(:schema, '`', '``'), '`.`',
                                     REPLACE(:table, '`', '``'), '`')
        UNION ALL
        SELECT CAST(q.ID AS CHAR),
               CAST(COALESCE(q.request, g.holder) AS CHAR),
               'metadata lock (table)',
               q.TIME_MS / 1000,
               COALESCE(t.trx_state, NULLIF(b.STATE, ''), b.COMMAND),
               TIMESTAMPDIFF(MICROSECOND, t.trx_started, NOW(6)) / 1000000,
               LEFT(q.INFO, 200),
               LEFT(COALESCE(t.trx_query, b.INFO), 200),
               CASE WHEN g.holder IS NULL THEN 'unknown' ELSE 'inferred' END,
               CAST(g.holder AS CHAR),
               g.others
        FROM queued AS q
        LEFT JOIN guess AS g ON g.waiter = q.head
        LEFT JOIN information_schema.PROCESSLIST AS b ON b.ID = COALESCE(q.request, g.holder)
        LEFT JOIN information_schema.INNODB_TRX AS t ON t.trx_mysql_thread_id = b.ID
        ORDER BY wait_s DESC;
    END IF;
END
