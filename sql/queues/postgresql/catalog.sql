-- qadmin catalog: one row per managed queue, in the schema that holds the queues.
-- {objects}: what qadmin created for each queue (tables, sequences, routines, indexes where
-- they are objects of their own); drop, a failed create, convert and load touch only these.
-- drop_<type>: one per type qadmin records, {object} the quoted object (qadmin creates one
-- function of each name, so the name alone identifies it).
-- extends: queues/common/catalog.sql (the statements shared with other engines)

-- name: create
CREATE TABLE IF NOT EXISTS {catalog} (
    name          text PRIMARY KEY,
    kind          text NOT NULL,
    capacity      integer,
    options       text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    qadmin_schema integer NOT NULL
)

-- name: pause
-- qadmin pause: paused_at in the options (the pop routines read it there). A queue already
-- paused keeps the time it was first paused.
UPDATE {catalog} SET options = (options::jsonb || jsonb_build_object('paused_at', CAST(:at AS text)))::text
WHERE name = :name AND (options::jsonb ->> 'paused_at') IS NULL

-- name: resume
UPDATE {catalog} SET options = (options::jsonb - 'paused_at')::text
WHERE name = :name AND (options::jsonb ->> 'paused_at') IS NOT NULL

-- name: objects_create
CREATE TABLE IF NOT EXISTS {objects} (
    queue       text NOT NULL,
    object_type text NOT NULL,
    name        text NOT NULL,
    position    integer NOT NULL,
    PRIMARY KEY (object_type, name)
)

-- name: objects_gone
-- The queue's recorded objects the schema no longer holds (dropped by hand), each looked up
-- by its exact name through pg_class's (relname, relnamespace) or pg_proc's (proname, ...)
-- index: a few buffers a queue (status reads every queue), where a listing of the schema's
-- objects by name prefix read about 400.
-- :queue NULL: every queue's in the schema at once (a status run reads it once a schema).
SELECT o.queue, o.object_type, o.name
FROM {objects} AS o
WHERE (o.queue = :queue OR :queue IS NULL)
  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_proc AS p
                   WHERE o.object_type IN ('function', 'procedure') AND p.proname = o.name
                     AND p.pronamespace = (SELECT n.oid FROM pg_catalog.pg_namespace AS n
                                            WHERE n.nspname = :schema)
                     AND (p.prokind = 'p') = (o.object_type = 'procedure'))
  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_class AS c
                   WHERE o.object_type NOT IN ('function', 'procedure') AND c.relname = o.name
                     AND c.relnamespace = (SELECT n.oid FROM pg_catalog.pg_namespace AS n
                                            WHERE n.nspname = :schema)
                     AND CAST(c.relkind AS text) = ANY (CASE o.object_type
                                          WHEN 'table' THEN ARRAY['r', 'p']
                                          WHEN 'sequence' THEN ARRAY['S']
                                          WHEN 'index' THEN ARRAY['i', 'I']
                                          ELSE ARRAY['v', 'm'] END))
ORDER BY o.queue, o.position

-- name: schema_objects
-- Every object in the schema whose name starts with :prefix (a LIKE pattern, '!' escapes):
-- tables, views, sequences and indexes share one namespace here; routines have their own.
-- Triggers are named per table on PostgreSQL, so no queue name can collide with one.
SELECT CASE c.relkind WHEN 'S' THEN 'sequence' WHEN 'v' THEN 'view' WHEN 'm' THEN 'view'
                      WHEN 'i' THEN 'index' WHEN 'I' THEN 'index' ELSE 'table' END AS object_type,
       c.relname AS name
FROM pg_catalog.pg_class AS c
JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
WHERE n.nspname = :schema AND c.relname LIKE :prefix ESCAPE '!'
  AND c.relkind IN ('r', 'p', 'f', 'v', 'm', 'S', 'i', 'I')
UNION ALL
SELECT CASE p.prokind WHEN 'p' THEN 'procedure' ELSE 'function' END, p.proname
FROM pg_catalog.pg_proc AS p
JOIN pg_catalog.pg_namespace AS n ON n.oid = p.pronamespace
WHERE n.nspname = :schema AND p.proname LIKE :prefix ESCAPE '!'

-- name: drop_sequence
DROP SEQUENCE IF EXISTS {object}

-- name: drop_index
DROP INDEX IF EXISTS {object}

-- name: drop_function
DROP FUNCTION IF EXISTS {object}

-- name: drop_procedure
DROP PROCEDURE IF EXISTS {object}

-- name: dependents
-- What outside the queue depends on one of its tables and makes DROP TABLE refuse: a view
-- (or materialized view) reading it, another table's foreign key to it. Catalog only.
SELECT DISTINCT CASE v.relkind WHEN 'm' THEN 'materialized view' ELSE 'view' END AS dependent_kind,
       vn.nspname::text AS dependent_schema, v.relname::text AS dependent_name
FROM pg_catalog.pg_class AS t
JOIN pg_catalog.pg_namespace AS tn ON tn.oid = t.relnamespace
JOIN pg_catalog.pg_depend AS d
  ON d.refclassid = 'pg_catalog.pg_class'::regclass AND d.refobjid = t.oid
 AND d.classid = 'pg_catalog.pg_rewrite'::regclass
JOIN pg_catalog.pg_rewrite AS r ON r.oid = d.objid
JOIN pg_catalog.pg_class AS v ON v.oid = r.ev_class AND v.oid <> t.oid
JOIN pg_catalog.pg_namespace AS vn ON vn.oid = v.relnamespace
WHERE tn.nspname = :schema AND t.relname = :table
UNION
SELECT 'foreign key ' || c.conname::text, fn.nspname::text, f.relname::text
FROM pg_catalog.pg_class AS t
JOIN pg_catalog.pg_namespace AS tn ON tn.oid = t.relnamespace
JOIN pg_catalog.pg_constraint AS c ON c.contype = 'f' AND c.confrelid = t.oid AND c.conrelid <> t.oid
JOIN pg_catalog.pg_class AS f ON f.oid = c.conrelid
JOIN pg_catalog.pg_namespace AS fn ON fn.oid = f.relnamespace
WHERE tn.nspname = :schema AND t.relname = :table
