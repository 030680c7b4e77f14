-- SQL Server's pieces of statements that several templates share ({name()} in a template):
-- each is written once here. A fragment's text is all SQL: its comments are sent with it.
--
-- paused: true while the queue is paused (qadmin pause): its catalog entry's options carry
-- paused_at. One primary-key read of the catalog; under READ COMMITTED it waits at most for
-- a pause or resume being committed (one row, a short transaction), and never for a push.
-- Each pop procedure reads it first and, while it is true, pops with @count = 0 (an empty
-- result set of the usual columns): pop_begin, the head of every pop procedure but claim's.

-- name: pop_rows
{pop_begin()}
    WITH next_rows AS (
        SELECT TOP (@count) id, enqueued_at, payload
        FROM {table} WITH ({skip_locked} ROWLOCK, UPDLOCK)
        {order_by}
    )
    DELETE FROM next_rows
    OUTPUT deleted.id, deleted.enqueued_at, deleted.payload;
END

-- name: push_many_rows
-- Many messages in one statement (push --lines, --file; applications too): @batch is a JSON
-- array of hex-encoded payloads, inserted in array order (so ids ascend in that
-- order) and returned as one result set, ordered by id.
CREATE PROCEDURE {push_many} @batch nvarchar(max)
AS
BEGIN
    SET NOCOUNT ON;
    DECLARE @added TABLE (id bigint, enqueued_at datetime2(6));
    INSERT INTO {table} (payload)
    OUTPUT inserted.id, inserted.enqueued_at INTO @added
    SELECT CONVERT(varbinary(max), j.[value], 2)
    FROM OPENJSON(@batch) AS j
    ORDER BY CAST(j.[key] AS int);
    SELECT * FROM @added ORDER BY id;
END

-- name: errors_trimmed
CASE WHEN (SELECT COUNT(*) FROM OPENJSON(errors)) >= {errors_kept}
                 THEN CONCAT(N'[', (SELECT STRING_AGG(e.value, N',')
                                      WITHIN GROUP (ORDER BY CAST(e.[key] AS int))
                                    FROM OPENJSON(errors) AS e WHERE e.[key] <> N'1'), N']')
                 ELSE COALESCE(errors, N'[]') END

-- name: push_row
CREATE PROCEDURE {push} @payload varbinary(max)
AS
BEGIN
    SET NOCOUNT ON;
    INSERT INTO {table} (payload)
    OUTPUT inserted.id, inserted.enqueued_at
    VALUES (@payload);
END

-- name: lock_released
END TRY
    BEGIN CATCH
        EXEC sp_releaseapplock @Resource = @lock, @LockOwner = 'Session';
        THROW;
    END CATCH;
    EXEC sp_releaseapplock @Resource = @lock, @LockOwner = 'Session';

-- name: paused
EXISTS (SELECT 1 FROM {catalog}
        WHERE name = {table.bare_lit} AND JSON_VALUE(options, '$.paused_at') IS NOT NULL)

-- name: pop_begin
CREATE PROCEDURE {pop} @count int = 1
AS
BEGIN
    SET NOCOUNT ON;
    IF {paused()} SET @count = 0;  -- paused (qadmin pause): take nothing
