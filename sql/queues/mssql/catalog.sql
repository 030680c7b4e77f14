-- qadmin catalog: one row per managed queue, in the schema that holds the queues.
-- {objects}: what qadmin created for each queue (tables, sequences, routines, indexes where
-- they are objects of their own); drop, a failed create, convert and load touch only these.
-- drop_<type>: one per type qadmin records, {object} the quoted object.
-- extends: queues/common/catalog.sql (the statements shared with other engines)

-- name: create
CREATE TABLE {catalog} (
    name          nvarchar(128) NOT NULL PRIMARY KEY,
    kind          nvarchar(16) NOT NULL,
    capacity      int NULL,
    options       nvarchar(max) NOT NULL,
    created_at    datetime2(6) NOT NULL DEFAULT SYSUTCDATETIME(),
    qadmin_schema int NOT NULL
)

-- name: pause
-- qadmin pause: paused_at in the options (the pop procedures read it there). A queue already
-- paused keeps the time it was first paused.
UPDATE {catalog} SET options = JSON_MODIFY(options, '$.paused_at', :at)
WHERE name = :name AND JSON_VALUE(options, '$.paused_at') IS NULL

-- name: resume
-- JSON_MODIFY with NULL removes the key (lax mode).
UPDATE {catalog} SET options = JSON_MODIFY(options, '$.paused_at', NULL)
WHERE name = :name AND JSON_VALUE(options, '$.paused_at') IS NOT NULL

-- name: objects_create
CREATE TABLE {objects} (
    queue       nvarchar(128) NOT NULL,
    object_type nvarchar(16) NOT NULL,
    name        nvarchar(128) NOT NULL,
    position    int NOT NULL,
    PRIMARY KEY (object_type, name)
)

-- name: routines_listed
-- Whether sys.objects shows this role every routine of the schema (metadata visibility: a
-- role sees an object it holds a permission on; VIEW DEFINITION on the schema shows them all).
SELECT CAST(COALESCE(HAS_PERMS_BY_NAME(:schema, 'SCHEMA', 'VIEW DEFINITION'), 0) AS int) AS listed

-- name: objects_gone
-- The queue's recorded objects sys.objects no longer lists (dropped by hand; a routine may
-- also be one not shown to this role: routines_listed tells which), each looked up by its
-- exact name.
-- :queue NULL: every queue's in the schema at once (a status run reads it once a schema).
SELECT o.queue, o.object_type, o.name
FROM {objects} AS o
WHERE (o.queue = :queue OR :queue IS NULL)
  AND NOT EXISTS (SELECT 1 FROM sys.objects AS s
                   WHERE s.schema_id = SCHEMA_ID(:schema) AND s.name = o.name
                     AND ((o.object_type = 'procedure' AND s.type = 'P')
                          OR (o.object_type = 'function' AND s.type IN ('FN', 'IF', 'TF'))
                          OR (o.object_type = 'table' AND s.type = 'U')
                          OR (o.object_type = 'sequence' AND s.type = 'SO')
                          OR (o.object_type = 'view' AND s.type = 'V')
                          OR (o.object_type = 'trigger' AND s.type = 'TR')))
ORDER BY o.queue, o.position

-- name: schema_objects
-- Every object in the schema whose name starts with :prefix (a LIKE pattern, '!' escapes).
-- Indexes are named per table on SQL Server.
SELECT CASE o.type WHEN 'U' THEN 'table' WHEN 'V' THEN 'view' WHEN 'SO' THEN 'sequence'
                   WHEN 'P' THEN 'procedure' WHEN 'TR' THEN 'trigger' ELSE 'function' END
           AS object_type,
       o.name AS name
FROM sys.objects AS o
JOIN sys.schemas AS s ON s.schema_id = o.schema_id
WHERE s.name = :schema AND o.name LIKE :prefix ESCAPE '!'
  AND o.type IN ('U', 'V', 'SO', 'P', 'TR', 'FN', 'IF', 'TF')

-- name: drop_sequence
DROP SEQUENCE IF EXISTS {object}

-- name: drop_procedure
DROP PROCEDURE IF EXISTS {object}
