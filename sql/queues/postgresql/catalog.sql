-- qadmin catalog: one row per managed queue, in the schema that holds the queues.

-- name: create
CREATE TABLE IF NOT EXISTS {catalog} (
    name          text PRIMARY KEY,
    kind          text NOT NULL,
    capacity      integer,
    options       text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    qadmin_schema integer NOT NULL
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
