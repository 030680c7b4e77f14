-- answers: delete-marked rows waiting for purge: InnoDB's history list length (undo logs of
--          committed transactions not yet purged; server-wide, all databases, not this
--          table's rows: history_list_scope says so in the report)
-- params: none
-- min version: MariaDB 10.5 (the Innodb_history_list_length status variable)
-- privilege: none
-- cost: one status variable
SELECT CAST(VARIABLE_VALUE AS UNSIGNED) AS history_list_length,
       'server-wide' AS history_list_scope
FROM information_schema.GLOBAL_STATUS
WHERE VARIABLE_NAME = 'INNODB_HISTORY_LIST_LENGTH'
