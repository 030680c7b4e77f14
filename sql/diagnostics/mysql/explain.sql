-- answers: the plan of the dequeue's head (MySQL 8): access type (a range or ref seek, an
--          index walk, a full scan), the key used, whether it sorts (filesort), rows the
--          optimizer expects to examine (qadmin explain)
-- params: none; {statement} is the queue's rendered head (one SELECT with the dequeue's
--         WHERE / ORDER BY and LIMIT 1, no FOR UPDATE)
-- min version: MySQL 8.0 (EXPLAIN FORMAT=JSON; estimates only: the statement is not run)
-- privilege: SELECT on the queue table
-- cost: plans the statement only; takes no row lock
-- name: plan
EXPLAIN FORMAT=JSON {statement}
