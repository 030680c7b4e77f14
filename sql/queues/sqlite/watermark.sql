-- Watermark for fifo and claim queues on SQLite (article 004), laid over basic.sql or
-- claim.sql. SQLite has one writer at a time: a producer's id and its commit happen while it
-- holds the write lock, so no id can commit behind a dequeue and the watermark may always move
-- straight to the head. Each dequeue moves it there. Rows below it exist only if it was set
-- too high by hand; `qadmin watermark QUEUE repair` lowers it so they are served.
-- extends: queues/common/watermark.sql (the statements it shares with other engines)

-- name: create
CREATE TABLE {wm} (
    one          INTEGER PRIMARY KEY CHECK (one = 1),
    wm           INTEGER NOT NULL,
    candidate    INTEGER,
    candidate_at TEXT,
    advanced_at  TEXT
)

-- name: create
INSERT INTO {wm} (one, wm) VALUES (1, 0)

-- name: drop
DROP TABLE IF EXISTS {wm}

-- name: wm_show
-- Stranded rows are looked for in the 1,000 ids below the watermark only: below them lie the
-- dead index entries a held snapshot keeps, which a walk to the bottom would read one by one.
SELECT w.wm,
       -- where the next advance moves it when nothing waits: past every id issued
       coalesce((SELECT seq + 1 FROM sqlite_sequence WHERE name = {table.bare_lit}), w.wm)
           AS candidate,
       NULL AS candidate_age_s,
       w.advanced_at,
       (SELECT min(t.id) FROM {table} AS t WHERE t.id >= w.wm) AS head_id,
       (SELECT count(*) FROM (SELECT 1 FROM {table} AS t WHERE t.id BETWEEN w.wm - 1000 AND w.wm - 1
                                                         LIMIT 10000))
           AS stranded,
       (SELECT min(t.id) FROM {table} AS t WHERE t.id BETWEEN w.wm - 1000 AND w.wm - 1
                                           ) AS stranded_min_id,
       (SELECT (julianday('now') - julianday(t.enqueued_at)) * 86400.0
          FROM {table} AS t WHERE t.id BETWEEN w.wm - 1000 AND w.wm - 1
                            ORDER BY t.id LIMIT 1) AS oldest_stranded_s
FROM {wm} AS w

-- name: wm_advance
-- To the head, or past every id issued when the queue is empty (AUTOINCREMENT's high-water
-- mark in sqlite_sequence: no id below it is handed out again); never past :to, never back.
WITH head AS (
    SELECT coalesce((SELECT min(t.id) FROM {table} AS t WHERE t.id >= w.wm),
                    (SELECT seq + 1 FROM sqlite_sequence WHERE name = {table.bare_lit}),
                    w.wm) AS id
    FROM {wm} AS w
)
UPDATE {wm}
SET wm = max(wm, min(coalesce(:to, (SELECT id FROM head)), (SELECT id FROM head))),
    advanced_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
RETURNING wm, candidate

-- name: wm_lock
SELECT wm FROM {wm}

-- name: wm_set
UPDATE {wm} SET wm = :wm, candidate = NULL, candidate_at = NULL
