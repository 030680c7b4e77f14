-- Sequence fragments for MySQL 8, which has no SEQUENCE objects: an AUTO_INCREMENT ticket
-- table instead. A ticket's value is never handed out twice, rolled back or not (InnoDB's
-- counter is persisted since 8.0). Old tickets are pruned every 1000 values so the table stays
-- small; the latest ones stay, since next_expr reads max(id). next_expr sees committed tickets
-- only, so under concurrency it can lag the true next value: the ring treats it as a hint.
-- {obj} is the quoted sequence object; next_value sets the procedure variable v_seq.
-- MariaDB uses sql/queues/mariadb/fragments.sql.

-- name: create_sequence
CREATE TABLE {obj} (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY) ENGINE=InnoDB

-- name: drop_sequence
DROP TABLE IF EXISTS {obj}

-- name: next_value
INSERT INTO {obj} () VALUES ();
    SET v_seq = LAST_INSERT_ID();
    IF MOD(v_seq, 1000) = 0 THEN
        DELETE FROM {obj} WHERE id < v_seq - 1000;
    END IF

-- name: next_expr
(SELECT COALESCE(MAX(id), 0) + 1 FROM {obj})

-- name: skip_sql
CONCAT('INSERT INTO ', {obj_lit}, ' () VALUES ()')
