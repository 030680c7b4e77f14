-- answers: free pages in the file (space deleted rows left behind, reused by later inserts;
--          only VACUUM returns it to the file system)
-- params: none
-- min version: SQLite 3.16
-- privilege: read access to the file
-- cost: reads the file header
SELECT f.freelist_count AS free_pages, p.page_count AS pages
FROM pragma_freelist_count() AS f, pragma_page_count() AS p
