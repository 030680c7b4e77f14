-- A table read through a profile (qadmin.profiles): a hand-built or a library's queue table.
-- {table} is the table; the other names are its columns, checked against the catalog first;
-- {filter}, {columns}, {assignments}, {stale} and {age} are keywords qadmin builds from these
-- same names and fixed text (a state value is always a bound :vN parameter, never SQL).
-- Cost: every statement is bounded (LIMIT :limit) or runs only when an index fits it
-- (qadmin.profiles.query checks TableShape.index_leading first). SQLite has no row estimate:
-- a figure no index makes cheap is not read, and a note says which index would.
-- Times are text ('YYYY-MM-DD HH:MM:SS', as CURRENT_TIMESTAMP writes) or ISO 8601, or
-- numbers: unix epoch seconds (INTEGER or REAL), never Julian day numbers.
-- extends: queues/common/profile.sql (the statements shared with other engines)

-- name: age
(julianday('now') - CASE WHEN typeof({col.bare}) IN ('integer', 'real')
 THEN julianday({col.bare}, 'unixepoch') ELSE julianday({col.bare}) END) * 86400.0

-- name: dead_worker
NOT EXISTS (SELECT 1 FROM {hb_table} AS h WHERE h.{hb_worker.bare} = {table}.{hb_job.bare}
            AND CASE WHEN typeof(h.{hb_beat.bare}) IN ('integer', 'real')
                THEN julianday(h.{hb_beat.bare}, 'unixepoch') ELSE julianday(h.{hb_beat.bare}) END
                > julianday('now') - :beat_s / 86400.0)

-- name: head_index
-- The index that makes that head a seek (explain's fix); {keys} the order's columns,
-- {state_keys} the state column first, then them; {where} the waiting filter, printed.
CREATE INDEX {head_idx} ON {table.bare} ({keys}){where}

-- name: due
(CASE WHEN typeof({col.bare}) IN ('integer', 'real')
 THEN julianday({col.bare}, 'unixepoch') ELSE julianday({col.bare}) END) <= julianday('now')

-- name: due_epoch
{col.bare} <= (julianday('now') - 2440587.5) * 86400.0 * {scale}

-- name: age_epoch
((julianday('now') - 2440587.5) * 86400.0 - {col.bare} / {scale}.0)

-- name: dead_worker_epoch
NOT EXISTS (SELECT 1 FROM {hb_table} AS h WHERE h.{hb_worker.bare} = {table}.{hb_job.bare}
            AND h.{hb_beat.bare} > ((julianday('now') - 2440587.5) * 86400.0 - :beat_s) * {scale})

-- name: queue_names
-- The named queues of a table that holds several ({filter}: one state, or every row):
-- bounded, run only on a small table or through an index leading with the queue column (or
-- with the state column, then it).
SELECT DISTINCT {queue_col.bare} AS queue FROM {table}
WHERE {filter} AND {queue_col.bare} IS NOT NULL ORDER BY 1 LIMIT :limit

-- name: clock
-- Now, as a library's state template compares it with its times (its qadmin_clock): to the
-- microsecond (a run-at time passes when it does, not up to a second later).
strftime('%Y-%m-%d %H:%M:%f', 'now')
