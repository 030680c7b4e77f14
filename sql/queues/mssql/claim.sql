-- Claim queue on SQL Server (article 002): an ordered CTE with READPAST, UPDLOCK picks the
-- first unclaimed row and UPDATE ... OUTPUT sets processing_started_at and returns it, in one
-- statement (test and set). ack deletes, fail records the error. claimed_session is @@SPID.

-- name: create
CREATE TABLE {table} (
    id                    bigint IDENTITY(1, 1) NOT NULL PRIMARY KEY CLUSTERED,
    enqueued_at           datetime2(6) NOT NULL DEFAULT SYSUTCDATETIME(),
    processing_started_at datetime2(6) NULL,
    claimed_by            nvarchar(255) NULL,
    claimed_session       int NULL,
    attempts              int NOT NULL DEFAULT 0,
    last_error            nvarchar(max) NULL,
    failed_at             datetime2(6) NULL,
    payload               varbinary(max) NOT NULL
)

-- name: create
CREATE INDEX {pop_idx.bare} ON {table} (id) WHERE processing_started_at IS NULL

-- name: create
CREATE INDEX {claimed_idx.bare} ON {table} (processing_started_at)
WHERE processing_started_at IS NOT NULL

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
CREATE PROCEDURE {pop} @count int = 1, @worker nvarchar(255) = NULL
AS
BEGIN
    SET NOCOUNT ON;
    WITH claimed AS (
        SELECT TOP (@count) id, enqueued_at, processing_started_at, claimed_by,
               claimed_session, attempts, payload
        FROM {table} WITH (READPAST, ROWLOCK, UPDLOCK)
        WHERE processing_started_at IS NULL
        ORDER BY id
    )
    UPDATE claimed
    SET processing_started_at = SYSUTCDATETIME(),
        claimed_by = @worker,
        claimed_session = @@SPID,
        attempts = attempts + 1
    OUTPUT inserted.id, inserted.enqueued_at, inserted.attempts, inserted.payload;
END

-- name: create
CREATE PROCEDURE {ack} @id bigint
AS
BEGIN
    SET NOCOUNT ON;
    DELETE FROM {table}
    OUTPUT deleted.id
    WHERE id = @id AND processing_started_at IS NOT NULL;
END

-- name: create
CREATE PROCEDURE {fail} @id bigint, @error nvarchar(max), @retry bit = 0
AS
BEGIN
    SET NOCOUNT ON;
    UPDATE {table}
    SET last_error = @error,
        failed_at = SYSUTCDATETIME(),
        processing_started_at = CASE WHEN @retry = 1 THEN NULL ELSE processing_started_at END,
        claimed_by = CASE WHEN @retry = 1 THEN NULL ELSE claimed_by END,
        claimed_session = CASE WHEN @retry = 1 THEN NULL ELSE claimed_session END
    OUTPUT inserted.id, inserted.attempts
    WHERE id = @id AND processing_started_at IS NOT NULL;
END

-- name: drop
DROP PROCEDURE IF EXISTS {fail}

-- name: drop
DROP PROCEDURE IF EXISTS {ack}

-- name: drop
DROP PROCEDURE IF EXISTS {pop}

-- name: drop
DROP PROCEDURE IF EXISTS {push}

-- name: drop
DROP TABLE IF EXISTS {table}

-- name: push
EXEC {push} @payload = :payload

-- name: pop
EXEC {pop} @count = :count, @worker = :worker

-- name: ack
EXEC {ack} @id = :id

-- name: fail
EXEC {fail} @id = :id, @error = :error, @retry = :retry

-- name: peek
SELECT TOP (:count) id, enqueued_at, processing_started_at, claimed_by, attempts, last_error,
       payload
FROM {table} WITH (READPAST, READCOMMITTEDLOCK)
ORDER BY id

-- name: purge
DELETE FROM {table};
SELECT @@ROWCOUNT AS purged;

-- name: depth
SELECT count_big(*) AS depth, min(enqueued_at) AS oldest_enqueued_at FROM {table}

-- name: claims
SELECT TOP (:limit) id, processing_started_at, claimed_by,
       CAST(claimed_session AS nvarchar(20)) AS claimed_session, attempts, last_error,
       DATEDIFF_BIG(MILLISECOND, processing_started_at, SYSUTCDATETIME()) / 1000.0
           AS claimed_for_s
FROM {table} WITH (READPAST, READCOMMITTEDLOCK)
WHERE processing_started_at IS NOT NULL
ORDER BY processing_started_at

-- name: requeue
UPDATE {table}
SET processing_started_at = NULL, claimed_by = NULL, claimed_session = NULL
OUTPUT inserted.id
WHERE processing_started_at < DATEADD(SECOND, -:stale_s, SYSUTCDATETIME())

-- name: oldest
SELECT TOP (1) enqueued_at AS oldest_enqueued_at
FROM {table} WITH (READPAST, READCOMMITTEDLOCK)
ORDER BY id

-- name: counters
SELECT CAST(IDENT_CURRENT({table.lit}) AS bigint) AS enqueued_total
