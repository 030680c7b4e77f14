-- answers: the plan of the dequeue's head: first as the planner estimates it (estimate: node
--          types, the index, the estimated cost), then, only when that estimate reaches the
--          head by an index at a bounded cost, as the server runs it (plan: rows and buffers
--          read to return the head, planning and execution time); with sorts and scans
--          priced out (fits), which existing index the planner could walk instead of sorting
--          (qadmin explain)
-- params: none; {statement} is the queue's rendered head (a template's or profile.sql's head
--         section: one SELECT with the dequeue's WHERE / ORDER BY and LIMIT 1, no FOR UPDATE)
-- min version: PostgreSQL 13 (BUFFERS without ANALYZE is not needed; planning buffers 13)
-- privilege: SELECT on the queue table
-- cost: estimate and fits only plan the statement. plan EXECUTES the head SELECT (ANALYZE)
--       in a READ ONLY transaction under the connection's statement timeout and a 1 s lock
--       timeout, and only after estimate showed no scan or sort of a large input: it reads
--       what one dequeue reads to find the head, and takes no row lock
-- name: estimate
EXPLAIN (FORMAT JSON) {statement}

-- name: plan
EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {statement}

-- name: fits
SET LOCAL enable_sort = off

-- name: fits
SET LOCAL enable_seqscan = off

-- name: fits
EXPLAIN (FORMAT JSON) {statement}
