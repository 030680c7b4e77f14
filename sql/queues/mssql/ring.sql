-- Preallocated ring of slots driven by two sequences (article 003, Thomas Kejser's LMAX-style
-- queue), on SQL Server 2017+ (sys.sequences.last_used_value).
--
-- Invariants (README, "The ring"), the same as on the other engines:
-- * Message k lives in slot k % capacity; slots are only UPDATEd, never inserted or deleted.
-- * The bound: a ring never holds more than its capacity, uncommitted pushes included. Push
--   counts the messages taken = push_next - pop_next + parked numbers (sequences are not
--   transactional: a number an uncommitted push took counts at once) and takes a number only
--   while that count stays within the capacity, under the ring's push lock (sp_getapplock
--   owned by the session, held from the count to NEXT VALUE FOR only and released on error:
--   never to commit). Pops take their numbers under the ring's pop lock the same way, so no
--   two poppers race for "next". The reads inside the locks skip locked rows (READPAST) or read
--   the parked list uncommitted (NOLOCK: a park in flight counts), so a lock holder never
--   waits on a row.
-- * push also takes a number only after seeing the slot of the next number free (or holding
--   that number or a later one: the read was stale): a slot still holding an older message
--   refuses the push and uses no number. A number whose slot another transaction holds is kept
--   in the overflow table: no number is abandoned.
-- * pop takes a number only after seeing message "next" present: an empty ring returns nothing
--   and uses no number. A number whose message is not there (something took a pop number
--   without the pop lock) is parked in the pending table and served first by later pops, so it
--   is never skipped and no later message is lost.
-- * Neither waits on a slot another transaction holds (READPAST): a push puts its message in the
--   overflow table instead, a pop parks its number. A number is taken before the write and a
--   deadlock would roll the write back but not the number; with no waits on slots, none forms.
-- Sequences are NO CACHE: the article uses CACHE 100000 for speed, but a restart then loses the
-- cached numbers, and a lost push number is a hole every popper stops at.

-- name: create
CREATE SEQUENCE {push_seq} AS bigint START WITH 0 MINVALUE 0 INCREMENT BY 1 NO CACHE

-- name: create
CREATE SEQUENCE {pop_seq} AS bigint START WITH 0 MINVALUE 0 INCREMENT BY 1 NO CACHE

-- name: create
CREATE TABLE {table} (
    slot            int NOT NULL PRIMARY KEY CLUSTERED,
    message_id      bigint NULL,
    enqueued_at     datetime2(6) NULL,
    reference_count tinyint NOT NULL DEFAULT 0,
    payload         varbinary(max) NULL
)

-- name: create
INSERT INTO {table} (slot)
SELECT TOP ({capacity}) ROW_NUMBER() OVER (ORDER BY (SELECT NULL)) - 1
FROM sys.all_columns AS a CROSS JOIN sys.all_columns AS b

-- name: create
CREATE TABLE {overflow} (
    message_id  bigint NOT NULL PRIMARY KEY,
    enqueued_at datetime2(6) NOT NULL,
    payload     varbinary(max) NOT NULL
)

-- name: create
CREATE TABLE {pending} (
    message_id bigint NOT NULL PRIMARY KEY,
    taken_at   datetime2(6) NOT NULL DEFAULT SYSUTCDATETIME()
)

-- name: create
CREATE PROCEDURE {push} @payload varbinary(max)
AS
BEGIN
    SET NOCOUNT ON;
    SET XACT_ABORT ON;
    DECLARE @next bigint;
    DECLARE @seq bigint;
    DECLARE @at datetime2(6) = SYSUTCDATETIME();
    DECLARE @lock nvarchar(255) = N'qadmin_' + CONVERT(nvarchar(64), HASHBYTES('MD5', {push_seq.lit}), 2);
    DECLARE @got int;
    -- A slot's payload column allows NULL (a free slot): refuse one before a number is taken.
    IF @payload IS NULL
        THROW 51000, 'ring push: the payload is NULL', 1;
    -- The push lock, from the count to the number only (see the invariants).
    EXEC @got = sp_getapplock @Resource = @lock, @LockMode = 'Exclusive', @LockOwner = 'Session';
    IF @got < 0
        THROW 51205, 'ring push: lock wait timeout on the ring''s push lock', 1;
    BEGIN TRY
        SELECT @next = COALESCE(CAST(last_used_value AS bigint) + 1, CAST(start_value AS bigint))
        FROM sys.sequences WHERE object_id = OBJECT_ID({push_seq.lit});
        IF @next + 1
           - (SELECT COALESCE(CAST(last_used_value AS bigint) + 1, CAST(start_value AS bigint))
                FROM sys.sequences WHERE object_id = OBJECT_ID({pop_seq.lit}))
           + (SELECT COUNT(*) FROM {pending} WITH (NOLOCK)) <= {capacity}
           AND EXISTS (SELECT 1 FROM {table} WITH (READPAST) WHERE slot = @next % {capacity}
                       AND (reference_count = 0 OR message_id >= @next))
            SET @seq = NEXT VALUE FOR {push_seq};
    {lock_released()}
    IF @seq IS NULL
        RETURN;  -- full: nothing written, no number taken
    BEGIN TRANSACTION;
    UPDATE {table} WITH (ROWLOCK, READPAST)
    SET message_id = @seq, payload = @payload, reference_count = 1, enqueued_at = @at
    WHERE slot = @seq % {capacity} AND reference_count = 0;
    IF @@ROWCOUNT = 0
        INSERT INTO {overflow} (message_id, enqueued_at, payload) VALUES (@seq, @at, @payload);
    COMMIT TRANSACTION;
    SELECT @seq AS id, @at AS enqueued_at;
