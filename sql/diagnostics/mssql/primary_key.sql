-- answers: the primary key columns of a table, in key order (to find a hand-built queue's
--          ordering key)
-- params: :schema, :table
-- min version: SQL Server 2016
-- privilege: VIEW DEFINITION on the table (or any permission on it)
-- cost: catalog only
SELECT c.name AS column_name
FROM sys.indexes AS i
JOIN sys.index_columns AS ic ON ic.object_id = i.object_id AND ic.index_id = i.index_id
JOIN sys.columns AS c ON c.object_id = ic.object_id AND c.column_id = ic.column_id
JOIN sys.objects AS o ON o.object_id = i.object_id
JOIN sys.schemas AS s ON s.schema_id = o.schema_id
WHERE s.name = :schema AND o.name = :table AND i.is_primary_key = 1
ORDER BY ic.key_ordinal
