-- answers: delete-marked rows waiting for purge: InnoDB's history list length (undo logs of
--          committed transactions not yet purged; server-wide, all databases, not this
--          table's rows: history_list_scope says so in the report)
-- params: none
-- min version: MySQL 8.0 (stock MySQL has no Innodb_history_list_length status variable)
-- privilege: PROCESS
-- cost: one metrics row
SELECT `COUNT` AS history_list_length,
       'server-wide' AS history_list_scope
FROM information_schema.INNODB_METRICS
WHERE NAME = 'trx_rseg_history_len'
