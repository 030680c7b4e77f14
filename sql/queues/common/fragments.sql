-- Fragments several engines share: an engine's fragments.sql extends this file (and spells
-- the words these use, insert_ignore, its own way). A fragment's text is all SQL: comments go
-- up here. load_keys: load's idempotency keys of a chunk, recorded in the transaction that
-- loads it.

-- name: load_keys
{insert_ignore()} INTO {loaded} (load_key)
SELECT load_key FROM {stage}
WHERE seq >= :from_seq AND seq < :to_seq AND load_key IS NOT NULL
