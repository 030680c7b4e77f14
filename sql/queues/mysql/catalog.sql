-- qadmin catalog: one row per managed queue, in the database that holds the queues.
-- {objects}: what qadmin created for each queue (tables, sequences, routines, indexes where
-- they are objects of their own); drop, a failed create, convert and load touch only these.
-- drop_<type>: one per type qadmin records, {object} the quoted object.
-- extends: queues/common/catalog.sql (the statements shared with other engines)

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

-- name: pause
-- qadmin pause: paused_at in the options (the pop routines read it there). A queue already
-- paused keeps the time it was first paused.
UPDATE {catalog} SET options = JSON_SET(options, '$.paused_at', :at)
WHERE name = :name AND JSON_EXTRACT(options, '$.paused_at') IS NULL

-- name: resume
UPDATE {catalog} SET options = JSON_REMOVE(options, '$.paused_at')
WHERE name = :name AND JSON_EXTRACT(options, '$.paused_at') IS NOT NULL

-- name: objects_create
CREATE TABLE IF NOT EXISTS {objects} (
    queue       VARCHAR(64) NOT NULL,
    object_type VARCHAR(16) NOT NULL,
    name        VARCHAR(64) NOT NULL,
    position    INT NOT NULL,
    PRIMARY KEY (object_type, name)
) ENGINE=InnoDB

-- name: routines_listed
-- Whether information_schema.ROUTINES shows this role every routine of the database: only to
-- a role with SELECT globally, or EXECUTE, CREATE ROUTINE or ALTER ROUTINE globally or on the
-- database, does a routine it is not shown prove gone (a producer granted EXECUTE on its
-- push procedure alone is shown that one only).
SELECT (EXISTS (SELECT 1 FROM information_schema.USER_PRIVILEGES AS u
                 WHERE u.GRANTEE = CONCAT('''', SUBSTRING_INDEX(CURRENT_USER(), '@', 1), '''@''',
                                          SUBSTRING_INDEX(CURRENT_USER(), '@', -1), '''')
                   AND u.PRIVILEGE_TYPE IN ('SELECT', 'EXECUTE', 'CREATE ROUTINE',
                                            'ALTER ROUTINE'))
        OR EXISTS (SELECT 1 FROM information_schema.SCHEMA_PRIVILEGES AS d
                    WHERE d.GRANTEE = CONCAT('''', SUBSTRING_INDEX(CURRENT_USER(), '@', 1),
                                             '''@''', SUBSTRING_INDEX(CURRENT_USER(), '@', -1),
                                             '''')
                      AND d.TABLE_SCHEMA = :schema
                      AND d.PRIVILEGE_TYPE IN ('EXECUTE', 'CREATE ROUTINE', 'ALTER ROUTINE')))
       AS listed

-- name: objects_gone
-- The queue's recorded objects information_schema no longer lists (dropped by hand; a routine
-- may also be one not shown to this role: routines_listed tells which), each looked up by its
-- exact name.
-- :queue NULL: every queue's in the schema at once (a status run reads it once a schema).
SELECT o.queue, o.object_type, o.name
FROM {objects} AS o
WHERE (o.queue = :queue OR :queue IS NULL)
  AND NOT EXISTS (SELECT 1 FROM information_schema.ROUTINES AS r
                   WHERE o.object_type IN ('function', 'procedure') AND r.ROUTINE_SCHEMA = :schema
                     AND r.ROUTINE_NAME = o.name AND LOWER(r.ROUTINE_TYPE) = o.object_type)
  AND NOT EXISTS (SELECT 1 FROM information_schema.TABLES AS t
                   WHERE o.object_type IN ('table', 'sequence', 'view') AND t.TABLE_SCHEMA = :schema
                     AND t.TABLE_NAME = o.name)
  AND NOT EXISTS (SELECT 1 FROM information_schema.TRIGGERS AS g
                   WHERE o.object_type = 'trigger' AND g.TRIGGER_SCHEMA = :schema
                     AND g.TRIGGER_NAME = o.name)
ORDER BY o.queue, o.position

-- name: schema_objects
-- Every object in the database whose name starts with :prefix (a LIKE pattern, '!' escapes):
-- tables, views and (MariaDB) sequences, routines and triggers. Indexes are named per table.
SELECT CASE TABLE_TYPE WHEN 'VIEW' THEN 'view' WHEN 'SEQUENCE' THEN 'sequence' ELSE 'table' END
           AS object_type,
       TABLE_NAME AS name
FROM information_schema.TABLES
WHERE TABLE_SCHEMA = :schema AND TABLE_NAME LIKE :prefix ESCAPE '!'
UNION ALL
SELECT LOWER(ROUTINE_TYPE), ROUTINE_NAME FROM information_schema.ROUTINES
WHERE ROUTINE_SCHEMA = :schema AND ROUTINE_NAME LIKE :prefix ESCAPE '!'
UNION ALL
SELECT 'trigger', TRIGGER_NAME FROM information_schema.TRIGGERS
WHERE TRIGGER_SCHEMA = :schema AND TRIGGER_NAME LIKE :prefix ESCAPE '!'

-- name: drop_sequence
DROP SEQUENCE IF EXISTS {object}

-- name: drop_procedure
DROP PROCEDURE IF EXISTS {object}

-- name: drop_function
DROP FUNCTION IF EXISTS {object}

-- name: dependents
-- What outside the queue makes DROP TABLE refuse: another table's foreign key to one of its
-- tables (a view reading it does not: it is left invalid). Catalog only.
SELECT CONCAT('foreign key ', CONSTRAINT_NAME) AS dependent_kind,
       CONSTRAINT_SCHEMA AS dependent_schema, TABLE_NAME AS dependent_name
FROM information_schema.REFERENTIAL_CONSTRAINTS
WHERE UNIQUE_CONSTRAINT_SCHEMA = :schema AND REFERENCED_TABLE_NAME = :table
  AND TABLE_NAME <> :table
