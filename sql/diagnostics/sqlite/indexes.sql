-- answers: the indexes of a table with their key columns in order, so a diagnostic can tell
--          whether an index fits a query (its leading columns) before it runs one
-- params: :table
-- min version: SQLite 3.16
-- privilege: read access to the file
-- cost: reads the schema
-- columns: a rowid table's INTEGER PRIMARY KEY is the rowid itself and has no index row here;
--          it is listed as 'rowid' with is_primary
SELECT il.name                                                 AS index_name,
       (SELECT group_concat(name, ',') FROM
          (SELECT ii.name FROM pragma_index_info(il.name) AS ii ORDER BY ii.seqno))
                                                               AS key_columns,
       il."unique" = 1                                         AS is_unique,
       il.origin = 'pk'                                        AS is_primary,
       il.partial = 1                                          AS partial,
       1                                                       AS valid
FROM pragma_index_list(:table) AS il
UNION ALL
SELECT 'rowid', ti.name, 1, 1, 0, 1
FROM pragma_table_info(:table) AS ti
WHERE ti.pk = 1 AND upper(ti.type) = 'INTEGER'
  AND (SELECT count(*) FROM pragma_table_info(:table) WHERE pk > 0) = 1
ORDER BY 1
