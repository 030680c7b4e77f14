-- A table read through a profile (qadmin.profiles): a hand-built or a library's queue table.
-- {table} is the table; the other names are its columns, checked against the catalog first;
-- {filter}, {columns}, {assignments}, {stale} and {age} are keywords qadmin builds from these
-- same names and fixed text (a state value is always a bound :vN parameter, never SQL).
-- Cost: every statement is bounded (LIMIT :limit) or runs only when an index fits it
-- (qadmin.profiles.query checks TableShape.index_leading first), under the statement timeout.
-- MariaDB and MySQL 8 share this file.
-- session_gone (an expression) is requeue's guard that the claiming session (the
-- profile's session column) no longer exists.

-- name: age
TIMESTAMPDIFF(MICROSECOND, {col.bare}, CURRENT_TIMESTAMP(6)) / 1000000

-- name: count
SELECT count(*) AS n FROM (SELECT 1 AS one FROM {table} WHERE {filter} LIMIT :limit) AS s

-- name: estimate
EXPLAIN SELECT 1 FROM {table} WHERE {filter}

-- name: oldest_min
SELECT {instant} AS oldest_at, {age} AS age_s
FROM (SELECT min({time_col.bare}) AS oldest_at FROM {table} WHERE {filter}) AS o

-- name: claims
SELECT {columns} FROM {table} WHERE {filter} LIMIT :limit

-- name: heartbeats
SELECT {hb_worker.bare} AS worker, {age} AS beat_age_s FROM {hb_table} LIMIT :limit

-- name: release
UPDATE {table} SET {assignments} WHERE {id_col.bare} = :id AND {filter} AND {stale}

-- name: release
SELECT ROW_COUNT() AS released
-- name: release
SELECT ROW_COUNT() AS released

-- name: high_water
SELECT max({order_col.bare}) AS high FROM {table}

-- name: dead_worker
NOT EXISTS (SELECT 1 FROM {hb_table} AS h WHERE h.{hb_worker.bare} = {table}.{hb_job.bare}
            AND h.{hb_beat.bare} > CURRENT_TIMESTAMP(6) - INTERVAL :beat_s SECOND)

-- name: session_gone
({sess.bare} IS NULL OR CAST({sess.bare} AS CHAR) NOT IN
 (SELECT CAST(ID AS CHAR) FROM information_schema.PROCESSLIST))

-- name: state_values
SELECT {state} AS state, count(*) AS n FROM {table} GROUP BY {state} LIMIT :limit

-- name: head
-- The dequeue's head as the library takes it, read-only (qadmin explain): the first waiting
-- row ({filter}) in the library's order ({order}: checked columns, ASC/DESC), taking no row lock.
SELECT {id_col.bare} FROM {table} WHERE {filter} ORDER BY {order} LIMIT 1

-- name: head_index
-- The index that makes that head a seek (explain's fix); {keys} the order's columns,
-- {state_keys} the state column first, then them; {where} the waiting filter, printed.
ALTER TABLE {table} ADD INDEX {head_idx.bare} ({state_keys}), ALGORITHM=INPLACE, LOCK=NONE

-- name: due
{col.bare} <= CURRENT_TIMESTAMP(6)

-- name: due_epoch
{col.bare} <= UNIX_TIMESTAMP(CURRENT_TIMESTAMP(6)) * {scale}

-- name: age_epoch
(UNIX_TIMESTAMP(CURRENT_TIMESTAMP(6)) - {col.bare} / {scale}.0)

-- name: dead_worker_epoch
NOT EXISTS (SELECT 1 FROM {hb_table} AS h WHERE h.{hb_worker.bare} = {table}.{hb_job.bare}
            AND h.{hb_beat.bare} > (UNIX_TIMESTAMP(CURRENT_TIMESTAMP(6)) - :beat_s) * {scale})

-- name: queue_names
-- The named queues of a table that holds several ({filter}: one state, or every row):
-- bounded, run only on a small table or through an index leading with the queue column (or
-- with the state column, then it) (InnoDB reads it by a loose index scan).
SELECT DISTINCT {queue_col.bare} AS queue FROM {table}
WHERE {filter} AND {queue_col.bare} IS NOT NULL ORDER BY 1 LIMIT :limit

-- name: clock
-- Now, as a library's state template compares it with its times (its qadmin_clock): to the
-- microsecond (a run-at time passes when it does, not up to a second later).
CURRENT_TIMESTAMP(6)

-- name: sample
-- One value of a time column among the rows the filter picks (a due time that cannot be
-- compared, or one not due yet), so qadmin can say it is not a time rather than count the
-- row nowhere: bounded to one row, run on a small table or where counts found such rows.
SELECT {col.bare} AS v FROM {table} WHERE {filter} LIMIT 1
