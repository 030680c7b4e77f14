-- answers: who probably keeps qadmin off the queue table when a diagnostic part gave up on
--          its lock: the other sessions connected to the queue's database that are not
--          themselves waiting, longest-running first (LOCK TABLES and metadata locks are not
--          listed anywhere without performance_schema, so this is a guess, and said to be)
-- params: :schema (neither the table nor its dead table, :table and :dead, can be matched: the
--         lock views are missing); :sibling (another connection of the same qadmin run, never
--         named a holder; 0: none)
-- min version: MySQL 8.0 / MariaDB 10.6
-- privilege: PROCESS to see other users' sessions (without it, only the role's own)
-- cost: PROCESSLIST once; takes no lock
SELECT CAST(p.ID AS CHAR)              AS holder,
       'a table or metadata lock'      AS mode,
       FALSE                           AS certain,
       TRUE                            AS granted,
       p.COMMAND                       AS state,
       p.TIME                          AS xact_age_s,
       LEFT(COALESCE(p.INFO, ''), 200) AS query
FROM information_schema.PROCESSLIST AS p
WHERE p.DB = :schema
  AND p.ID NOT IN (CONNECTION_ID(), :sibling)
  AND COALESCE(p.STATE, '') NOT LIKE 'Waiting for%'
ORDER BY p.TIME DESC
LIMIT 5
