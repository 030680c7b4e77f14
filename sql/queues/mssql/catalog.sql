-- qadmin catalog: one row per managed queue, in the schema that holds the queues.
-- {objects}: what qadmin created for each queue (tables, sequences, routines, indexes where
-- they are objects of their own); drop, a failed create, convert and load touch only these.
-- drop_<type>: one per type qadmin records, {object} the quoted object.

-- name: create
CREATE TABLE {catalog} (
    name          nvarchar(128) NOT NULL PRIMARY KEY,
    kind          nvarchar(16) NOT NULL,
    capacity      int NULL,
    options       nvarchar(max) NOT NULL,
    created_at    datetime2(6) NOT NULL DEFAULT SYSUTCDATETIME(),
    qadmin_schema int NOT NULL
)

-- name: insert
INSERT INTO {catalog} (name, kind, capacity, options, qadmin_schema)
VALUES (:name, :kind, :capacity, :options, :qadmin_schema)

-- name: delete
DELETE FROM {catalog} WHERE name = :name

-- name: get
SELECT name, kind, capacity, options, created_at, qadmin_schema FROM {catalog} WHERE name = :name

-- name: list
SELECT name, kind, capacity, options, created_at, qadmin_schema FROM {catalog} ORDER BY name

-- name: set_capacity
UPDATE {catalog} SET capacity = :capacity WHERE name = :name

-- name: set_options
UPDATE {catalog} SET options = :options WHERE name = :name

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

-- name: object_add
INSERT INTO {objects} (queue, object_type, name, position)
VALUES (:queue, :object_type, :name, :position)

-- name: object_forget
DELETE FROM {objects} WHERE queue = :queue AND object_type = :object_type AND name = :name

-- name: objects_forget
DELETE FROM {objects} WHERE queue = :queue

-- name: objects_of
SELECT object_type, name, position FROM {objects} WHERE queue = :queue ORDER BY position

-- name: objects_all
SELECT queue, object_type, name FROM {objects}

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

-- name: drop_table
DROP TABLE IF EXISTS {object}

-- name: drop_sequence
DROP SEQUENCE IF EXISTS {object}

-- name: drop_procedure
DROP PROCEDURE IF EXISTS {object}
