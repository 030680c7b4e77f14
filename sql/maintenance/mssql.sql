-- Index maintenance of one queue table on SQL Server (qadmin maintain --dry-run prints these;
-- qadmin does not run them: they were not run live, see docs/verified.md).
-- min version: SQL Server 2016
-- privilege: ALTER on the table

-- name: reorganize
-- Always online: compacts and reorders the leaf level in small transactions.
ALTER INDEX {index.bare} ON {table} REORGANIZE

-- name: rebuild_online
-- ONLINE = ON needs Enterprise or Developer edition (Azure SQL too); elsewhere it is an error.
ALTER INDEX {index.bare} ON {table} REBUILD WITH (ONLINE = ON)

-- name: statistics
UPDATE STATISTICS {table}