END

-- name: create
{pop_begin()}
    SET XACT_ABORT ON;
    DECLARE @out TABLE (id bigint NOT NULL, enqueued_at datetime2(6) NULL, payload varbinary(max) NULL);
    DECLARE @next bigint;
    DECLARE @seq bigint;
    DECLARE @last bigint = -1;
    DECLARE @from_pending bit;
    DECLARE @scan_pending bit = 1;
    DECLARE @taken int = 0;
    DECLARE @n int;
    DECLARE @lock nvarchar(255) = N'qadmin_' + CONVERT(nvarchar(64), HASHBYTES('MD5', {pop_seq.lit}), 2);
    DECLARE @got int;
    BEGIN TRANSACTION;
    WHILE @taken < @count
    BEGIN
        SET @seq = NULL;
        SET @from_pending = 0;
        IF @scan_pending = 1
        BEGIN
            SELECT TOP (1) @seq = message_id FROM {pending} WITH (READPAST, ROWLOCK, UPDLOCK)
            WHERE message_id > @last ORDER BY message_id;
            IF @seq IS NULL
                SET @scan_pending = 0;
            ELSE
            BEGIN
                SET @last = @seq;
                SET @from_pending = 1;
            END;
        END;
        IF @seq IS NULL
        BEGIN
            -- The pop lock, from the look at "next" to the number only (see the invariants).
            EXEC @got = sp_getapplock @Resource = @lock, @LockMode = 'Exclusive',
                                      @LockOwner = 'Session';
            IF @got < 0
                THROW 51205, 'ring pop: lock wait timeout on the ring''s pop lock', 1;
            BEGIN TRY
                SELECT @next = COALESCE(CAST(last_used_value AS bigint) + 1,
                                        CAST(start_value AS bigint))
                FROM sys.sequences WHERE object_id = OBJECT_ID({pop_seq.lit});
                IF EXISTS (SELECT 1 FROM {table} WITH (READPAST)
                           WHERE slot = @next % {capacity} AND message_id = @next)
                   OR EXISTS (SELECT 1 FROM {overflow} WITH (READPAST) WHERE message_id = @next)
                    SET @seq = NEXT VALUE FOR {pop_seq};
            {lock_released()}
            IF @seq IS NULL
                BREAK;  -- empty: no number taken
        END;
        UPDATE {table} WITH (ROWLOCK, READPAST)
        SET reference_count = 0, message_id = NULL, payload = NULL, enqueued_at = NULL
        OUTPUT deleted.message_id, deleted.enqueued_at, deleted.payload
        INTO @out (id, enqueued_at, payload)
        WHERE slot = @seq % {capacity} AND message_id = @seq;
        SET @n = @@ROWCOUNT;
        IF @n = 0
        BEGIN
            DELETE FROM {overflow} WITH (ROWLOCK, READPAST)
            OUTPUT deleted.message_id, deleted.enqueued_at, deleted.payload
            INTO @out (id, enqueued_at, payload)
            WHERE message_id = @seq;
            SET @n = @@ROWCOUNT;
        END;
        IF @n = 0 AND @from_pending = 0
        BEGIN
            INSERT INTO {pending} (message_id) VALUES (@seq);
            BREAK;
        END;
        IF @n > 0
        BEGIN
            IF @from_pending = 1
                DELETE FROM {pending} WHERE message_id = @seq;
            SET @taken = @taken + 1;
        END;
    END;
    COMMIT TRANSACTION;
    SELECT id, enqueued_at, payload FROM @out ORDER BY id;
