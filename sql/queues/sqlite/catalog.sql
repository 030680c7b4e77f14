-- qadmin catalog: one row per managed queue, in the same database as the queues.
-- {catalog} is the quoted catalog table; :name style parameters are bound, never inlined.
-- {objects}: what qadmin created for each queue (tables, sequences, routines, indexes where
-- they are objects of their own); drop, a failed create, convert and load touch only these.
-- drop_<type>: one per type qadmin records, {object} the quoted object.
-- extends: queues/common/catalog.sql (the statements shared with other engines)

-- name: create
CREATE TABLE IF NOT EXISTS {catalog} (
    name          TEXT PRIMARY KEY,
    kind          TEXT NOT NULL,
    capacity      INTEGER,
    options       TEXT NOT NULL,
    created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    qadmin_schema INTEGER NOT NULL
)

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

-- name: objects_gone
-- The queue's recorded objects the database no longer holds (dropped by hand), each looked
-- up by its exact name.
-- :queue NULL: every queue's in the schema at once (a status run reads it once a schema).
SELECT o.queue, o.object_type, o.name
FROM {objects} AS o
WHERE (o.queue = :queue OR :queue IS NULL)
  AND NOT EXISTS (SELECT 1 FROM sqlite_schema AS s
                   WHERE s.name = o.name AND s.type = o.object_type)
ORDER BY o.queue, o.position

-- name: schema_objects
-- Every object in the database whose name starts with :prefix (a LIKE pattern, '!' escapes).
SELECT type AS object_type, name FROM sqlite_schema
WHERE name LIKE :prefix ESCAPE '!' AND type IN ('table', 'view', 'index', 'trigger')

-- name: drop_index
DROP INDEX IF EXISTS {object}
