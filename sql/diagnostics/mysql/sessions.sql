-- answers: which server sessions (connection ids) exist, to tell a stale claim's consumer is gone
-- params: none
-- min version: MySQL 8.0 / MariaDB 10.6
-- privilege: PROCESS to see other users' sessions (without it: only your own, a partial view)
-- cost: PROCESSLIST is read once
SELECT CAST(ID AS CHAR) AS session FROM information_schema.PROCESSLIST
