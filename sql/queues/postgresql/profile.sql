-- A table read through a profile (qadmin.profiles): a hand-built or a library's queue table.
-- {table} is the table; the other names are its columns, checked against the catalog first;
-- {filter}, {columns}, {assignments}, {stale} and {age} are keywords qadmin builds from these
-- same names and fixed text (a state value is always a bound :vN parameter, never SQL).
-- Cost: every statement is bounded (LIMIT :limit) or runs only when an index fits it
-- (qadmin.profiles.query checks TableShape.index_leading first), under the statement timeout.
-- Expression sections: instant reads a time column as an instant (a timestamp without time
-- zone in the session's TimeZone, as now() - column reads it, never mislabelled UTC);
-- claim_event_at is a claim's start kept as an event row (Profile.claim_event: the job's
-- latest such event through the library's index on its job column, the type bound as
-- :ev_type) and claim_event_age the seconds since it; session_gone is requeue's guard that
-- the claiming session (the profile's session column) no longer exists; error_like is
-- dead's and redrive's --error on a library's error column (its text: a JSON array).
-- Statements whose plan depends on the values they filter on (a state, a named queue) first
-- say SET LOCAL plan_cache_mode = force_custom_plan: psycopg prepares a statement run five
-- times, and the server may then keep a generic plan made for an average value. A status of
-- a library's job table with several named queues counted one state's rows (none, LIMIT
-- 100,001) with a sequential scan of the whole table that way. Only these statements pay for
-- a plan each run: the catalog reads of hundreds of queues keep their cached plans.
-- extends: queues/common/profile.sql (the statements shared with other engines)

-- name: age
extract(epoch FROM (now() - {col.bare}))::float8

-- name: estimate
EXPLAIN (FORMAT JSON) SELECT 1 FROM {table} WHERE {filter}

-- name: estimate_unindexed
-- The same estimate stands without an index on the filter's columns: pg_stats holds each
-- column's common values (MariaDB's and MySQL's EXPLAIN would give the table's row count).
EXPLAIN (FORMAT JSON) SELECT 1 FROM {table} WHERE {filter}

-- name: instant
CAST({col.bare} AS timestamptz)

-- name: claim_event_at
(SELECT max(e.{ev_at.bare}) FROM {ev_table} AS e
  WHERE e.{ev_job.bare} = {table}.{id_col.bare} AND e.{ev_type.bare} = :ev_type)

-- name: claim_event_age
extract(epoch FROM (now() - {at}))::float8

-- name: count
SET LOCAL plan_cache_mode = force_custom_plan

-- name: count
SELECT count(*) AS n FROM (SELECT 1 AS one FROM {table} WHERE {filter} LIMIT :limit) AS s

-- name: claims
SET LOCAL plan_cache_mode = force_custom_plan

-- name: claims
SELECT {columns} FROM {table} WHERE {filter} LIMIT :limit

