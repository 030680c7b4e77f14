-- answers: the plan of the dequeue's head: first as the optimizer estimates it (estimate:
--          access type, the key, filesort, rows it expects to examine), then, only when that
--          estimate reaches the head through an index in the dequeue's order (no filesort, no
--          full scan) or examines few rows, as MariaDB runs it (plan: rows examined r_rows,
--          those the condition removed r_filtered, pages accessed, time spent) (qadmin explain)
-- params: none; {statement} is the queue's rendered head (one SELECT with the dequeue's
--         WHERE / ORDER BY and LIMIT 1, no FOR UPDATE)
-- min version: MariaDB 10.1 (ANALYZE FORMAT=JSON)
-- privilege: SELECT on the queue table
-- cost: estimate only plans the statement. plan EXECUTES the head SELECT (ANALYZE) in a READ
--       ONLY transaction under the connection's statement timeout and a 1 s lock timeout,
--       only after estimate showed no full scan or filesort of a large input: it reads what
--       one dequeue reads to find the head, and takes no row lock
-- name: estimate
EXPLAIN FORMAT=JSON {statement}

-- name: plan
ANALYZE FORMAT=JSON {statement}
