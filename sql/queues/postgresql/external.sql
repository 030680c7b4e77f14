-- A table qadmin did not create (a hand-built queue), for inspect: {table} is the table,
-- {order_col.bare} its ordering key and {time_col.bare} its enqueue-time column (when given).

-- name: depth
SELECT count(*) AS depth FROM {table}

-- name: oldest
SELECT {time_col.bare} AS oldest_enqueued_at FROM {table} ORDER BY {order_col.bare} LIMIT 1
