-- Pause and resume of a job-queue library's named queue, through the same row change as the
-- library's own API (qadmin pause TABLE --queue NAME). :queue is the named queue.
-- River (its client's QueuePause / QueueResume, migrations 004+): paused_at and updated_at of
-- the queue's river_queue row, then the control notification River's clients listen for
-- (channel SCHEMA.river_control; :payload is the JSON object River sends: its action, pause or
-- resume, and the queue), in one transaction;
-- a client in poll-only mode sees the row at its next poll of the queue settings.
-- Solid Queue (SolidQueue::Queue#pause / #resume): a solid_queue_pauses row per paused queue,
-- created_at in UTC as Rails writes it; the dispatcher and workers skip a paused queue.

-- name: river_state
SELECT paused_at FROM {river_queue} WHERE name = :queue

-- name: river_pause
UPDATE {river_queue}
SET paused_at = CASE WHEN paused_at IS NULL THEN now() ELSE paused_at END,
    updated_at = CASE WHEN paused_at IS NULL THEN now() ELSE updated_at END
WHERE name = :queue

-- name: river_pause
SELECT pg_notify(concat({river_queue.schema_lit}, '.river_control'), :payload)

-- name: river_resume
UPDATE {river_queue}
SET paused_at = NULL,
    updated_at = CASE WHEN paused_at IS NOT NULL THEN now() ELSE updated_at END
WHERE name = :queue

-- name: river_resume
SELECT pg_notify(concat({river_queue.schema_lit}, '.river_control'), :payload)

-- name: solid_queue_state
SELECT created_at AS paused_at FROM {pauses} WHERE queue_name = :queue

-- name: solid_queue_pause
INSERT INTO {pauses} (queue_name, created_at) VALUES (:queue, CAST(:at AS timestamp))
ON CONFLICT (queue_name) DO NOTHING

-- name: solid_queue_resume
DELETE FROM {pauses} WHERE queue_name = :queue
