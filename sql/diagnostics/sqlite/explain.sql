-- answers: the plan of the dequeue's head: SEARCH ... USING INDEX (a seek) or SCAN (a walk of
--          the table), and USE TEMP B-TREE FOR ORDER BY (a sort: no index fits the order)
-- params: none; {statement} is the queue's rendered head (one SELECT with the dequeue's
--         WHERE / ORDER BY and LIMIT 1)
-- min version: SQLite 3.24 (EXPLAIN QUERY PLAN's id/parent/detail rows)
-- privilege: read access to the file
-- cost: plans the statement only
-- name: plan
EXPLAIN QUERY PLAN {statement}
