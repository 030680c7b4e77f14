-- answers: the oldest open InnoDB transactions: an old one keeps a read view that stops purge
--          (and so keeps delete-marked rows in the queue's indexes)
-- params: :sibling (another connection of the same qadmin run, never named a holder;
--         0: none)
-- min version: MySQL 8.0 / MariaDB 10.6
-- privilege: PROCESS (without it INNODB_TRX raises error 1227)
-- cost: INNODB_TRX is cheap; PROCESSLIST is read once
-- caveat: INNODB_TRX is a cache refilled only after 0.1 s without readers; under a monitor
--         polling it faster it shows transactions as they were when it was last filled
SELECT 'session'                                       AS holder_kind,
       CAST(t.trx_mysql_thread_id AS CHAR)             AS holder,
       p.USER                                          AS role,
       COALESCE(p.COMMAND, t.trx_state)                AS state,
       NULL                                            AS xmin_age_xids,
       GREATEST(TIMESTAMPDIFF(MICROSECOND, t.trx_started, NOW(6)) / 1000000, 0) AS xact_age_s,
       LEFT(COALESCE(t.trx_query, p.INFO, ''), 200)    AS detail
FROM information_schema.INNODB_TRX AS t
LEFT JOIN information_schema.PROCESSLIST AS p ON p.ID = t.trx_mysql_thread_id
WHERE t.trx_mysql_thread_id NOT IN (CONNECTION_ID(), :sibling)
ORDER BY t.trx_started
LIMIT 10
