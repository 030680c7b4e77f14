-- Pending queue on SQL Server (article 000): clustered on (due_at, id); pop returns due
-- messages earliest first, skipping rows other consumers hold. Times are UTC.

-- name: create
CREATE TABLE {table} (
    id          bigint IDENTITY(1, 1) NOT NULL PRIMARY KEY NONCLUSTERED,
    due_at      datetime2(6) NOT NULL,
    enqueued_at datetime2(6) NOT NULL DEFAULT SYSUTCDATETIME(),
    payload     varbinary(max) NOT NULL
)

-- name: create
CREATE CLUSTERED INDEX {pop_idx.bare} ON {table} (due_at, id)

-- name: create
CREATE PROCEDURE {push} @payload varbinary(max), @due_at datetime2(6) = NULL
AS
BEGIN
    SET NOCOUNT ON;
    INSERT INTO {table} (due_at, payload)
    OUTPUT inserted.id, inserted.enqueued_at, inserted.due_at
    VALUES (COALESCE(@due_at, SYSUTCDATETIME()), @payload);
END

-- name: create
CREATE PROCEDURE {pop} @count int = 1
AS
BEGIN
    SET NOCOUNT ON;
    WITH next_rows AS (
        SELECT TOP (@count) id, enqueued_at, due_at, payload
        FROM {table} WITH (READPAST, ROWLOCK, UPDLOCK)
        WHERE due_at <= SYSUTCDATETIME()
        ORDER BY due_at, id
    )
    DELETE FROM next_rows
    OUTPUT deleted.id, deleted.enqueued_at, deleted.due_at, deleted.payload;
END

-- name: drop
DROP PROCEDURE IF EXISTS {pop}

-- name: drop
DROP PROCEDURE IF EXISTS {push}

-- name: drop
DROP TABLE IF EXISTS {table}

-- name: push
EXEC {push} @payload = :payload, @due_at = :due_at

-- name: pop
EXEC {pop} @count = :count

-- name: peek
SELECT TOP (:count) id, enqueued_at, due_at, payload
FROM {table} WITH (READPAST, READCOMMITTEDLOCK)
ORDER BY due_at, id

-- name: purge
DELETE FROM {table};
SELECT @@ROWCOUNT AS purged;

-- name: depth
SELECT count_big(*) AS depth, min(enqueued_at) AS oldest_enqueued_at FROM {table}

-- name: oldest
SELECT TOP (1) enqueued_at AS oldest_enqueued_at
FROM {table} WITH (READPAST, READCOMMITTEDLOCK)
ORDER BY id

-- name: due
SELECT count(*) AS due FROM (
    SELECT TOP (10000) id FROM {table} WITH (READPAST, READCOMMITTEDLOCK)
    WHERE due_at <= SYSUTCDATETIME()) AS d

-- name: counters
SELECT CAST(IDENT_CURRENT({table.lit}) AS bigint) AS enqueued_total
