-- Pieces of SQL the SQL Server queue templates share ({name()} in a template).
--
-- paused: true while the queue is paused (qadmin pause): its catalog entry's options carry
-- paused_at. One primary-key read of the catalog; under READ COMMITTED it waits at most for
-- a pause or resume being committed (one row, a short transaction), and never for a push.
-- Each pop procedure reads it first and, while it is true, pops with @count = 0 (an empty
-- result set of the usual columns).

-- name: paused
EXISTS (SELECT 1 FROM {catalog}
        WHERE name = {table.bare_lit} AND JSON_VALUE(options, '$.paused_at') IS NOT NULL)
