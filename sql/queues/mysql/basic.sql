-- heap, fifo and lifo queues on MySQL 8 and MariaDB (article 000).
-- MySQL 8 has no DELETE ... RETURNING, so a pop locks up to p_count head rows with one
-- SELECT ... FOR UPDATE SKIP LOCKED (a cursor), deletes each by primary key and returns it: one
-- result set per message, all in the caller's transaction. The same procedure runs on MariaDB.
-- One locking read per pop, never a second one while holding deleted rows: InnoDB waits on a
-- delete-marked row another consumer holds even with SKIP LOCKED, and two consumers doing
-- that to each other deadlock (seen on MariaDB 10.11 with 4 consumers).
-- Call it at READ COMMITTED: at REPEATABLE READ the locking read also takes gap locks.
-- {order_by} is "ORDER BY id" (fifo), "ORDER BY id DESC" (lifo) or empty (heap); a strict
-- queue drops SKIP LOCKED, so the next consumer waits for the head row's owner to commit.
-- extends: queues/common/basic.sql (the statements it shares with other engines)

-- name: create
CREATE TABLE {table} (
    id          BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    enqueued_at DATETIME(6) NOT NULL,
    payload     LONGBLOB NOT NULL
) ENGINE=InnoDB

-- name: create
{push_row()}

-- name: create
{pop_rows()}

-- name: create
{push_many_rows()}

-- name: push
CALL {push}(:payload)

-- name: push_many
CALL {push_many}(:batch)

-- name: push_batch
{push_batch_calls()}

-- name: pop
CALL {pop}(:count)

-- name: purge
SELECT count(*) AS purged FROM {table} FOR UPDATE

-- name: purge
DELETE FROM {table}

-- name: counters
SELECT AUTO_INCREMENT - 1 AS enqueued_total FROM information_schema.TABLES
WHERE TABLE_SCHEMA = :schema AND TABLE_NAME = :table

-- name: head_index
-- The index that makes the head a seek in dequeue order (explain's fix when the plan sorts
-- or scans); create makes it (or the primary key serves).
ALTER TABLE {table} ADD INDEX (id), ALGORITHM=INPLACE, LOCK=NONE
