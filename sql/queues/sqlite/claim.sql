-- Claim queue on SQLite (article 002): pop sets processing_started_at (test and set) and
-- returns the message; ack deletes it, fail records the error. A claim older than the stale
-- timeout belongs to a consumer that died; requeue releases it.

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
    payload               BLOB NOT NULL
)

-- name: create
CREATE INDEX {pop_idx.bare} ON {table.bare} (id) WHERE processing_started_at IS NULL

-- name: create
CREATE INDEX {claimed_idx.bare} ON {table.bare} (processing_started_at)
WHERE processing_started_at IS NOT NULL

-- name: drop
DROP TABLE IF EXISTS {table}

-- name: push
INSERT INTO {table} (payload) VALUES (:payload) RETURNING id, enqueued_at

-- name: pop
UPDATE {table}
SET processing_started_at = strftime('%Y-%m-%d %H:%M:%f', 'now'),
    claimed_by = :worker,
    attempts = attempts + 1
WHERE id IN (
    SELECT id FROM {table} WHERE processing_started_at IS NULL ORDER BY id LIMIT :count)
RETURNING id, enqueued_at, attempts, payload

-- name: ack
DELETE FROM {table} WHERE id = :id AND processing_started_at IS NOT NULL RETURNING id

-- name: fail
UPDATE {table}
SET last_error = :error,
    failed_at = strftime('%Y-%m-%d %H:%M:%f', 'now'),
    processing_started_at = CASE WHEN :retry THEN NULL ELSE processing_started_at END,
    claimed_by = CASE WHEN :retry THEN NULL ELSE claimed_by END
WHERE id = :id AND processing_started_at IS NOT NULL
RETURNING id, attempts

-- name: peek
SELECT id, enqueued_at, processing_started_at, claimed_by, attempts, last_error, payload
FROM {table} ORDER BY id LIMIT :count

-- name: purge
SELECT count(*) AS purged FROM {table}

-- name: purge
DELETE FROM {table}

-- name: depth
SELECT count(*) AS depth, min(enqueued_at) AS oldest_enqueued_at FROM {table}

-- name: claims
SELECT id, processing_started_at, claimed_by, claimed_session, attempts, last_error,
       (julianday('now') - julianday(processing_started_at)) * 86400.0 AS claimed_for_s
FROM {table}
WHERE processing_started_at IS NOT NULL
ORDER BY processing_started_at
LIMIT :limit

-- name: requeue
UPDATE {table}
SET processing_started_at = NULL, claimed_by = NULL, claimed_session = NULL
WHERE processing_started_at
      < strftime('%Y-%m-%d %H:%M:%f', 'now', '-' || :stale_s || ' seconds')
RETURNING id

-- name: oldest
SELECT enqueued_at AS oldest_enqueued_at FROM {table} ORDER BY id LIMIT 1

-- name: counters
SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = :table), 0) AS enqueued_total

-- name: estimate
-- SQLite keeps no row-count statistics: the id range is an upper bound, read with two seeks
-- (max(id) - min(id) in one SELECT would defeat the min/max optimisation and scan the table).
SELECT coalesce((SELECT max(id) FROM {table}) - (SELECT min(id) FROM {table}) + 1, 0)
    AS estimated_rows
