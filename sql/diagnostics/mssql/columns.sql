-- answers: the columns of a table (name, type, nullability, default) and each one's type
--          family, to read a table as a queue: which column can order it, date it, hold states
-- params: :schema, :table (names, bound)
-- min version: SQL Server 2016
-- privilege: VIEW DEFINITION on the table (or any permission on it)
-- cost: catalog only
-- type_family: timestamp, date, integer, number, text, uuid, boolean, json, other
SELECT c.name AS column_name,
       ty.name AS data_type,
       CASE
           WHEN ty.name IN ('datetime', 'datetime2', 'datetimeoffset', 'smalldatetime')
               THEN 'timestamp'
           WHEN ty.name = 'date' THEN 'date'
           WHEN ty.name IN ('tinyint', 'smallint', 'int', 'bigint') THEN 'integer'
           WHEN ty.name IN ('decimal', 'numeric', 'float', 'real') THEN 'number'
           WHEN ty.name = 'uniqueidentifier' THEN 'uuid'
           WHEN ty.name = 'bit' THEN 'boolean'
           WHEN ty.name IN ('char', 'varchar', 'nchar', 'nvarchar', 'text', 'ntext') THEN 'text'
           ELSE 'other'
       END AS type_family,
       c.is_nullable AS nullable,
       dc.[definition] AS column_default,
       c.column_id AS position
FROM sys.columns AS c
INNER JOIN sys.objects AS o ON c.object_id = o.object_id
INNER JOIN sys.schemas AS s ON o.schema_id = s.schema_id
INNER JOIN sys.types AS ty ON c.user_type_id = ty.user_type_id
LEFT JOIN sys.default_constraints AS dc ON c.default_object_id = dc.object_id
WHERE s.name = :schema AND o.name = :table
ORDER BY c.column_id
