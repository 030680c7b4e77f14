-- Pieces of SQL the SQLite queue templates share ({name()} in a template).
--
-- paused: true while the queue is paused (qadmin pause): its catalog entry's options carry
-- paused_at. One primary-key read of the catalog, evaluated once per statement (it does not
-- depend on the row). Each pop statement takes nothing while it is true; an application
-- running the template's pop statements gets the same.

-- name: paused
EXISTS (SELECT 1 FROM {catalog}
        WHERE name = {table.bare_lit} AND json_extract(options, '$.paused_at') IS NOT NULL)
