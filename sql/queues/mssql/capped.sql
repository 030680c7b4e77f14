-- Fixed-size FIFO that overwrites its oldest message (article 001), on SQL Server.
-- Ids come from a SEQUENCE, not max(id)+1, so they are never reused after pops or a drain.
-- Message id k lives in slot k % capacity. The push reads the slot with UPDLOCK, HOLDLOCK (a
-- key-range lock, so no other push can insert the same slot meanwhile), then inserts into an
-- empty slot or overwrites an older message and returns its id as overwritten_id. If a newer
-- push (k + capacity) already holds the slot, push k is the oldest message: it is dropped at
-- once and reports its own id.

-- name: create
CREATE SEQUENCE {seq} AS bigint START WITH 0 MINVALUE 0 INCREMENT BY 1 CACHE 1000

-- name: create
CREATE TABLE {table} (
    id          bigint NOT NULL PRIMARY KEY CLUSTERED,
    slot        int NOT NULL UNIQUE,
    enqueued_at datetime2(6) NOT NULL DEFAULT SYSUTCDATETIME(),
    payload     varbinary(max) NOT NULL
)

-- name: create
CREATE PROCEDURE {push} @payload varbinary(max)
AS
BEGIN
    SET NOCOUNT ON;
    SET XACT_ABORT ON;
    DECLARE @id bigint = NEXT VALUE FOR {seq};
    DECLARE @slot int = @id % {capacity};
    DECLARE @old bigint;
    DECLARE @at datetime2(6) = SYSUTCDATETIME();
    BEGIN TRANSACTION;
    SELECT @old = id FROM {table} WITH (UPDLOCK, HOLDLOCK, ROWLOCK) WHERE slot = @slot;
    IF @old IS NOT NULL AND @old > @id
        SELECT @id AS id, @at AS enqueued_at, @id AS overwritten_id;
    ELSE IF @old IS NOT NULL
    BEGIN
        UPDATE {table} SET id = @id, payload = @payload, enqueued_at = @at WHERE slot = @slot;
        SELECT @id AS id, @at AS enqueued_at, @old AS overwritten_id;
    END
    ELSE
    BEGIN
        INSERT INTO {table} (id, slot, enqueued_at, payload) VALUES (@id, @slot, @at, @payload);
        SELECT @id AS id, @at AS enqueued_at, CAST(NULL AS bigint) AS overwritten_id;
    END;
    COMMIT TRANSACTION;
END

-- name: create
{pop_rows()}

-- name: drop
DROP PROCEDURE IF EXISTS {pop}

-- name: drop
DROP PROCEDURE IF EXISTS {push}

-- name: drop
DROP TABLE IF EXISTS {table}

-- name: drop
DROP SEQUENCE IF EXISTS {seq}

-- name: push
EXEC {push} @payload = :payload

-- name: pop
EXEC {pop} @count = :count

-- name: peek
SELECT TOP (:count) id, enqueued_at, payload
FROM {table} WITH (READPAST, READCOMMITTEDLOCK)
ORDER BY id

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
SELECT COALESCE(CAST(last_used_value AS bigint) + 1, CAST(start_value AS bigint)) AS enqueued_total
FROM sys.sequences WHERE object_id = OBJECT_ID({seq.lit})

-- name: head
-- The dequeue's head, read-only (qadmin explain): the pop's own WHERE / ORDER BY for one
-- message, taking no row lock.
SELECT TOP (1) id FROM {table} WITH (READPAST) ORDER BY id

-- name: head_index
-- The index that makes the head a seek in dequeue order (explain's fix when the plan sorts
-- or scans); create makes it (or the primary key serves).
CREATE INDEX {pop_idx.bare} ON {table} (id) WITH (ONLINE = ON)
