-- Pending queue on MySQL 8 and MariaDB (article 000): due times are UTC DATETIME(6); pop takes
-- due messages earliest first, skipping rows other consumers hold.
-- extends: queues/mysql/basic.sql (what it does as a basic queue does)
-- extends: queues/common/pending.sql (the statements it shares with other engines)

-- name: create
CREATE TABLE {table} (
    id          BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    due_at      DATETIME(6) NOT NULL,
    enqueued_at DATETIME(6) NOT NULL,
    payload     LONGBLOB NOT NULL,
    KEY {pop_idx.bare} (due_at, id)
) ENGINE=InnoDB

-- name: create
CREATE PROCEDURE {push}(IN p_payload LONGBLOB, IN p_due_at DATETIME(6))
BEGIN
    DECLARE v_at DATETIME(6) DEFAULT UTC_TIMESTAMP(6);
    DECLARE v_due DATETIME(6) DEFAULT COALESCE(p_due_at, v_at);
    INSERT INTO {table} (due_at, enqueued_at, payload) VALUES (v_due, v_at, p_payload);
    SELECT LAST_INSERT_ID() AS id, v_at AS enqueued_at, v_due AS due_at;
END

-- name: create
{pending_pop()}

-- name: create
-- Many messages in one call (push --lines, --file; applications too): p_batch is a JSON array
-- of base64 payloads, inserted in array order, returned as ONE result set (id, ...) in that
-- order. Each message is its own INSERT: one INSERT ... SELECT would be faster, but InnoDB
-- reserves AUTO_INCREMENT values for it in doubling steps and loses the unused ones at the end
-- of the statement (up to the batch size per batch), which made the ids-issued enqueue rate
-- overstate what was pushed; and under innodb_autoinc_lock_mode 2 (MySQL 8's default) its ids
-- could interleave with other sessions'. Measured: 7.6 s against 6.9 s for 100,000 lines.
CREATE PROCEDURE {push_many}(IN p_batch LONGTEXT, IN p_due_at DATETIME(6))
BEGIN
    DECLARE v_at DATETIME(6) DEFAULT UTC_TIMESTAMP(6);
    DECLARE v_due DATETIME(6) DEFAULT COALESCE(p_due_at, v_at);
    {batch_declare()}
    {batch_next()}
        INSERT INTO {table} (due_at, enqueued_at, payload)
        VALUES (v_due, v_at, FROM_BASE64(v_payload));
        {pushed_add()};
    END LOOP;
    CLOSE batch_rows;
    SELECT t.id, v_at AS enqueued_at, v_due AS due_at
    FROM JSON_TABLE({pushed_ids()}, '$[*]' COLUMNS (n FOR ORDINALITY, id BIGINT PATH '$')) AS t
    ORDER BY t.n;
    SET @qadmin_pushed = NULL;
    {txn_end()};
END

-- name: push
CALL {push}(:payload, :due_at)

-- name: push_many
CALL {push_many}(:batch, :due_at)

-- name: push_batch
-- A queue created before push_many, many messages in one round trip on MariaDB: an anonymous
-- block calls the push procedure for each element of one JSON array of base64 payloads, in
-- array order (a convert's gate too); each call returns its result set.
-- MySQL 8 has no anonymous blocks: there qadmin does not use this section (MysqlEngine) and
-- pushes a batch one CALL at a time in one transaction.
BEGIN NOT ATOMIC
    FOR j IN (SELECT t.p FROM JSON_TABLE(:batch, '$[*]' COLUMNS (n FOR ORDINALITY,
                                                  p LONGTEXT PATH '$')) AS t ORDER BY t.n)
    DO
        CALL {push}(FROM_BASE64(j.p), :due_at);
    END FOR;
END

-- name: due
-- The due messages (what a pop can take now): at most :limit of them, earliest due first
-- through the (due_at, id) index, as the pop walks it, and the earliest due time. A pending
-- queue's depth and oldest age are these: messages not due yet are counted apart (scheduled).
SELECT count(*) AS depth, min(d.due_at) AS oldest_due_at FROM (
    SELECT due_at FROM {table} WHERE due_at <= UTC_TIMESTAMP(6)
    ORDER BY due_at, id LIMIT :limit) AS d

-- name: scheduled
-- Messages not due yet: at most :limit, through the (due_at, id) index from now up.
SELECT count(*) AS scheduled FROM (
    SELECT id FROM {table} WHERE due_at > UTC_TIMESTAMP(6)
    ORDER BY due_at, id LIMIT :limit) AS s

-- name: head
-- The dequeue's head, read-only (qadmin explain): the pop's own WHERE / ORDER BY for one
-- message, taking no row lock.
SELECT id FROM {table} WHERE due_at <= UTC_TIMESTAMP(6) ORDER BY due_at, id LIMIT 1

-- name: head_index
-- The index that makes the head a seek in dequeue order (explain's fix when the plan sorts
-- or scans); create makes it (or the primary key serves).
ALTER TABLE {table} ADD INDEX {pop_idx.bare} (due_at, id), ALGORITHM=INPLACE, LOCK=NONE
