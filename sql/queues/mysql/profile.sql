-- A table read through a profile (qadmin.profiles): a hand-built or a library's queue table.
-- {table} is the table; the other names are its columns, checked against the catalog first;
-- {filter}, {columns}, {assignments}, {stale} and {age} are keywords qadmin builds from these
-- same names and fixed text (a state value is always a bound :vN parameter, never SQL).
-- Cost: every statement is bounded (LIMIT :limit) or runs only when an index fits it
-- (qadmin.profiles.query checks TableShape.index_leading first), under the statement timeout.
-- MariaDB and MySQL 8 share this file.
-- session_gone (an expression) is requeue's guard that the claiming session (the
-- profile's session column) no longer exists.
-- extends: queues/common/profile.sql (the statements shared with other engines)

-- name: age
TIMESTAMPDIFF(MICROSECOND, {col.bare}, CURRENT_TIMESTAMP(6)) / 1000000

-- name: estimate
EXPLAIN SELECT 1 FROM {table} WHERE {filter}

-- name: release
UPDATE {table} SET {assignments} WHERE {id_col.bare} = :id AND {filter} AND {stale}

-- name: release
SELECT ROW_COUNT() AS released

-- name: release
SELECT ROW_COUNT() AS released

-- name: dead_worker
NOT EXISTS (SELECT 1 FROM {hb_table} AS h WHERE h.{hb_worker.bare} = {table}.{hb_job.bare}
            AND h.{hb_beat.bare} > CURRENT_TIMESTAMP(6) - INTERVAL :beat_s SECOND)

-- name: session_gone
({sess.bare} IS NULL OR CAST({sess.bare} AS CHAR) NOT IN
 (SELECT CAST(ID AS CHAR) FROM information_schema.PROCESSLIST))

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
