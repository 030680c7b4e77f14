-- Moving a queue's messages in bulk: export, archive, load (SQLite).
-- Export pages run inside one a deferred BEGIN (one WAL snapshot), so every
-- page sees the same snapshot; each page is a keyset range (id > :after), never OFFSET.
-- :before bounds the age (enqueued_at < :before, UTC); claim queues also filter by state.
-- Load copies the input into {stage}, then moves it with one INSERT ... SELECT per chunk of
-- rows, all in one transaction; {loaded} holds the
-- idempotency keys, written in the same transaction.
-- extends: queues/common/data.sql (the statements shared with other engines)

-- Sections serve the kinds whose tables share a shape: export_rows heap/fifo/lifo/capped,
-- archive_rows heap/fifo/lifo/pending, load_rows heap/fifo/lifo/claim.

-- name: stage_create
CREATE TABLE {stage} (
    seq      INTEGER PRIMARY KEY,
    payload  BLOB NOT NULL,
    due_at   TEXT NULL,
    load_key TEXT NULL,
    enqueued_at TEXT NULL
)

-- name: stage_create
CREATE INDEX {stage_idx.bare} ON {stage.bare} (load_key)

-- name: loaded_create
CREATE TABLE IF NOT EXISTS {loaded} (
    load_key  TEXT NOT NULL PRIMARY KEY,
    loaded_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
)
