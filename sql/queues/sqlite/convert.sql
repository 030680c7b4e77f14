-- Converting a naive queue into a ring on SQLite (qadmin convert), rendered for the ring that
-- replaces it. {src} is the table being converted (it has the queue's name, which the ring's
-- slot table takes over), {backup.bare} what a hand-built table is renamed to, {id_col.bare},
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
-- Only waiting rows (the --state-column filter, else every row) are messages; the
-- rest stay in the kept table (rows_left). The sequences start above every id in the table.
SELECT count(CASE WHEN {waiting} THEN 1 END) AS messages,
       count(*) - count(CASE WHEN {waiting} THEN 1 END) AS rows_left,
       min(CASE WHEN {waiting} THEN {id_col.bare} END) AS min_id, max({id_col.bare}) AS max_id
FROM {src}

-- name: set_aside
-- The table is renamed, not copied: the backlog is read from it once, straight into the ring
-- (a qadmin queue's is dropped at the end; a hand-built one is kept under this name).
ALTER TABLE {src} RENAME TO {backup.bare}

-- name: start_sequences
UPDATE {ctl} SET push_seq = :next, pop_seq = :next RETURNING push_seq AS push_next

-- name: place_overflow
INSERT INTO {overflow} (message_id, enqueued_at, payload)
SELECT CAST({id_col.bare} AS INTEGER), {time_expr}, {payload_expr} FROM {backup}
WHERE {waiting}

-- name: drop_set_aside
-- A qadmin queue's old table (a hand-built one is kept for the DBA).
DROP TABLE {backup}

-- name: columns
-- Before anything changes, convert refuses what it would break (ops/convert_guard.py);
-- :schema and :table are the table being converted, bound.
-- Its columns, and which are flags (declared BOOLEAN): a flag beside a queue's payload usually
-- says whether a row is still waiting (kombu's kombu_message.visible).
SELECT name AS column_name, lower(type) IN ('boolean', 'bool') AS flag
FROM pragma_table_info(:table)

-- name: blockers
-- Foreign keys from or to it, its triggers, and views and other tables' triggers whose SQL
-- names it as a word (SQLite rewrites those to the renamed table, so they would go on reading
-- and writing the old one silently).
SELECT 'foreign key' AS what, :table || ' -> ' || f."table" AS name, NULL AS in_schema,
       NULL AS detail
FROM pragma_foreign_key_list(:table) AS f
UNION ALL
SELECT 'foreign key', m.name || ' -> ' || f."table", NULL, NULL
FROM sqlite_master AS m, pragma_foreign_key_list(m.name) AS f
WHERE m.type = 'table' AND lower(f."table") = lower(:table) AND m.name <> :table
UNION ALL
SELECT CASE type WHEN 'view' THEN 'view' ELSE 'trigger' END, name, NULL, NULL
FROM sqlite_master
WHERE type IN ('view', 'trigger')
  AND (lower(tbl_name) = lower(:table)
       OR lower(sql) GLOB '*[^a-z0-9_]' || lower(:table) || '[^a-z0-9_]*'
       OR lower(sql) GLOB '*[^a-z0-9_]' || lower(:table))

-- name: payload_bytes
{col.bare}

-- name: payload_text
CAST(CAST({col.bare} AS TEXT) AS BLOB)

-- name: payload_json
CAST(json_object({pairs}) AS BLOB)

-- name: time_col
coalesce(strftime('%Y-%m-%d %H:%M:%f', {col.bare}), strftime('%Y-%m-%d %H:%M:%f', 'now'))

-- name: time_now
strftime('%Y-%m-%d %H:%M:%f', 'now')

