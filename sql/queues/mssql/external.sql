-- A table qadmin did not create (a hand-built queue), for inspect: {table} is the table,
-- {order_col.bare} its ordering key and {time_col.bare} its enqueue-time column (when given).

-- name: depth
SELECT count_big(*) AS depth FROM {table} WITH (READPAST, READCOMMITTEDLOCK)

-- name: oldest
SELECT TOP (1) {time_col.bare} AS oldest_enqueued_at
FROM {table} WITH (READPAST, READCOMMITTEDLOCK)
ORDER BY {order_col.bare}
