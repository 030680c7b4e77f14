-- answers: the database file's size in pages, and the page size
-- params: none
-- min version: SQLite 3.16 (table-valued pragma functions)
-- privilege: read access to the file
-- cost: reads the file header
SELECT p.page_count AS pages, s.page_size AS page_size, p.page_count * s.page_size AS file_bytes
FROM pragma_page_count() AS p, pragma_page_size() AS s