END

-- name: drop
DROP PROCEDURE IF EXISTS {pop}

-- name: drop
DROP PROCEDURE IF EXISTS {push}

-- name: drop
DROP TABLE IF EXISTS {table}

-- name: drop
DROP TABLE IF EXISTS {overflow}

-- name: drop
DROP TABLE IF EXISTS {pending}

-- name: drop
DROP SEQUENCE IF EXISTS {push_seq}

-- name: drop
DROP SEQUENCE IF EXISTS {pop_seq}

-- name: push
EXEC {push} @payload = :payload

-- name: pop
EXEC {pop} @count = :count

-- name: peek
SELECT TOP (:count) id, enqueued_at, payload FROM (
    SELECT message_id AS id, enqueued_at, payload
    FROM {table} WITH (READPAST, READCOMMITTEDLOCK) WHERE reference_count = 1
    UNION ALL
    SELECT message_id, enqueued_at, payload
    FROM {overflow} WITH (READPAST, READCOMMITTEDLOCK)
) AS m
ORDER BY id

-- name: purge
EXEC {pop} @count = 2000000000

-- name: readable
-- Whether the role may read the slot table at all (size asks when the sequences are refused
-- to it: a reader without sequence privileges gets a note, a stranger the error). Reads no row.
SELECT TOP (0) 1 AS readable FROM {table}

-- name: depth
SELECT
    (SELECT COALESCE(CAST(last_used_value AS bigint) + 1, CAST(start_value AS bigint))
       FROM sys.sequences WHERE object_id = OBJECT_ID({push_seq.lit}))
  - (SELECT COALESCE(CAST(last_used_value AS bigint) + 1, CAST(start_value AS bigint))
       FROM sys.sequences WHERE object_id = OBJECT_ID({pop_seq.lit})) AS depth,
    (SELECT min(enqueued_at) FROM {table} WHERE reference_count = 1) AS oldest_enqueued_at

-- name: counters
SELECT
    (SELECT COALESCE(CAST(last_used_value AS bigint) + 1, CAST(start_value AS bigint))
       FROM sys.sequences WHERE object_id = OBJECT_ID({push_seq.lit})) AS enqueued_total,
    (SELECT COALESCE(CAST(last_used_value AS bigint) + 1, CAST(start_value AS bigint))
       FROM sys.sequences WHERE object_id = OBJECT_ID({pop_seq.lit})) AS dequeued_total

-- name: ring_state
WITH s AS (
    SELECT
        (SELECT COALESCE(CAST(last_used_value AS bigint) + 1, CAST(start_value AS bigint))
           FROM sys.sequences WHERE object_id = OBJECT_ID({push_seq.lit})) AS push_next,
        (SELECT COALESCE(CAST(last_used_value AS bigint) + 1, CAST(start_value AS bigint))
           FROM sys.sequences WHERE object_id = OBJECT_ID({pop_seq.lit})) AS pop_next
)
SELECT s.push_next,
       s.pop_next,
       (SELECT COUNT(*) FROM {pending}) AS parked,
       (SELECT DATEDIFF_BIG(MILLISECOND, MIN(p.taken_at), SYSUTCDATETIME()) / 1000.0
          FROM {pending} AS p) AS oldest_parked_s,
       (SELECT COUNT(*) FROM {overflow}) AS overflow,
       COALESCE(o.message_id, ov.message_id) AS orphan_id,
       N'INSERT INTO ' + {pending.lit} + N' (message_id, taken_at) VALUES ('
           + CAST(COALESCE(o.message_id, ov.message_id) AS nvarchar(20))
           + N', SYSUTCDATETIME())' AS orphan_fix,
       N'SELECT NEXT VALUE FOR ' + {pop_seq.lit} AS hole_fix,
       CASE WHEN o.message_id IS NOT NULL THEN s.push_next % {capacity} END AS orphan_slot,
       DATEDIFF_BIG(MILLISECOND, COALESCE(o.enqueued_at, ov.enqueued_at), SYSUTCDATETIME())
           / 1000.0 AS orphan_age_s,
       CASE WHEN s.pop_next < s.push_next
             AND NOT EXISTS (SELECT 1 FROM {table} AS r
                              WHERE r.slot = s.pop_next % {capacity}
                                AND r.message_id = s.pop_next)
             AND NOT EXISTS (SELECT 1 FROM {overflow} AS ov WHERE ov.message_id = s.pop_next)
            THEN s.pop_next END AS missing_id,
       (SELECT DATEDIFF_BIG(MILLISECOND, MIN(r.enqueued_at), SYSUTCDATETIME()) / 1000.0
          FROM {table} AS r
         WHERE r.reference_count = 1 AND r.message_id > s.pop_next
           AND r.slot IN ((s.pop_next + 1) % {capacity}, (s.pop_next + 2) % {capacity},
                          (s.pop_next + 3) % {capacity}, (s.pop_next + 4) % {capacity}))
           AS waiting_behind_age_s
