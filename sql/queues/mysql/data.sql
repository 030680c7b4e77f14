-- Moving a queue's messages in bulk: export, archive, load (MySQL 8 / MariaDB).
-- Export pages run inside one START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY, so every
-- page sees the same snapshot; each page is a keyset range (id > :after), never OFFSET.
-- :before bounds the age (enqueued_at < :before, UTC); claim queues also filter by state.
-- Load copies the input into {stage}, then moves it with one INSERT ... SELECT per chunk of
-- rows, all in one transaction (short AUTO-INC locks: one per chunk); {loaded} holds the
-- idempotency keys, written in the same transaction.
-- extends: queues/common/data.sql (the statements shared with other engines)

-- Sections serve the kinds whose tables share a shape: export_rows heap/fifo/lifo/capped,
-- archive_rows heap/fifo/lifo/pending, load_rows heap/fifo/lifo/claim.

-- name: stage_create
CREATE TABLE {stage} (
    seq      BIGINT NOT NULL PRIMARY KEY,
    payload  LONGBLOB NOT NULL,
    due_at   DATETIME(6) NULL,
    load_key VARCHAR(255) NULL,
    enqueued_at DATETIME(6) NULL,
    KEY {stage_idx.bare} (load_key)
) ENGINE=InnoDB

-- name: loaded_create
CREATE TABLE IF NOT EXISTS {loaded} (
    load_key  VARCHAR(255) NOT NULL PRIMARY KEY,
    loaded_at DATETIME(6) NOT NULL DEFAULT UTC_TIMESTAMP(6)
) ENGINE=InnoDB

-- name: id_bounds
-- Spark's partition bounds: two index probes on the primary key.
SELECT min(id) AS lo, max(id) AS hi FROM {table}
