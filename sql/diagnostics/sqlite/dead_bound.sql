-- answers: how many dead entries a walk of the queue's index can meet: none, SQLite removes a
--          deleted row from its b-tree when the transaction commits (no MVCC versions)
-- params: none
-- min version: SQLite 3.16
-- privilege: read access to the file
-- cost: none
SELECT 0 AS dead_bound, 'SQLite keeps no dead rows' AS dead_bound_source
