-- A table read through a profile (qadmin.profiles): a hand-built or a library's queue table.
-- {table} is the table; the other names are its columns, checked against the catalog first;
-- {filter}, {columns}, {assignments}, {stale} and {age} are keywords qadmin builds from these
-- same names and fixed text (a state value is always a bound :vN parameter, never SQL).
-- Cost: every statement is bounded (TOP (:limit)) or runs only when an index fits it
-- (qadmin.profiles.query checks TableShape.index_leading first), under the statement timeout.
-- SQL Server has no row estimate here: a figure no index makes cheap is not read, and a note
-- says which index would. Times: datetime2 columns are taken as UTC (qadmin's own are).

-- session_gone (an expression) is requeue's guard that the claiming session (the
-- profile's session column) no longer exists.
-- extends: queues/common/profile.sql (the statements shared with other engines)

-- name: age
DATEDIFF_BIG(MILLISECOND, {col.bare}, SYSUTCDATETIME()) / 1000.0

-- name: count
SELECT count(*) AS n FROM (SELECT TOP (:limit) 1 AS one FROM {table} WHERE {filter}) AS s

-- name: claims
SELECT TOP (:limit) {columns} FROM {table} WHERE {filter}

-- name: heartbeats
SELECT TOP (:limit) {hb_worker.bare} AS worker, {age} AS beat_age_s FROM {hb_table}

-- name: release
UPDATE {table} SET {assignments} OUTPUT inserted.{id_col.bare} AS id
WHERE {id_col.bare} = :id AND {filter} AND {stale}

-- name: dead_worker
NOT EXISTS (SELECT 1 FROM {hb_table} AS h WHERE h.{hb_worker.bare} = {table}.{hb_job.bare}
            AND h.{hb_beat.bare} > DATEADD(SECOND, -:beat_s, SYSUTCDATETIME()))

-- name: session_gone
({sess.bare} IS NULL OR CAST({sess.bare} AS nvarchar(20)) NOT IN
 (SELECT CAST(session_id AS nvarchar(20)) FROM sys.dm_exec_sessions))

-- name: state_values
SELECT TOP (:limit) {state} AS state, count(*) AS n FROM {table} GROUP BY {state}

-- name: head
-- The dequeue's head as the library takes it, read-only (qadmin explain): the first waiting
-- row ({filter}) in the library's order ({order}: checked columns, ASC/DESC), taking no row lock.
SELECT TOP (1) {id_col.bare} FROM {table} WITH (READPAST) WHERE {filter} ORDER BY {order}

-- name: head_index
-- The index that makes that head a seek (explain's fix); {keys} the order's columns, {where}
-- the waiting filter, printed.
CREATE INDEX {head_idx.bare} ON {table} ({keys}){where} WITH (ONLINE = ON)

-- name: due
{col.bare} <= SYSUTCDATETIME()

-- name: due_epoch
{col.bare} <= DATEDIFF_BIG(MILLISECOND, '19700101', SYSUTCDATETIME()) / 1000.0 * {scale}

-- name: age_epoch
(DATEDIFF_BIG(MILLISECOND, '19700101', SYSUTCDATETIME()) / 1000.0 - {col.bare} / {scale}.0)

-- name: dead_worker_epoch
NOT EXISTS (SELECT 1 FROM {hb_table} AS h WHERE h.{hb_worker.bare} = {table}.{hb_job.bare}
            AND h.{hb_beat.bare} >
                (DATEDIFF_BIG(MILLISECOND, '19700101', SYSUTCDATETIME()) / 1000.0 - :beat_s) * {scale})

-- name: queue_names
-- The named queues of a table that holds several ({filter}: one state, or every row):
-- bounded, run only on a small table or through an index leading with the queue column (or
-- with the state column, then it).
SELECT DISTINCT TOP (:limit) {queue_col.bare} AS queue FROM {table}
WHERE {filter} AND {queue_col.bare} IS NOT NULL ORDER BY 1

-- name: sample
-- One value of a time column among the rows the filter picks (a due time that cannot be
-- compared, or one not due yet), so qadmin can say it is not a time rather than count the
-- row nowhere: bounded to one row, run on a small table or where counts found such rows.
SELECT TOP (1) {col.bare} AS v FROM {table} WHERE {filter}
