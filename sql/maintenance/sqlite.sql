-- Maintenance of one SQLite database file (qadmin maintain). Reads first, then the actions;
-- every write takes the database's one write lock, so each is stated with how long it holds it.
-- min version: SQLite 3.18 (PRAGMA optimize)
-- privilege: write access to the file

-- name: state
-- answers: the file's auto_vacuum mode (0 none, 1 full, 2 incremental), its free pages (left
--          by deleted rows, reused by later writes but not given back to the file system) and
--          its size in pages
-- params: none
-- cost: reads the file header
SELECT a.auto_vacuum AS auto_vacuum, f.freelist_count AS free_pages, p.page_count AS pages,
       s.page_size AS page_size
FROM pragma_auto_vacuum() AS a, pragma_freelist_count() AS f, pragma_page_count() AS p,
     pragma_page_size() AS s

-- name: incremental_vacuum
PRAGMA incremental_vacuum

-- name: vacuum
-- Incremental from then on: later free pages go back with PRAGMA incremental_vacuum.
PRAGMA auto_vacuum = INCREMENTAL

-- name: vacuum
VACUUM

-- name: optimize
PRAGMA optimize
