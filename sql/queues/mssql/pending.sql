-- Pending queue on SQL Server (article 000): clustered on (due_at, id); pop returns due
-- messages earliest first, skipping rows other consumers hold. Times are UTC.
-- extends: queues/mssql/basic.sql (what it does as a basic queue does)
-- extends: queues/common/pending.sql (the statements it shares with other engines)

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
{pop_begin()}
    WITH next_rows AS (
        SELECT TOP (@count) id, enqueued_at, due_at, payload
        FROM {table} WITH (READPAST, ROWLOCK, UPDLOCK)
        WHERE due_at <= SYSUTCDATETIME()
        ORDER BY due_at, id
    )
    DELETE FROM next_rows
    OUTPUT deleted.id, deleted.enqueued_at, deleted.due_at, deleted.payload;
END

-- name: create
-- Many messages in one statement (push --lines, --file; applications too): @batch is a JSON
-- array of hex-encoded payloads, all due at @due_at (now when NULL), inserted in array order
-- (so ids ascend in that order) and returned as one result set, ordered by id.
CREATE PROCEDURE {push_many} @batch nvarchar(max), @due_at datetime2(6) = NULL
AS
BEGIN
    SET NOCOUNT ON;
    DECLARE @added TABLE (id bigint, enqueued_at datetime2(6), due_at datetime2(6));
    INSERT INTO {table} (due_at, payload)
    OUTPUT inserted.id, inserted.enqueued_at, inserted.due_at INTO @added
    SELECT COALESCE(@due_at, SYSUTCDATETIME()), CONVERT(varbinary(max), j.[value], 2)
    FROM OPENJSON(@batch) AS j
    ORDER BY CAST(j.[key] AS int);
    SELECT * FROM @added ORDER BY id;
END

-- name: push
EXEC {push} @payload = :payload, @due_at = :due_at

-- name: push_many
EXEC {push_many} @batch = :batch, @due_at = :due_at

-- name: peek
SELECT TOP (:count) id, enqueued_at, due_at, payload
FROM {table} WITH (READPAST, READCOMMITTEDLOCK)
ORDER BY due_at, id

-- name: depth
-- At most :limit rows with ids from :lo up to below :hi, in id order through the primary key: a walk whose cost
-- the caller bounds (diagnostics/entries/size.py picks :lo: the watermark, the bottom when
-- few dead entries can lie on the way, else a window below the id high-water mark).
SELECT count_big(*) AS depth, min(w.enqueued_at) AS oldest_enqueued_at
FROM (SELECT TOP (:limit) t.enqueued_at FROM {table} AS t WITH (READPAST, READCOMMITTEDLOCK)
      WHERE t.id >= :lo AND t.id < :hi ORDER BY t.id) AS w

-- name: due
-- The due messages (what a pop can take now): at most :limit of them, earliest due first
-- through the (due_at, id) index, as the pop walks it, and the earliest due time. A pending
-- queue's depth and oldest age are these: messages not due yet are counted apart (scheduled).
SELECT count_big(*) AS depth, min(d.due_at) AS oldest_due_at FROM (
    SELECT TOP (:limit) due_at FROM {table} WITH (READPAST, READCOMMITTEDLOCK)
    WHERE due_at <= SYSUTCDATETIME() ORDER BY due_at, id) AS d

-- name: scheduled
-- Messages not due yet: at most :limit, through the (due_at, id) index from now up.
SELECT count_big(*) AS scheduled FROM (
    SELECT TOP (:limit) id FROM {table} WITH (READPAST, READCOMMITTEDLOCK)
    WHERE due_at > SYSUTCDATETIME() ORDER BY due_at, id) AS s

-- name: head
-- The dequeue's head, read-only (qadmin explain): the pop's own WHERE / ORDER BY for one
-- message, taking no row lock.
SELECT TOP (1) id FROM {table} WITH (READPAST)
WHERE due_at <= SYSUTCDATETIME()
ORDER BY due_at, id

-- name: head_index
-- The index that makes the head a seek in dequeue order (explain's fix when the plan sorts
-- or scans); create makes it (or the primary key serves).
CREATE INDEX {pop_idx.bare} ON {table} (due_at, id) WITH (ONLINE = ON)
