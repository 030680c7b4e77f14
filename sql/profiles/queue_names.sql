-- A library's named queues kept in a table of their own, the queue table's column holding
-- each one's key (kombu: kombu_message.queue_id is kombu_queue.id; the name is
-- kombu_queue.name). Read by qadmin.profiles.queue_names so --queue takes the name (or the
-- key) and output shows the name. The same SQL on every engine.
-- params: :label (a name), :key (a key)
-- cost: one row by its name or key; "every" reads the names table whole (one row a queue)

-- name: by_label
SELECT {key.bare} AS queue_key, {label.bare} AS queue_label FROM {names}
WHERE {label.bare} = :label

-- name: by_key
SELECT {key.bare} AS queue_key, {label.bare} AS queue_label FROM {names}
WHERE {key.bare} = :key

-- name: every
SELECT {key.bare} AS queue_key, {label.bare} AS queue_label FROM {names}
