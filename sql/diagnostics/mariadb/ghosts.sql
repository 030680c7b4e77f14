-- answers: delete-marked rows waiting for purge: InnoDB's history list length (undo logs of
--          committed transactions not yet purged; global, and not a row count)
-- params: none
-- min version: MariaDB 10.5 (the Innodb_history_list_length status variable)
-- privilege: none
-- cost: one status variable
SELECT CAST(VARIABLE_VALUE AS UNSIGNED) AS history_list_length
FROM information_schema.GLOBAL_STATUS
WHERE VARIABLE_NAME = 'INNODB_HISTORY_LIST_LENGTH'
