-- qadmin catalog: one row per managed queue, in the schema that holds the queues.

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
