-- Sequence fragments for MariaDB 10.3+: real SEQUENCE objects. NEXT VALUE FOR is not rolled
-- back with the transaction. NOCACHE keeps next_not_cached_value exact (the ring reads it to
-- see whether it is full or empty before taking a number) and leaves no gap on a restart.
-- {obj} is the quoted sequence; next_value sets the procedure variable v_seq; skip_take /
-- skip_value take one value into @qadmin_n for qadmin repair.
--
-- A routine's own transaction for an autocommit caller (see sql/queues/mysql/fragments.sql,
-- whose txn_declare, txn_handler and txn_end MariaDB shares): MariaDB says directly whether a
-- transaction is open.

-- name: create_sequence
CREATE SEQUENCE {obj} START WITH 0 MINVALUE 0 INCREMENT BY 1 NOCACHE

-- name: drop_sequence
DROP SEQUENCE IF EXISTS {obj}

-- name: next_value
SET v_seq = NEXT VALUE FOR {obj}

-- name: next_take
SET v_seq = NEXT VALUE FOR {obj}

-- name: next_prune
-- nothing to prune: a SEQUENCE keeps no rows
DO 0

-- name: next_expr
(SELECT next_not_cached_value FROM {obj})

-- name: skip_sql
CONCAT('SELECT NEXTVAL(', {obj.lit}, ')')

-- name: skip_take
SET @qadmin_n = NEXT VALUE FOR {obj}

-- name: skip_value
@qadmin_n

-- name: catch_up_sql
-- The statement that makes @qadmin_n the next value (SETVAL takes only literals, and never
-- moves a sequence back).
CONCAT('SELECT SETVAL(', {obj.lit}, ', ', @qadmin_n, ', 0)')

-- name: txn_begin
IF @@autocommit = 1 AND @@in_transaction = 0 THEN
        SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
        START TRANSACTION;
        SET v_own = 1;
    END IF

-- name: gate_switched
SELECT switched INTO v_switched FROM {gate} WHERE one = 1 LOCK IN SHARE MODE;
    IF v_switched = 1 THEN
        SET @qadmin_fresh = v_own;
        CALL {obj}({arg});
        SET @qadmin_fresh = NULL;
    ELSEIF EXISTS (SELECT 1 FROM information_schema.TABLES
                   WHERE TABLE_SCHEMA = {table.schema_lit} AND TABLE_NAME = {backup.bare_lit}) THEN
