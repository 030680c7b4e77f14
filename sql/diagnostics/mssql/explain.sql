-- answers: the estimated plan of the dequeue's head (SHOWPLAN_XML: seeks, scans, sorts and
--          the index used); written for SQL Server, parse-gated, not run live here
-- params: none; the head (a template's or profile.sql's head section) runs between on and off
-- min version: SQL Server 2016
-- privilege: SHOWPLAN, and SELECT on the queue table
-- cost: plans the statement only (SHOWPLAN does not execute it)
-- name: on
SET SHOWPLAN_XML ON

-- name: off
SET SHOWPLAN_XML OFF
