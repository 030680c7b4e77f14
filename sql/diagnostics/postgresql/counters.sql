-- answers: cumulative row counters of the queue table, sampled twice to give rates: inserts
--          (enqueues), deletes (dequeues and acks), updates (claims, ring slots, overwrites)
-- params: :schema, :table
-- min version: PostgreSQL 10
-- privilege: none
-- cost: shared-memory statistics; each backend flushes its counts at most once a second while
--       busy and within 10 s once idle, so short-interval rates lag the true ones
SELECT n_tup_ins AS inserted, n_tup_upd AS updated, n_tup_del AS deleted,
       n_tup_hot_upd AS hot_updated
FROM pg_catalog.pg_stat_user_tables
WHERE schemaname = :schema AND relname = :table
