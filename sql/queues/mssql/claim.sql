-- Claim queue on SQL Server (article 002): an ordered CTE with READPAST, UPDLOCK picks the
-- first unclaimed row and UPDATE ... OUTPUT sets processing_started_at and returns it, in one
-- statement (test and set). ack deletes, fail records the error. claimed_session is @@SPID.
-- Dead letters: fail appends each attempt's error to errors (a JSON array of objects with
-- attempt, error and at); the fail that records attempt max_attempts (read from the catalog
-- entry's options on every call) moves the message to the queue's _dead table in the same
-- transaction. Redrive moves it back as a new delivery: a new id at the tail (so no attempt
-- token of the old id can match it), attempts reset, enqueued_at and errors kept.
-- extends: queues/mssql/basic.sql (its messages go in as a basic queue's do: push, push_many, purge and counters come from there)

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
    errors                nvarchar(max) NULL,
    payload               varbinary(max) NOT NULL
)

-- name: create
CREATE TABLE {dead} (
    id          bigint NOT NULL PRIMARY KEY CLUSTERED,
    enqueued_at datetime2(6) NOT NULL,
    attempts    int NOT NULL,
    last_error  nvarchar(max) NULL,
    errors      nvarchar(max) NULL,
    died_at     datetime2(6) NOT NULL DEFAULT SYSUTCDATETIME(),
    payload     varbinary(max) NOT NULL
)

-- name: create
CREATE INDEX {dead_idx.bare} ON {dead} (died_at)

-- name: create
CREATE INDEX {pop_idx.bare} ON {table} (id) WHERE processing_started_at IS NULL

-- name: create
CREATE INDEX {claimed_idx.bare} ON {table} (processing_started_at)
WHERE processing_started_at IS NOT NULL

-- name: create
{push_row()}

-- name: create
CREATE PROCEDURE {pop} @count int = 1, @worker nvarchar(255) = NULL
AS
BEGIN
    SET NOCOUNT ON;
    IF {paused()} SET @count = 0;  -- paused (qadmin pause): take nothing
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
-- Fencing: @attempt is the attempt number pop returned (NULL = unfenced); ack and fail act
-- only while the row's attempts still equal it, so a consumer whose claim went stale and was
-- requeued and claimed again cannot ack or fail the new claim.
CREATE PROCEDURE {ack} @id bigint, @attempt int = NULL
AS
BEGIN
    SET NOCOUNT ON;
    DELETE FROM {table}
    OUTPUT deleted.id
    WHERE id = @id AND processing_started_at IS NOT NULL
      AND (@attempt IS NULL OR attempts = @attempt);
END

-- name: create
CREATE PROCEDURE {fail} @id bigint, @error nvarchar(max), @retry bit = 0, @attempt int = NULL
AS
BEGIN
    SET NOCOUNT ON;
    SET XACT_ABORT ON;
    DECLARE @failed TABLE (id bigint NOT NULL, attempts int NOT NULL);
    DECLARE @max int;
    DECLARE @dead bit = 0;
    -- Cut to {error_chars} characters, then "... (truncated, N chars)" (kinds.ERROR_CHARS).
    IF LEN(@error) > {error_chars}
        SET @error = CONCAT(LEFT(@error, {error_chars}), N'... (truncated, ', LEN(@error), N' chars)');
    BEGIN TRANSACTION;
    UPDATE {table}
    SET last_error = @error,
        failed_at = SYSUTCDATETIME(),
        -- The first error and the latest: element 1 goes once {errors_kept} are kept.
        errors = JSON_MODIFY(
            {errors_trimmed()},
            'append $', JSON_QUERY(
            (SELECT attempts AS [attempt], @error AS [error], SYSUTCDATETIME() AS [at]
             FOR JSON PATH, WITHOUT_ARRAY_WRAPPER))),
        processing_started_at = CASE WHEN @retry = 1 THEN NULL ELSE processing_started_at END,
        claimed_by = CASE WHEN @retry = 1 THEN NULL ELSE claimed_by END,
        claimed_session = CASE WHEN @retry = 1 THEN NULL ELSE claimed_session END
    OUTPUT inserted.id, inserted.attempts INTO @failed (id, attempts)
    WHERE id = @id AND processing_started_at IS NOT NULL
      AND (@attempt IS NULL OR attempts = @attempt);
    IF EXISTS (SELECT 1 FROM @failed)
    BEGIN
        SELECT @max = TRY_CAST(JSON_VALUE(options, '$.max_attempts') AS int)
        FROM {catalog} WHERE name = {table.bare_lit};
        IF (SELECT attempts FROM @failed) >= @max
        BEGIN
            DELETE FROM {table}
            OUTPUT deleted.id, deleted.enqueued_at, deleted.attempts, deleted.last_error,
                   deleted.errors, SYSUTCDATETIME(), deleted.payload
            INTO {dead} (id, enqueued_at, attempts, last_error, errors, died_at, payload)
            WHERE id = @id;
            SET @dead = 1;
        END
    END
    COMMIT TRANSACTION;
    SELECT id, attempts, @dead AS dead FROM @failed;
END

-- name: create
{push_many_rows()}

-- name: drop
DROP PROCEDURE IF EXISTS {push_many}

-- name: drop
DROP PROCEDURE IF EXISTS {fail}

-- name: drop
DROP PROCEDURE IF EXISTS {ack}

-- name: drop
DROP PROCEDURE IF EXISTS {pop}

-- name: drop
DROP PROCEDURE IF EXISTS {push}

-- name: drop
DROP TABLE IF EXISTS {dead}

-- name: drop
DROP TABLE IF EXISTS {table}

-- name: pop
EXEC {pop} @count = :count, @worker = :worker

-- name: ack
EXEC {ack} @id = :id

-- name: fail
EXEC {fail} @id = :id, @error = :error, @retry = :retry

-- name: ack_fenced
EXEC {ack} @id = :id, @attempt = :attempt

-- name: fail_fenced
EXEC {fail} @id = :id, @error = :error, @retry = :retry, @attempt = :attempt

-- name: peek
SELECT TOP (:count) id, enqueued_at, processing_started_at, claimed_by, attempts, last_error,
       payload
FROM {table} WITH (READPAST, READCOMMITTEDLOCK)
ORDER BY id

-- name: depth
-- At most :limit waiting rows (claimed ones are counted apart: claimed_count) with ids from
-- :lo up to below :hi, in id order (the pop index, or the primary key): a walk whose cost
-- the caller bounds (diagnostics/entries/size.py picks :lo: the watermark, the bottom when
-- few dead entries can lie on the way, else a window below the id high-water mark).
SELECT count_big(*) AS depth, min(w.enqueued_at) AS oldest_enqueued_at
FROM (SELECT TOP (:limit) t.enqueued_at FROM {table} AS t WITH (READPAST, READCOMMITTEDLOCK)
      WHERE t.id >= :lo AND t.id < :hi AND t.processing_started_at IS NULL ORDER BY t.id) AS w

-- name: claimed_count
-- Claimed rows, at most :limit (through the claimed index): a claim queue's depth is its
-- waiting rows, and the catalog's row estimate counts these too.
SELECT count_big(*) AS claimed FROM (SELECT TOP (:limit) id FROM {table} WITH (READPAST, READCOMMITTEDLOCK)
      WHERE processing_started_at IS NOT NULL) AS c

-- name: claims
SELECT TOP (:limit) id, processing_started_at, claimed_by,
       CAST(claimed_session AS nvarchar(20)) AS claimed_session, attempts, last_error,
       DATEDIFF_BIG(MILLISECOND, processing_started_at, SYSUTCDATETIME()) / 1000.0
           AS claimed_for_s
FROM {table} WITH (READPAST, READCOMMITTEDLOCK)
WHERE processing_started_at IS NOT NULL
ORDER BY processing_started_at

-- name: requeue
-- A stale claim at its last allowed attempt (max_attempts) is a message that killed its
-- consumer every time (it never reached fail): it moves to the dead table with an error entry
-- saying so, instead of being released forever; the rest are released (one transaction).
-- READPAST skips a stale claim whose row is locked (its consumer's ack in progress): one such
-- row never blocks the rest (UNVERIFIED: no SQL Server here; the T-SQL gate parses it).
DECLARE @cutoff datetime2 = DATEADD(SECOND, -:stale_s, SYSUTCDATETIME());
DECLARE @max int = (SELECT TRY_CAST(JSON_VALUE(options, '$.max_attempts') AS int)
                    FROM {catalog} WHERE name = {table.bare_lit});
UPDATE {table} WITH (ROWLOCK, READPAST)
SET last_error = CONCAT(N'claim went stale after attempt ', attempts, N' (consumer lost)'),
    failed_at = SYSUTCDATETIME(),
    errors = JSON_MODIFY(
        {errors_trimmed()},
        'append $', JSON_QUERY(
        (SELECT attempts AS [attempt],
                CONCAT(N'claim went stale after attempt ', attempts, N' (consumer lost)')
                    AS [error],
                SYSUTCDATETIME() AS [at]
         FOR JSON PATH, WITHOUT_ARRAY_WRAPPER)))
WHERE processing_started_at < @cutoff AND attempts >= @max;
DELETE FROM {table} WITH (ROWLOCK, READPAST)
OUTPUT deleted.id, deleted.enqueued_at, deleted.attempts, deleted.last_error,
       deleted.errors, SYSUTCDATETIME(), deleted.payload
INTO {dead} (id, enqueued_at, attempts, last_error, errors, died_at, payload)
OUTPUT deleted.id, CAST(1 AS bit) AS dead
WHERE processing_started_at < @cutoff AND attempts >= @max;
UPDATE {table} WITH (ROWLOCK, READPAST)
SET processing_started_at = NULL, claimed_by = NULL, claimed_session = NULL
OUTPUT inserted.id, CAST(0 AS bit) AS dead
WHERE processing_started_at < @cutoff;

-- name: dead_depth
-- Bounded like inspect's other counts: at most :limit rows are counted.
SELECT (SELECT count_big(*) FROM (SELECT TOP (:limit) id FROM {dead}
                                  WITH (READPAST, READCOMMITTEDLOCK)) AS s) AS dead,
       (SELECT TOP (1) DATEDIFF_BIG(MILLISECOND, died_at, SYSUTCDATETIME()) / 1000.0
          FROM {dead} WITH (READPAST, READCOMMITTEDLOCK) ORDER BY died_at) AS oldest_dead_s

-- name: dead_list
-- The dead messages, first to die first, at most count; the filters of dead, discard and
-- redrive, each on when its flag is 1: died more than older_s seconds ago, within the last
-- newer_s seconds, the error it died with matching the LIKE pattern ('!' escapes;
-- case-insensitive). Flags, not NULLs: every parameter keeps one type.
SELECT TOP (:count) d.id, d.enqueued_at, d.attempts, d.died_at, d.errors,
       SUBSTRING(d.payload, 1, :preview) AS payload
FROM {dead} AS d WITH (READPAST, READCOMMITTEDLOCK)
WHERE 1 = 1
  AND (:has_older = 0 OR d.died_at < DATEADD(SECOND, -:older_s, SYSUTCDATETIME()))
  AND (:has_newer = 0 OR d.died_at >= DATEADD(SECOND, -:newer_s, SYSUTCDATETIME()))
  AND (:has_error = 0 OR LOWER(d.last_error) LIKE LOWER(:pattern) ESCAPE '!')
ORDER BY d.died_at, d.id

-- name: dead_match
-- The dead messages a filter picks, in id order after one id and up to another (the highest
-- when a run began: deaths during it wait for the next run), bounded. Read without
-- locks: a dead row never changes, so a mover locks each id by its key and finds it still
-- the same, or gone (another redrive or discard took it).
SELECT TOP (:limit) d.id FROM {dead} AS d WITH (READPAST, READCOMMITTEDLOCK)
WHERE d.id > :after AND d.id <= :upto
  AND (:has_older = 0 OR d.died_at < DATEADD(SECOND, -:older_s, SYSUTCDATETIME()))
  AND (:has_newer = 0 OR d.died_at >= DATEADD(SECOND, -:newer_s, SYSUTCDATETIME()))
  AND (:has_error = 0 OR LOWER(d.last_error) LIKE LOWER(:pattern) ESCAPE '!')
ORDER BY d.id

-- name: dead_top
SELECT max(id) AS top_id FROM {dead}

-- name: dead_one
-- One dead message whole (dead --id): its error history and payload.
SELECT id, enqueued_at, attempts, died_at, last_error, errors, payload
FROM {dead} WITH (READCOMMITTEDLOCK) WHERE id = :id

-- name: dead_take
-- Lock one dead message by its key and read its payload (redrive --to).
SELECT id, payload FROM {dead} WITH (UPDLOCK, ROWLOCK) WHERE id = :id

-- name: discard_one
-- After redrive_id locked it: a dead letter thrown away (the live table is never touched).
DELETE FROM {dead} WHERE id = :id

-- name: redrive_id
SELECT id FROM {dead} WITH (UPDLOCK, ROWLOCK) WHERE id = :id

-- name: redrive_one
INSERT INTO {table} (enqueued_at, attempts, last_error, errors, payload)
OUTPUT inserted.id AS new_id
SELECT enqueued_at, 0, last_error, errors, payload FROM {dead} WHERE id = :id

-- name: redrive_one
DELETE FROM {dead} WHERE id = :id

-- name: head
-- The dequeue's head, read-only (qadmin explain): the pop's own WHERE / ORDER BY for one
-- message, taking no row lock.
SELECT TOP (1) id FROM {table} WITH (READPAST)
WHERE processing_started_at IS NULL
ORDER BY id

-- name: head_index
-- The index that makes the head a seek in dequeue order (explain's fix when the plan sorts
-- or scans); create makes it (or the primary key serves).
CREATE INDEX {pop_idx.bare} ON {table} (id) WHERE processing_started_at IS NULL WITH (ONLINE = ON)
