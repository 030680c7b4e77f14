-- answers: on InnoDB, that the walks need no dead-entry bound (walk_skips_dead: InnoDB
--          skips delete-marked records inside one handler call, and keeps no per-table count
--          of them), so a claim queue's claimed rows are counted apart from its depth
--          (TABLE_ROWS, the estimate, follows each insert and delete between its
--          recomputations: it lags no fill the way PostgreSQL's counters can)
-- params: :schema, :table
-- min version: MySQL 8.0
-- privilege: none
-- cost: no table read
SELECT NULL AS dead_bound,
       NULL AS dead_bound_source,
       NULL AS ids_seen,
       1 AS walk_skips_dead,
       :schema AS for_schema,
       :table AS for_table
