-- qadmin catalog: one row per managed queue; the statements every engine shares
-- (sql/queues/<engine>/catalog.sql extends this file with its own create, objects_create,
-- schema_objects and drop_<type> sections). {catalog} is the quoted catalog table, {objects}
-- what qadmin created for each queue, {object} one of those; :name style parameters are
-- bound, never inlined.

-- name: insert
INSERT INTO {catalog} (name, kind, capacity, options, qadmin_schema)
VALUES (:name, :kind, :capacity, :options, :qadmin_schema)

-- name: delete
DELETE FROM {catalog} WHERE name = :name

-- name: lock_entry
-- The entry's row locked for the rest of the caller's transaction (a change that changes
-- nothing: every engine locks the row it updates), so options read next are not changed
-- under it (repair's revision against a pause made meanwhile).
UPDATE {catalog} SET name = name WHERE name = :name

-- name: get
SELECT name, kind, capacity, options, created_at, qadmin_schema FROM {catalog} WHERE name = :name

-- name: list
SELECT name, kind, capacity, options, created_at, qadmin_schema FROM {catalog} ORDER BY name

-- name: set_capacity
UPDATE {catalog} SET capacity = :capacity WHERE name = :name

-- name: set_options
UPDATE {catalog} SET options = :options WHERE name = :name

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

-- name: drop_table
DROP TABLE IF EXISTS {object}
