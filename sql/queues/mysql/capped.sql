-- Fixed-size FIFO that overwrites its oldest message (article 001), MySQL 8 and MariaDB.
-- Ids come from a sequence (fragments.sql: a SEQUENCE on MariaDB, an AUTO_INCREMENT ticket
-- table on MySQL 8), not from max(id)+1, so ids are never reused after pops or a drain. Message id k lives in slot k % capacity: a push locks that
-- slot's row, inserts into an empty slot or overwrites an older message and returns its id as
-- overwritten_id; if a newer push (k + capacity) already holds the slot, push k is the oldest
-- message, is dropped at once and reports its own id.
-- The slot is the clustered key and id a plain index: overwriting a slot then updates one row in
-- place, where a UNIQUE index on slot (the article's design) takes shared next-key locks for
-- duplicate checks that deadlock concurrent pushers on InnoDB.
-- extends: queues/common/capped.sql (the statements it shares with other engines)

-- name: create
{create_sequence(seq)}

-- name: create
CREATE TABLE {ctl} (
    one      TINYINT NOT NULL PRIMARY KEY,
    capacity INT NOT NULL
) ENGINE=InnoDB

-- name: create
INSERT INTO {ctl} (one, capacity) VALUES (1, {capacity})

-- name: create
CREATE TABLE {table} (
    slot        INT NOT NULL PRIMARY KEY,
    id          BIGINT NOT NULL,
    enqueued_at DATETIME(6) NOT NULL,
    payload     LONGBLOB NOT NULL,
    KEY {pop_idx.bare} (id)
) ENGINE=InnoDB

-- name: create
CREATE PROCEDURE {push}(IN p_payload LONGBLOB)
BEGIN
    {capped_vars()}
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_old = NULL;
    DECLARE CONTINUE HANDLER FOR 1062 SET v_dup = 1;
    {txn_handler()};
    {txn_begin()};
    -- The capacity gate: resize holds this row exclusively while it moves the slots.
    SELECT capacity INTO v_cap FROM {ctl} WHERE one = 1 LOCK IN SHARE MODE;
    {slot_look()}
        IF v_old IS NOT NULL AND v_old > v_id THEN
            SELECT v_id AS id, v_at AS enqueued_at, v_id AS overwritten_id;
            LEAVE place;
        ELSEIF v_old IS NOT NULL THEN
            UPDATE {table} SET id = v_id, payload = p_payload, enqueued_at = v_at
            WHERE slot = MOD(v_id, v_cap);
            SELECT v_id AS id, v_at AS enqueued_at, v_old AS overwritten_id;
            LEAVE place;
        END IF;
        INSERT INTO {table} (id, slot, enqueued_at, payload)
        VALUES (v_id, MOD(v_id, v_cap), v_at, p_payload);
        IF v_dup = 0 THEN
            SELECT v_id AS id, v_at AS enqueued_at, NULL AS overwritten_id;
            LEAVE place;
        END IF;
        -- Another push filled the empty slot between our look and our insert: look again.
    END LOOP;
    {txn_end()};
END

-- name: create
-- Many messages in one call, returned as ONE result set (id, enqueued_at, overwritten_id) in
-- array order: p_batch is a JSON array of base64 payloads, each placed as push places it, one
-- after another in this one transaction (a batch larger than the capacity overwrites its own
-- first messages, exactly as that many pushes do).
CREATE PROCEDURE {push_many}(IN p_batch LONGTEXT)
BEGIN
    {capped_vars()}
    DECLARE v_payload LONGBLOB;
    DECLARE v_out LONGTEXT DEFAULT '[';  -- [id, overwritten_id] pairs, closed at the end
    DECLARE v_done INT DEFAULT 0;
    DECLARE batch_rows CURSOR FOR
        SELECT FROM_BASE64(t.p) FROM JSON_TABLE(p_batch, '$[*]' COLUMNS (n FOR ORDINALITY,
                                                       p LONGTEXT PATH '$')) AS t ORDER BY t.n;
    {txn_handler()};
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = 1;
    {batch_guard()};
    {txn_begin()};
    SELECT capacity INTO v_cap FROM {ctl} WHERE one = 1 LOCK IN SHARE MODE;  -- the gate
    {batch_next()}
        BEGIN
            DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_old = NULL;
            DECLARE CONTINUE HANDLER FOR 1062 SET v_dup = 1;
            {slot_look()}
                IF v_old IS NOT NULL AND v_old > v_id THEN
                    SET v_old = v_id;  -- a newer push holds the slot: this one is dropped
                    LEAVE place;
                ELSEIF v_old IS NOT NULL THEN
                    UPDATE {table} SET id = v_id, payload = v_payload, enqueued_at = v_at
                    WHERE slot = MOD(v_id, v_cap);
                    LEAVE place;
                END IF;
                INSERT INTO {table} (id, slot, enqueued_at, payload)
                VALUES (v_id, MOD(v_id, v_cap), v_at, v_payload);
                IF v_dup = 0 THEN
                    LEAVE place;
                END IF;
            END LOOP;
            SET v_out = CONCAT(v_out, IF(v_out = '[', '[', ',['), v_id, ',',
                               COALESCE(v_old, 'null'), ']');
        END;
    END LOOP;
    CLOSE batch_rows;
    SELECT t.id, v_at AS enqueued_at, t.overwritten_id
    FROM JSON_TABLE(CONCAT(v_out, ']'), '$[*]'
                    COLUMNS (n FOR ORDINALITY, id BIGINT PATH '$[0]',
                             overwritten_id BIGINT PATH '$[1]')) AS t
    ORDER BY t.n;
    {txn_end()};
END

-- name: create
{pop_rows()}

-- name: drop
DROP PROCEDURE IF EXISTS {pop}

-- name: drop
DROP PROCEDURE IF EXISTS {push_many}

-- name: drop
DROP PROCEDURE IF EXISTS {push}

-- name: drop
DROP TABLE IF EXISTS {table}

-- name: drop
{drop_sequence(seq)}

-- name: drop
DROP TABLE IF EXISTS {ctl}

-- name: push
CALL {push}(:payload)

-- name: push_many
CALL {push_many}(:batch)

-- name: pop
CALL {pop}(:count)

-- name: purge
SELECT count(*) AS purged FROM {table} FOR UPDATE

-- name: purge
DELETE FROM {table}

-- name: counters
SELECT {next_expr(seq)} AS enqueued_total

-- Resize (qadmin resize): one transaction holding the capacity gate. Every message moves to
-- slot id % the new capacity, through negative slots so the key never sees two rows in one
-- slot; refused (before anything moves) when the ids held span more slots than the new
-- capacity has.

-- name: resize_lock
SELECT capacity FROM {ctl} WHERE one = 1 FOR UPDATE

-- name: resize_state
SELECT COUNT(*) AS messages, COALESCE(MAX(id) - MIN(id) + 1, 0) AS span,
       (SELECT capacity FROM {ctl} WHERE one = 1) AS capacity
FROM {table}

-- name: resize
UPDATE {table} SET slot = -1 - slot

-- name: resize
UPDATE {table} SET slot = MOD(id, :capacity)

-- name: resize_place
UPDATE {ctl} SET capacity = :capacity WHERE one = 1

-- name: head_index
-- The index that makes the head a seek in dequeue order (explain's fix when the plan sorts
-- or scans); create makes it (or the primary key serves).
ALTER TABLE {table} ADD INDEX (id), ALGORITHM=INPLACE, LOCK=NONE
