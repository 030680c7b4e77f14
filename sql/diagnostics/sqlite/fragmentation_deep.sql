-- answers: pages and unused bytes in the b-trees of the queue table and its indexes
-- params: :table
-- min version: SQLite 3.31 with SQLITE_ENABLE_DBSTAT_VTAB (Debian's build has it)
-- privilege: read access to the file
-- cost: dbstat reads the b-tree pages (--deep only, after a page-count check)
SELECT d.name AS index_name, count(*) AS pages, sum(d.unused) AS unused_bytes,
       sum(d.pgsize) AS index_bytes,
       round(100.0 * sum(d.unused) / sum(d.pgsize), 1) AS unused_pct
FROM dbstat AS d
WHERE d.name IN (SELECT s.name FROM sqlite_schema AS s WHERE s.tbl_name = :table)
GROUP BY d.name
ORDER BY d.name
