-- Pieces of SQL the PostgreSQL queue templates share ({name()} in a template).
--
-- paused: true while the queue is paused (qadmin pause): its catalog entry's options carry
-- paused_at. One primary-key read of the catalog, a plain MVCC read that takes no lock (a
-- pause being written never blocks it, nor it the pause). Every pop routine reads it first and
-- takes nothing while it is true; pushes, acks and fails never read it. A call sees a pause
-- committed before its statement's snapshot (a READ COMMITTED caller: before the call; a
-- REPEATABLE READ caller: before its transaction's first statement).

-- name: paused
EXISTS (SELECT 1 FROM {catalog} AS qz
        WHERE qz.name = {table.bare_lit} AND (qz.options::jsonb ->> 'paused_at') IS NOT NULL)
