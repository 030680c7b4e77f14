-- qadmin catalog: one row per managed queue, in the database that holds the queues.

-- name: create
CREATE TABLE IF NOT EXISTS {catalog} (
    name          VARCHAR(64) NOT NULL PRIMARY KEY,
    kind          VARCHAR(16) NOT NULL,
    capacity      INT NULL,
    options       TEXT NOT NULL,
    created_at    DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    qadmin_schema INT NOT NULL
) ENGINE=InnoDB

-- name: insert
INSERT INTO {catalog} (name, kind, capacity, options, created_at, qadmin_schema)
VALUES (:name, :kind, :capacity, :options, UTC_TIMESTAMP(6), :qadmin_schema)

-- name: delete
DELETE FROM {catalog} WHERE name = :name

-- name: get
SELECT name, kind, capacity, options, created_at, qadmin_schema FROM {catalog} WHERE name = :name

-- name: list
SELECT name, kind, capacity, options, created_at, qadmin_schema FROM {catalog} ORDER BY name

-- name: set_capacity
UPDATE {catalog} SET capacity = :capacity WHERE name = :name
