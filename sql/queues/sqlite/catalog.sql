-- qadmin catalog: one row per managed queue, in the same database as the queues.
-- {catalog} is the quoted catalog table; :name style parameters are bound, never inlined.
-- {objects}: what qadmin created for each queue (tables, sequences, routines, indexes where
-- they are objects of their own); drop, a failed create, convert and load touch only these.
-- drop_<type>: one per type qadmin records, {object} the quoted object.

-- name: create
CREATE TABLE IF NOT EXISTS {catalog} (
    name          TEXT PRIMARY KEY,
    kind          TEXT NOT NULL,
    capacity      INTEGER,
    options       TEXT NOT NULL,
    created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    qadmin_schema INTEGER NOT NULL
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
-- qadmin pause: paused_at in the options (the pop statements read it there). A queue already
-- paused keeps the time it was first paused.
UPDATE {catalog} SET options = json_set(options, '$.paused_at', :at)
WHERE name = :name AND json_extract(options, '$.paused_at') IS NULL

-- name: resume
UPDATE {catalog} SET options = json_remove(options, '$.paused_at')
WHERE name = :name AND json_extract(options, '$.paused_at') IS NOT NULL

-- name: objects_create
CREATE TABLE IF NOT EXISTS {objects} (
    queue       TEXT NOT NULL,
    object_type TEXT NOT NULL,
    name        TEXT NOT NULL,
    position    INTEGER NOT NULL,
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
-- Every object in the database whose name starts with :prefix (a LIKE pattern, '!' escapes).
SELECT type AS object_type, name FROM sqlite_schema
WHERE name LIKE :prefix ESCAPE '!' AND type IN ('table', 'view', 'index', 'trigger')

-- name: drop_table
DROP TABLE IF EXISTS {object}

-- name: drop_index
DROP INDEX IF EXISTS {object}
