-- answers: cumulative row counters of the queue table, sampled twice to give rates: inserts
--          (enqueues), deletes (dequeues and acks), updates (claims, ring slots, overwrites)
-- params: :schema, :table
-- min version: PostgreSQL 10
-- privilege: none
-- cost: shared-memory statistics; each backend flushes its counts at most once a second while
--       busy and within 10 s once idle, so short-interval rates lag the true ones. Read by
--       oid with the pg_stat_get_* functions pg_stat_user_tables is built on (the view
--       aggregates every table's indexes first: tail and status read this per queue)
SELECT pg_catalog.pg_stat_get_tuples_inserted(c.oid)     AS inserted,
       pg_catalog.pg_stat_get_tuples_updated(c.oid)      AS updated,
       pg_catalog.pg_stat_get_tuples_deleted(c.oid)      AS deleted,
       pg_catalog.pg_stat_get_tuples_hot_updated(c.oid)  AS hot_updated
FROM pg_catalog.pg_class AS c
WHERE c.relname = :table AND c.relkind IN ('r', 'p')
  AND c.relnamespace = (SELECT n.oid FROM pg_catalog.pg_namespace AS n WHERE n.nspname = :schema)
