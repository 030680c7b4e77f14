-- Pause and resume of a job-queue library's named queue, through the same row change as the
-- library's own API (qadmin pause TABLE --queue NAME). :queue is the named queue.
-- Solid Queue (SolidQueue::Queue#pause / #resume): a solid_queue_pauses row per paused queue,
-- created_at in UTC as Rails writes it; the dispatcher and workers skip a paused queue.

-- name: solid_queue_state
SELECT created_at AS paused_at FROM {pauses} WHERE queue_name = :queue

-- name: solid_queue_pause
INSERT IGNORE INTO {pauses} (queue_name, created_at) VALUES (:queue, :at)

-- name: solid_queue_resume
DELETE FROM {pauses} WHERE queue_name = :queue
