-- qadmin catalog: one row per managed queue, in the same database as the queues.
-- {catalog} is the quoted catalog table; :name style parameters are bound, never inlined.

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
