-- heap, fifo and lifo queues on SQL Server (article 000, Remus Rusanu's designs).
-- heap: no clustered index, DELETE TOP through a CTE without ORDER BY. fifo/lifo: clustered on
-- the identity key, dequeued through an ordered CTE. READPAST skips rows other consumers hold;
-- UPDLOCK makes the scan a locking read even under READ_COMMITTED_SNAPSHOT. A strict queue
-- drops READPAST, so consumers serialise on the head row (the article's strict FIFO).
-- {skip_locked} is "READPAST," or empty; {order_by} "ORDER BY id", "ORDER BY id DESC" or empty.

-- name: create
CREATE TABLE {table} (
    id          bigint IDENTITY(1, 1) NOT NULL,
    enqueued_at datetime2(6) NOT NULL DEFAULT SYSUTCDATETIME(),
    payload     varbinary(max) NOT NULL,
    PRIMARY KEY {clustering} (id)
)

-- name: create
CREATE PROCEDURE {push} @payload varbinary(max)
AS
BEGIN
    SET NOCOUNT ON;
    INSERT INTO {table} (payload)
    OUTPUT inserted.id, inserted.enqueued_at
    VALUES (@payload);
END

-- name: create
CREATE PROCEDURE {pop} @count int = 1
AS
BEGIN
    SET NOCOUNT ON;
    WITH next_rows AS (
        SELECT TOP (@count) id, enqueued_at, payload
        FROM {table} WITH ({skip_locked} ROWLOCK, UPDLOCK)
        {order_by}
    )
    DELETE FROM next_rows
    OUTPUT deleted.id, deleted.enqueued_at, deleted.payload;
END

-- name: drop
DROP PROCEDURE IF EXISTS {pop}

-- name: drop
DROP PROCEDURE IF EXISTS {push}

-- name: drop
DROP TABLE IF EXISTS {table}

-- name: push
EXEC {push} @payload = :payload

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
SELECT count_big(*) AS depth, min(enqueued_at) AS oldest_enqueued_at FROM {table}

-- name: oldest
SELECT TOP (1) enqueued_at AS oldest_enqueued_at
FROM {table} WITH (READPAST, READCOMMITTEDLOCK)
ORDER BY id

-- name: counters
SELECT CAST(IDENT_CURRENT({table.lit}) AS bigint) AS enqueued_total
