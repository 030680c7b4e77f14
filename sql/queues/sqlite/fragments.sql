-- SQLite's spelling of the words the shared statements use (sql/queues/common/).
-- extends: queues/common/fragments.sql
--
-- paused: true while the queue is paused (qadmin pause): its catalog entry's options carry
-- paused_at. One primary-key read of the catalog, evaluated once per statement (it does not
-- depend on the row). Each pop statement takes nothing while it is true; an application
-- running the template's pop statements gets the same.

-- name: now_utc
strftime('%Y-%m-%d %H:%M:%f', 'now')

-- name: changed_rows
changes()

-- name: insert_ignore
INSERT OR IGNORE

-- name: dead_move
-- changes(): the UPDATE above, so only the message this call failed can move.
INSERT INTO {dead} (id, enqueued_at, attempts, last_error, errors, payload)
SELECT id, enqueued_at, attempts, last_error, errors, payload FROM {table}
WHERE id = :id AND changes() > 0
  AND attempts >= (SELECT json_extract(c.options, '$.max_attempts') FROM {catalog} AS c
                   WHERE c.name = {table.bare_lit})
RETURNING 1 AS dead

-- name: fail_set
SET last_error = :error,
    failed_at = strftime('%Y-%m-%d %H:%M:%f', 'now'),
    -- The first error and the latest: element 1 goes once {errors_kept} are kept.
    errors = json_insert(
        CASE WHEN json_array_length(coalesce(errors, '[]')) >= {errors_kept}
             THEN json_remove(errors, '$[1]') ELSE coalesce(errors, '[]') END,
        '$[#]', json_object(
            'attempt', attempts, 'error', :error, 'at', strftime('%Y-%m-%d %H:%M:%f', 'now'))),
    processing_started_at = CASE WHEN :retry THEN NULL ELSE processing_started_at END,
    claimed_by = CASE WHEN :retry THEN NULL ELSE claimed_by END

-- name: paused
EXISTS (SELECT 1 FROM {catalog}
        WHERE name = {table.bare_lit} AND json_extract(options, '$.paused_at') IS NOT NULL)
