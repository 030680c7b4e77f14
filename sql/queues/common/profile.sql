-- A table read through a profile (qadmin.profiles): the statements several engines share
-- (sql/queues/<engine>/profile.sql extends this file, whose header says what each name and
-- keyword holds, and replaces what its server spells its own way). Every statement is bounded
-- (LIMIT :limit) or runs only when an index fits it, under the statement timeout.

-- name: count
SELECT count(*) AS n FROM (SELECT 1 AS one FROM {table} WHERE {filter} LIMIT :limit) AS s

-- name: oldest_min
SELECT {instant} AS oldest_at, {age} AS age_s
FROM (SELECT min({time_col.bare}) AS oldest_at FROM {table} WHERE {filter}) AS o

-- name: claims
SELECT {columns} FROM {table} WHERE {filter} LIMIT :limit

-- name: heartbeats
SELECT {hb_worker.bare} AS worker, {age} AS beat_age_s FROM {hb_table} LIMIT :limit

-- name: release
UPDATE {table} SET {assignments} WHERE {id_col.bare} = :id AND {filter} AND {stale}
RETURNING {id_col.bare} AS id

-- name: high_water
SELECT max({order_col.bare}) AS high FROM {table}

-- name: state_values
SELECT {state} AS state, count(*) AS n FROM {table} GROUP BY {state} LIMIT :limit

-- name: head
-- The dequeue's head as the library takes it, read-only (qadmin explain): the first waiting
-- row ({filter}) in the library's order ({order}: checked columns, ASC/DESC), taking no row lock.
SELECT {id_col.bare} FROM {table} WHERE {filter} ORDER BY {order} LIMIT 1

-- name: sample
-- One value of a time column among the rows the filter picks (a due time that cannot be
-- compared, or one not due yet), so qadmin can say it is not a time rather than count the
-- row nowhere: bounded to one row, run on a small table or where counts found such rows
-- (there one waiting state at a time).
SELECT {col.bare} AS v FROM {table} WHERE {filter} LIMIT 1
