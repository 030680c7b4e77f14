-- Pause and resume of a job-queue library's named queue, through the same row change as the
-- library's own API (qadmin pause TABLE --queue NAME). :queue is the named queue.
-- River on SQLite (riversqlite's QueuePause / QueueResume): paused_at and updated_at of the
-- queue's river_queue row (SQLite has no notifications: clients see it at their next poll).
-- Solid Queue (SolidQueue::Queue#pause / #resume): a solid_queue_pauses row per paused queue,
-- created_at in UTC as Rails writes it; the dispatcher and workers skip a paused queue.

-- name: river_state
SELECT paused_at FROM {river_queue} WHERE name = :queue

-- name: river_pause
UPDATE {river_queue}
SET paused_at = CASE WHEN paused_at IS NULL THEN strftime('%Y-%m-%d %H:%M:%f', 'now') ELSE paused_at END,
    updated_at = CASE WHEN paused_at IS NULL THEN strftime('%Y-%m-%d %H:%M:%f', 'now') ELSE updated_at END
WHERE name = :queue

-- name: river_resume
UPDATE {river_queue}
SET paused_at = NULL,
    updated_at = CASE WHEN paused_at IS NOT NULL THEN strftime('%Y-%m-%d %H:%M:%f', 'now') ELSE updated_at END
WHERE name = :queue

-- name: solid_queue_state
SELECT created_at AS paused_at FROM {pauses} WHERE queue_name = :queue

-- name: solid_queue_pause
INSERT OR IGNORE INTO {pauses} (queue_name, created_at) VALUES (:queue, :at)

-- name: solid_queue_resume
DELETE FROM {pauses} WHERE queue_name = :queue
