-- Converting a naive queue into a ring on SQLite (qadmin convert), rendered for the ring that
-- replaces it. {src} is the table being converted (it has the queue's name, which the ring's
-- slot table takes over), {backup_name} what a hand-built table is renamed to, {id_col},
-- {time_expr} and {payload_expr} its columns as the ring stores them.
--
-- One BEGIN IMMEDIATE transaction: no push or pop runs meanwhile, and a killed convert rolls
-- back whole (the journal) and can be run again. The backlog keeps its ids in the ring's
-- overflow table, which pop serves first, in id order; the ring's sequences start above the
-- highest id. SQLite has no routines: clients holding the old queue's SQL fail loudly after
-- the switch (no "id" column in the ring table) and must reload the queue (qadmin's own
-- commands read the catalog on every run).

-- name: lock
SELECT 1 AS locked

-- name: measure
SELECT count(*) AS messages, min({id_col}) AS min_id, max({id_col}) AS max_id FROM {src}

-- name: set_aside
CREATE TEMP TABLE qadmin_convert AS
SELECT CAST({id_col} AS INTEGER) AS message_id, {time_expr} AS enqueued_at,
       {payload_expr} AS payload
FROM {src}

-- name: retire_external
ALTER TABLE {src} RENAME TO {backup_name}

-- name: start_sequences
UPDATE {ctl} SET push_seq = :next, pop_seq = :next RETURNING push_seq AS push_next

-- name: copy
INSERT INTO {overflow} (message_id, enqueued_at, payload)
SELECT message_id, enqueued_at, payload FROM temp.qadmin_convert
WHERE message_id > :after ORDER BY message_id LIMIT :chunk

-- name: copy
SELECT count(*) AS copied, max(message_id) AS last_id FROM (
    SELECT message_id FROM temp.qadmin_convert
    WHERE message_id > :after ORDER BY message_id LIMIT :chunk)

-- name: finish
DROP TABLE temp.qadmin_convert

-- name: payload_bytes
{col}

-- name: payload_text
CAST(CAST({col} AS TEXT) AS BLOB)

-- name: payload_json
CAST(json_object({pairs}) AS BLOB)

-- name: time_col
coalesce(strftime('%Y-%m-%d %H:%M:%f', {col}), strftime('%Y-%m-%d %H:%M:%f', 'now'))

-- name: time_now
strftime('%Y-%m-%d %H:%M:%f', 'now')