-- name: oldest_min
-- Run only when at most 10,000 due rows wait, reached through an index on the state (and the
-- named queue): the planner, misjudging the due range, would otherwise scan the table for
-- them (a sequential scan reads every row of a busy table's other queues).
SET LOCAL enable_seqscan = off

-- name: oldest_min
SET LOCAL plan_cache_mode = force_custom_plan

-- name: oldest_min
SELECT {instant} AS oldest_at, {age} AS age_s
FROM (SELECT min({time_col.bare}) AS oldest_at FROM {table} WHERE {filter}) AS o

-- name: sample
-- One waiting state at a time on a big table (see the common file), through the state's
-- index: with LIMIT 1 the planner expects a sequential scan to meet a not-due row at once,
-- where every due job of the table comes before the first one scheduled for tomorrow.
SET LOCAL enable_seqscan = off

-- name: sample
SET LOCAL plan_cache_mode = force_custom_plan

-- name: sample
SELECT {col.bare} AS v FROM {table} WHERE {filter} LIMIT 1

-- name: count_indexed
-- A state the planner calls big, counted through the index on the state up to :limit entries
-- (a floor past it): never a sequential scan, which stops early only where the state is as
-- common as the last ANALYZE said, nor a bitmap scan, which reads every entry of the state
-- before its LIMIT (stale statistics are why the state is counted at all).
SET LOCAL enable_seqscan = off

-- name: count_indexed
SET LOCAL plan_cache_mode = force_custom_plan

-- name: count_indexed
SET LOCAL enable_bitmapscan = off

-- name: count_indexed
SELECT count(*) AS n FROM (SELECT 1 AS one FROM {table} WHERE {filter} LIMIT :limit) AS c

-- name: dead_worker
NOT EXISTS (SELECT 1 FROM {hb_table} AS h WHERE h.{hb_worker.bare} = {table}.{hb_job.bare}
            AND h.{hb_beat.bare} > now() - make_interval(secs => :beat_s))

-- name: session_gone
-- The claiming session (the profile's session column) no longer exists: requeue's guard.
({sess.bare} IS NULL OR CAST({sess.bare} AS text) NOT IN
 (SELECT CAST(pid AS text) FROM pg_stat_activity))

-- name: head_index
-- The index that makes that head a seek (explain's fix); {keys} the order's columns,
-- {state_keys} the state column first, then them; {where} the waiting filter, printed.
CREATE INDEX CONCURRENTLY {head_idx.bare} ON {table} ({keys}){where}

-- name: due
{col.bare} <= now()

-- name: due_epoch
{col.bare} <= extract(epoch FROM now()) * {scale}

-- name: age_epoch
(extract(epoch FROM now()) - {col.bare} / {scale}.0)::float8

-- name: dead_worker_epoch
NOT EXISTS (SELECT 1 FROM {hb_table} AS h WHERE h.{hb_worker.bare} = {table}.{hb_job.bare}
            AND h.{hb_beat.bare} > (extract(epoch FROM now()) - :beat_s) * {scale})

-- name: queue_names
-- The named queues of a table that holds several ({filter}: one state, or every row): bounded,
-- run only on a small table or through an index leading with the queue column (or with the
-- state column, then it): a loose index scan, one probe per queue.
WITH RECURSIVE q AS (
    (SELECT {queue_col.bare} AS queue FROM {table}
      WHERE {filter} AND {queue_col.bare} IS NOT NULL ORDER BY {queue_col.bare} LIMIT 1)
    UNION ALL
    SELECT (SELECT t.{queue_col.bare} FROM {table} AS t
             WHERE {filter} AND t.{queue_col.bare} > q.queue
             ORDER BY t.{queue_col.bare} LIMIT 1)
    FROM q WHERE q.queue IS NOT NULL
)
SELECT queue FROM q WHERE queue IS NOT NULL LIMIT :limit

-- name: queue_names_estimated
-- A big table without such an index: the planner's most common values of the queue column
-- (pg_stats; a queue rarer than the statistics' sample may be missing, and the output says so).
SELECT CAST(v AS text) AS queue
FROM pg_stats AS s, unnest(s.most_common_vals::text::text[]) AS v
WHERE s.schemaname = :schema AND s.tablename = :table_name AND s.attname = :column
LIMIT :limit

-- name: clock
-- Now, as a library's state template compares it with its times (its qadmin_clock): to the
-- microsecond (a run-at time passes when it does, not up to a second later).
CURRENT_TIMESTAMP

-- name: dead_jobs
-- A library's failed jobs (qadmin dead): {filter} picks its failed states, the named queue
-- asked about and the filters; in id order, bounded (a command, run under the statement
-- timeout: the failed state is a minority the library's state index finds).
SELECT {columns} FROM {table} WHERE {filter} ORDER BY {id_col.bare} LIMIT :count

-- name: dead_jobs_match
-- The failed jobs a redrive picks, in id order after one id and up to the highest id when it
-- began, bounded; read without locks (retry_job checks each row again as it updates it).
SELECT {id_col.bare} AS id FROM {table}
WHERE {filter} AND {id_col.bare} > :after AND {id_col.bare} <= :upto
ORDER BY {id_col.bare} LIMIT :limit

-- name: retry_job
-- A failed job given back as the library's own retry does (Profile.retry, {assignments}):
-- the same UPDATE of its row, only while it is still failed ({filter}), so one a worker or
-- another redrive gave back meanwhile is left alone and not counted.
UPDATE {table} SET {assignments} WHERE {id_col.bare} = :id AND {filter}
RETURNING {id_col.bare} AS id

-- name: error_like
CAST({col.bare} AS text) ILIKE :pattern ESCAPE '!'
