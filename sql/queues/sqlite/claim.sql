-- Claim queue on SQLite (article 002): pop sets processing_started_at (test and set) and
-- returns the message; ack deletes it, fail records the error. A claim older than the stale
-- timeout belongs to a consumer that died; requeue releases it.
-- Dead letters: fail appends each attempt's error to errors (a JSON array of objects with
-- attempt, error and at); the fail that records attempt max_attempts (read from the catalog
-- entry's options on every call) moves the message to the queue's _dead table in the same
-- transaction. Redrive moves it back as a new delivery: a new id at the tail (so no attempt
-- token of the old id can match it), attempts reset, enqueued_at and errors kept.
-- Fencing: ack_fenced and fail_fenced take :attempt, the attempt number pop returned, and act
-- only while the row's attempts still equal it, so a consumer whose claim went stale and was
-- requeued and claimed again cannot ack or fail the new claim (ack and fail keep their
-- parameters for existing callers; fail_fenced differs from fail only in its UPDATE's WHERE).
-- extends: queues/sqlite/basic.sql (its messages go in as a basic queue's do: push, push_many, purge and counters come from there)
-- extends: queues/common/claim.sql (the statements it shares with other engines)

-- name: create
CREATE TABLE {table} (
    id                    INTEGER PRIMARY KEY AUTOINCREMENT,
    enqueued_at           TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    processing_started_at TEXT,
    claimed_by            TEXT,
    claimed_session       INTEGER,
    attempts              INTEGER NOT NULL DEFAULT 0,
    last_error            TEXT,
    failed_at             TEXT,
    errors                TEXT,
    payload               BLOB NOT NULL
)

-- name: create
CREATE TABLE {dead} (
    id          INTEGER PRIMARY KEY,
    enqueued_at TEXT NOT NULL,
    attempts    INTEGER NOT NULL,
    last_error  TEXT,
    errors      TEXT,
    died_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    payload     BLOB NOT NULL
)

-- name: create
CREATE INDEX {dead_idx.bare} ON {dead.bare} (died_at)

-- name: create
CREATE INDEX {pop_idx.bare} ON {table.bare} (id) WHERE processing_started_at IS NULL

-- name: create
CREATE INDEX {claimed_idx.bare} ON {table.bare} (processing_started_at)
WHERE processing_started_at IS NOT NULL

-- name: drop
DROP TABLE IF EXISTS {dead}

-- name: drop
DROP TABLE IF EXISTS {table}

-- name: pop
UPDATE {table}
SET processing_started_at = strftime('%Y-%m-%d %H:%M:%f', 'now'),
    claimed_by = :worker,
    attempts = attempts + 1
WHERE id IN (
    SELECT id FROM {table} WHERE processing_started_at IS NULL AND NOT {paused()}
    ORDER BY id LIMIT :count)
RETURNING id, enqueued_at, attempts, payload

-- name: ack
DELETE FROM {table} WHERE id = :id AND processing_started_at IS NOT NULL RETURNING id

-- name: ack_fenced
DELETE FROM {table}
WHERE id = :id AND processing_started_at IS NOT NULL AND attempts = :attempt
RETURNING id

-- name: fail
-- One transaction even when run in autocommit: SAVEPOINT opens one there (and nests
-- inside BEGIN IMMEDIATE, the contract); RELEASE commits it.
SAVEPOINT qadmin_call

-- name: fail
UPDATE {table}
{fail_set()}
WHERE id = :id AND processing_started_at IS NOT NULL
RETURNING id, attempts

-- name: fail
{dead_move()}

-- name: fail
DELETE FROM {table} WHERE id = :id AND id IN (SELECT d.id FROM {dead} AS d WHERE d.id = :id)

-- name: fail
RELEASE qadmin_call

-- name: fail_fenced
SAVEPOINT qadmin_call

-- name: fail_fenced
UPDATE {table}
{fail_set()}
WHERE id = :id AND processing_started_at IS NOT NULL AND attempts = :attempt
RETURNING id, attempts

-- name: fail_fenced
{dead_move()}

-- name: fail_fenced
DELETE FROM {table} WHERE id = :id AND id IN (SELECT d.id FROM {dead} AS d WHERE d.id = :id)

-- name: fail_fenced
RELEASE qadmin_call

-- name: claims
SELECT id, processing_started_at, claimed_by, claimed_session, attempts, last_error,
       (julianday('now') - julianday(processing_started_at)) * 86400.0 AS claimed_for_s
FROM {table}
WHERE processing_started_at IS NOT NULL
ORDER BY processing_started_at
LIMIT :limit

-- name: requeue
-- A stale claim at its last allowed attempt (max_attempts) is a message that killed its
-- consumer every time (it never reached fail): it moves to the dead table with an error entry
-- saying so, instead of being released forever; the rest are released (one transaction).
INSERT INTO {dead} (id, enqueued_at, attempts, last_error, errors, payload)
SELECT id, enqueued_at, attempts,
       'claim went stale after attempt ' || attempts || ' (consumer lost)',
       json_insert(
           CASE WHEN json_array_length(coalesce(errors, '[]')) >= {errors_kept}
                THEN json_remove(errors, '$[1]') ELSE coalesce(errors, '[]') END,
           '$[#]', json_object(
               'attempt', attempts,
               'error', 'claim went stale after attempt ' || attempts || ' (consumer lost)',
               'at', strftime('%Y-%m-%d %H:%M:%f', 'now'))),
       payload
FROM {table}
WHERE processing_started_at
      < strftime('%Y-%m-%d %H:%M:%f', 'now', '-' || :stale_s || ' seconds')
  AND attempts >= (SELECT json_extract(c.options, '$.max_attempts') FROM {catalog} AS c
                   WHERE c.name = {table.bare_lit})
RETURNING id, 1 AS dead

-- name: requeue
-- The claimed rows just copied (a message is never in both tables otherwise).
DELETE FROM {table}
WHERE processing_started_at IS NOT NULL
  AND EXISTS (SELECT 1 FROM {dead} AS d WHERE d.id = {table}.id)

-- name: requeue
UPDATE {table}
SET processing_started_at = NULL, claimed_by = NULL, claimed_session = NULL
WHERE processing_started_at
      < strftime('%Y-%m-%d %H:%M:%f', 'now', '-' || :stale_s || ' seconds')
RETURNING id, 0 AS dead

-- name: dead_depth
-- Bounded like inspect's other counts: at most :limit rows are counted.
SELECT (SELECT count(*) FROM (SELECT 1 FROM {dead} LIMIT :limit)) AS dead,
       (SELECT (julianday('now') - julianday(died_at)) * 86400.0
          FROM {dead} ORDER BY died_at LIMIT 1) AS oldest_dead_s

-- name: dead_list
-- The dead messages, first to die first, at most count; the filters of dead, discard and
-- redrive, each on when its flag is 1: died more than older_s seconds ago, within the last
-- newer_s seconds, the error it died with matching the LIKE pattern ('!' escapes;
-- case-insensitive). Flags, not NULLs: every parameter keeps one type.
SELECT d.id, d.enqueued_at, d.attempts, d.died_at, d.errors,
       substr(d.payload, 1, :preview) AS payload
FROM {dead} AS d
WHERE 1 = 1
  AND (:has_older = 0
       OR d.died_at < strftime('%Y-%m-%d %H:%M:%f', 'now', '-' || :older_s || ' seconds'))
  AND (:has_newer = 0
       OR d.died_at >= strftime('%Y-%m-%d %H:%M:%f', 'now', '-' || :newer_s || ' seconds'))
  AND (:has_error = 0 OR d.last_error LIKE :pattern ESCAPE '!')
ORDER BY d.died_at, d.id LIMIT :count

-- name: dead_match
-- The dead messages a filter picks, in id order after one id and up to another (the highest
-- when a run began: deaths during it wait for the next run), bounded. Read without
-- locks: a dead row never changes, so a mover locks each id by its key and finds it still
-- the same, or gone (another redrive or discard took it).
SELECT d.id FROM {dead} AS d
WHERE d.id > :after AND d.id <= :upto
  AND (:has_older = 0
       OR d.died_at < strftime('%Y-%m-%d %H:%M:%f', 'now', '-' || :older_s || ' seconds'))
  AND (:has_newer = 0
       OR d.died_at >= strftime('%Y-%m-%d %H:%M:%f', 'now', '-' || :newer_s || ' seconds'))
  AND (:has_error = 0 OR d.last_error LIKE :pattern ESCAPE '!')
ORDER BY d.id LIMIT :limit

-- name: dead_one
-- One dead message whole (dead --id): its error history and payload.
SELECT id, enqueued_at, attempts, died_at, last_error, errors, payload
FROM {dead} WHERE id = :id

-- name: dead_take
-- Lock one dead message by its key and read its payload (redrive --to).
SELECT id, payload FROM {dead} WHERE id = :id

-- name: redrive_id
SELECT id FROM {dead} WHERE id = :id

-- name: redrive_one
INSERT INTO {table} (enqueued_at, attempts, last_error, errors, payload)
SELECT enqueued_at, 0, last_error, errors, payload FROM {dead} WHERE id = :id
RETURNING id AS new_id

-- name: redrive_one
DELETE FROM {dead} WHERE id = :id

-- name: head_index
-- The index that makes the head a seek in dequeue order (explain's fix when the plan sorts
-- or scans); create makes it (or the primary key serves).
CREATE INDEX {pop_idx} ON {table.bare} (id) WHERE processing_started_at IS NULL
