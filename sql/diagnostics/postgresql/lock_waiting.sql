-- answers: how many lock requests on the server are waiting (not granted): a session that
--          waits on the queue table (what locks.sql lists) is one of them, so when none
--          waits, no queue has a lock wait to list. status, check --all and a scrape read it
--          once per run, and each queue's locks.sql only while some request waits
-- params: none
-- min version: PostgreSQL 10
-- privilege: none (pg_locks shows every session's locks)
-- cost: pg_locks (the lock manager's shared memory, read once: not polled per queue); takes
--       no lock on any table
SELECT count(*) AS waiting
FROM pg_catalog.pg_locks AS l
WHERE NOT l.granted
