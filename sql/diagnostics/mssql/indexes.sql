-- answers: the indexes of a table with their key columns in order, so a diagnostic can tell
--          whether an index fits a query (its leading columns) before it runs one
-- params: :schema, :table (names, bound)
-- min version: SQL Server 2017 (STRING_AGG)
-- privilege: VIEW DEFINITION on the table (or any permission on it)
-- cost: catalog only
-- columns: partial is a filtered index; a disabled index is not valid
SELECT i.name AS index_name,
       STRING_AGG(c.name, ',') WITHIN GROUP (ORDER BY ic.key_ordinal) AS key_columns,
       i.is_unique AS is_unique,
       i.is_primary_key AS is_primary,
       i.has_filter AS partial,
       CASE WHEN i.is_disabled = 1 THEN 0 ELSE 1 END AS valid
FROM sys.indexes AS i
INNER JOIN sys.objects AS o ON i.object_id = o.object_id
INNER JOIN sys.schemas AS s ON o.schema_id = s.schema_id
INNER JOIN sys.index_columns AS ic
    ON i.object_id = ic.object_id AND i.index_id = ic.index_id AND ic.key_ordinal > 0
INNER JOIN sys.columns AS c ON ic.object_id = c.object_id AND ic.column_id = c.column_id
WHERE s.name = :schema AND o.name = :table AND i.index_id > 0
GROUP BY i.name, i.is_unique, i.is_primary_key, i.has_filter, i.is_disabled
ORDER BY i.name
