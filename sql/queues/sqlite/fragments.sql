-- SQLite's spelling of the words the shared statements use (sql/queues/common/).
-- extends: queues/common/fragments.sql

-- name: now_utc
strftime('%Y-%m-%d %H:%M:%f', 'now')

-- name: changed_rows
changes()

-- name: insert_ignore
INSERT OR IGNORE