FROM s
OUTER APPLY (
    SELECT r.message_id, r.enqueued_at FROM {table} AS r
    WHERE r.slot = s.push_next % {capacity} AND r.reference_count = 1
      AND r.message_id < s.pop_next
      AND NOT EXISTS (SELECT 1 FROM {pending} AS p WHERE p.message_id = r.message_id)
) AS o
-- in the overflow table too (a killed popper's message there: no slot), in the numbers of the
-- lap behind the pop sequence (its primary key's range)
OUTER APPLY (
    SELECT TOP (1) v.message_id, v.enqueued_at FROM {overflow} AS v
    WHERE v.message_id BETWEEN s.pop_next - {capacity} AND s.pop_next - 1
      AND NOT EXISTS (SELECT 1 FROM {pending} AS p WHERE p.message_id = v.message_id)
    ORDER BY v.message_id
) AS ov

-- name: repair_orphans
WITH s AS (
    SELECT COALESCE(CAST(last_used_value AS bigint) + 1, CAST(start_value AS bigint)) AS pop_next
    FROM sys.sequences WHERE object_id = OBJECT_ID({pop_seq.lit})
)
SELECT r.message_id AS id FROM {table} AS r CROSS JOIN s
WHERE r.reference_count = 1 AND r.message_id < s.pop_next
  AND NOT EXISTS (SELECT 1 FROM {pending} AS p WHERE p.message_id = r.message_id)
UNION ALL
SELECT o.message_id FROM {overflow} AS o CROSS JOIN s
WHERE o.message_id < s.pop_next
  AND NOT EXISTS (SELECT 1 FROM {pending} AS p WHERE p.message_id = o.message_id)
ORDER BY 1

-- name: repair_park
DECLARE @pop_next bigint = (
    SELECT COALESCE(CAST(last_used_value AS bigint) + 1, CAST(start_value AS bigint))
    FROM sys.sequences WHERE object_id = OBJECT_ID({pop_seq.lit}));
INSERT INTO {pending} (message_id)
OUTPUT inserted.message_id AS id
SELECT r.message_id FROM {table} AS r
WHERE r.reference_count = 1 AND r.message_id < @pop_next
  AND NOT EXISTS (SELECT 1 FROM {pending} AS p WHERE p.message_id = r.message_id)
UNION ALL
SELECT o.message_id FROM {overflow} AS o
WHERE o.message_id < @pop_next
  AND NOT EXISTS (SELECT 1 FROM {pending} AS p WHERE p.message_id = o.message_id);

-- name: repair_stale
SELECT p.message_id AS id FROM {pending} AS p
WHERE p.taken_at < DATEADD(SECOND, -:older_s, SYSUTCDATETIME())
  AND NOT EXISTS (SELECT 1 FROM {table} AS r
                   WHERE r.slot = p.message_id % {capacity} AND r.message_id = p.message_id)
  AND NOT EXISTS (SELECT 1 FROM {overflow} AS o WHERE o.message_id = p.message_id)
ORDER BY 1

-- name: repair_void
DELETE p
OUTPUT deleted.message_id AS id
FROM {pending} AS p
WHERE p.taken_at < DATEADD(SECOND, -:older_s, SYSUTCDATETIME())
  AND NOT EXISTS (SELECT 1 FROM {table} AS r
                   WHERE r.slot = p.message_id % {capacity} AND r.message_id = p.message_id)
  AND NOT EXISTS (SELECT 1 FROM {overflow} AS o WHERE o.message_id = p.message_id)

-- name: repair_skip
DECLARE @n bigint = NEXT VALUE FOR {pop_seq};
INSERT INTO {pending} (message_id)
SELECT @n
WHERE EXISTS (SELECT 1 FROM {table} AS r WHERE r.slot = @n % {capacity} AND r.message_id = @n)
   OR EXISTS (SELECT 1 FROM {overflow} AS o WHERE o.message_id = @n);
SELECT @n AS id, CASE WHEN @@ROWCOUNT > 0 THEN N'parked' ELSE N'voided' END AS action;
