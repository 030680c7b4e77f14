-- heap, fifo and lifo queues on SQL Server (article 000, Remus Rusanu's designs).
-- heap: no clustered index, DELETE TOP through a CTE without ORDER BY. fifo/lifo: clustered on
-- the identity key, dequeued through an ordered CTE. READPAST skips rows other consumers hold;
-- UPDLOCK makes the scan a locking read even under READ_COMMITTED_SNAPSHOT. A strict queue
-- drops READPAST, so consumers serialise on the head row (the article's strict FIFO).
-- {skip_locked} is "READPAST," or empty; {order_by} "ORDER BY id", "ORDER BY id DESC" or empty.
-- extends: queues/common/basic.sql (the statements it shares with other engines)

-- name: create
CREATE TABLE {table} (
    id          bigint IDENTITY(1, 1) NOT NULL,
    enqueued_at datetime2(6) NOT NULL DEFAULT SYSUTCDATETIME(),
    payload     varbinary(max) NOT NULL,
    PRIMARY KEY {clustering} (id)
)

-- name: create
{push_row()}

-- name: create
{pop_rows()}

-- name: create
{push_many_rows()}

-- name: push
EXEC {push} @payload = :payload

-- name: push_many
EXEC {push_many} @batch = :batch

-- name: pop
EXEC {pop} @count = :count

-- name: peek
SELECT TOP (:count) id, enqueued_at, payload
FROM {table} WITH (READPAST, READCOMMITTEDLOCK)
{order_by}

-- name: purge
DELETE FROM {table};
SELECT @@ROWCOUNT AS purged;

-- name: depth
-- At most :limit rows with ids from :lo up to below :hi, in id order through the primary key: a walk whose cost
-- the caller bounds (diagnostics/entries/size.py picks :lo: the watermark, the bottom when
-- few dead entries can lie on the way, else a window below the id high-water mark).
SELECT count_big(*) AS depth, min(w.enqueued_at) AS oldest_enqueued_at
FROM (SELECT TOP (:limit) t.enqueued_at FROM {table} AS t WITH (READPAST, READCOMMITTEDLOCK)
      WHERE t.id >= :lo AND t.id < :hi ORDER BY t.id) AS w

-- name: counters
SELECT CAST(IDENT_CURRENT({table.lit}) AS bigint) AS enqueued_total

-- name: head
-- The dequeue's head, read-only (qadmin explain): the pop's own WHERE / ORDER BY for one
-- message, taking no row lock.
SELECT TOP (1) id FROM {table} WITH (READPAST) {order_by}

-- name: head_index
-- The index that makes the head a seek in dequeue order (explain's fix when the plan sorts
-- or scans); create makes it (or the primary key serves).
CREATE INDEX {pop_idx.bare} ON {table} (id) WITH (ONLINE = ON)
