-- answers: which of the given server sessions (claimed_session of claim queues) still exist
-- params: none (the caller matches pids)
-- min version: PostgreSQL 10
-- privilege: none: every role sees every pid in pg_stat_activity
-- cost: shared memory only
SELECT a.pid::text AS session FROM pg_catalog.pg_stat_activity AS a
