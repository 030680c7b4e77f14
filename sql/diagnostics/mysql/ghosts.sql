-- answers: delete-marked rows waiting for purge: InnoDB's history list length (undo logs of
--          committed transactions not yet purged; global, and not a row count)
-- params: none
-- min version: MySQL 8.0 (stock MySQL has no Innodb_history_list_length status variable)
-- privilege: PROCESS
-- cost: one metrics row
SELECT `COUNT` AS history_list_length
FROM information_schema.INNODB_METRICS
WHERE NAME = 'trx_rseg_history_len'
