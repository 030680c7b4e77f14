-- The watermark template's statements that several engines spell alike: sql/queues/<engine>/watermark.sql
-- extends this file (its header explains the kind) and replaces what its server spells its own
-- way.

-- name: wm_value
-- Where dequeues start looking (size reads the depth and the oldest from here up).
SELECT wm FROM {wm}

-- name: wm_stranded
SELECT min(t.id) AS stranded_min_id FROM {table} AS t WHERE t.id < :wm
