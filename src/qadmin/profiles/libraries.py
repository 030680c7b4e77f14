"""The job-queue libraries qadmin recognises: one ``LibraryShape`` per library and table.

Each entry is the library's documented table (name, the columns that identify it) and how its
rows are read as a queue (states, claim and heartbeat columns, how a stale claim is released).
Written from each library's own schema (its migrations or DDL at the version named) and its
documented states; docs/libraries.md says how each was verified.

``release`` is set only where the library itself gives a stalled job back with an UPDATE of
the same row (state back to waiting, claim columns cleared). Where the library recovers its
own stalled jobs (a lease that expires, a rescuer, an advisory lock that ends with the
session) or its recovery touches more than the row, it is None and the docs say what to use.
"""

from __future__ import annotations

import dataclasses

from qadmin.profiles.model import (
    ClaimEvent,
    Heartbeat,
    LibraryShape,
    Profile,
    QueueNames,
    Release,
    Retry,
)

POSTGRESQL = ("postgresql",)
# MariaDB engines may name themselves "mariadb" or their base "mysql": both are listed.
MYSQL_FAMILY = ("mysql", "mariadb")
ACTIVE_RECORD = ("postgresql", *MYSQL_FAMILY, "sqlite")


def _shape(
    library: str,
    tables: tuple[str, ...],
    columns: tuple[str, ...],
    dialects: tuple[str, ...],
    verified: str,
    profile: Profile,
) -> LibraryShape:
    return LibraryShape(
        library=library,
        tables=tables,
        columns=frozenset(columns),
        dialects=dialects,
        verified=verified,
        profile=profile,
    )


# procrastinate 3.x: a status enum; a worker row in procrastinate_workers beats every few
# seconds and a 'doing' job names its worker. No enqueue time on the job (it is in
# procrastinate_events), so no oldest age. Its retry (procrastinate_retry_job_v2) is an UPDATE
# of the row back to 'todo'; the status trigger records the event for any such UPDATE.
PROCRASTINATE = _shape(
    "procrastinate",
    ("procrastinate_jobs",),
    ("id", "queue_name", "task_name", "status", "attempts", "worker_id", "abort_requested"),
    POSTGRESQL,
    "live",
    Profile(
        name="procrastinate_jobs",
        table="procrastinate_jobs",
        library="procrastinate",
        noun="job",
        id_column="id",
        order_by="id",
        # procrastinate_fetch_job: the highest priority first, then the oldest id.
        dequeue_order=("priority DESC", "id"),
        due_column="scheduled_at",
        queue_column="queue_name",
        state_column="status",
        pending=("todo",),
        claimed=("doing",),
        done=("succeeded", "cancelled", "aborted"),
        failed=("failed",),
        worker_column="worker_id",
        heartbeat=Heartbeat(
            table="procrastinate_workers",
            job_column="worker_id",
            worker_column="id",
            beat_column="last_heartbeat",
        ),
        # The claim time: the job's latest 'started' event (procrastinate indexes job_id).
        claim_event=ClaimEvent("procrastinate_events", "job_id", "type", "started", "at"),
        # 3 x procrastinate's default update_heartbeat_interval (10 s); its own
        # get_stalled_jobs defaults to 30 s as well.
        heartbeat_floor_s=30.0,
        attempts_column="attempts",
        release=Release(state="todo", clear=("worker_id",)),
        # procrastinate_retry_job_v2 on a failed job, as its admin's retry calls it (retry_at
        # now, priority, queue and lock kept): back to 'todo', attempts + 1, due now.
        retry=Retry(
            source="procrastinate_retry_job_v2",
            state="todo",
            sets=(("attempts", "{attempts.bare} + 1"), ("scheduled_at", "{qadmin_clock}")),
        ),
    ),
)

# pgqueuer 1.x: a status enum; the picking queue manager beats on the job's own row. Finished
# jobs leave the table (into pgqueuer_log) unless kept. Its workers re-pick a 'picked' job
# whose heartbeat is older than their retry_timer in place: it never sets one back to
# 'queued', so qadmin does not either.
PGQUEUER = _shape(
    "pgqueuer",
    ("pgqueuer",),
    ("id", "priority", "queue_manager_id", "heartbeat", "execute_after", "status", "entrypoint"),
    POSTGRESQL,
    "live",
    Profile(
        name="pgqueuer",
        table="pgqueuer",
        library="pgqueuer",
        noun="job",
        id_column="id",
        order_by="id",
        time_column="created",
        due_column="execute_after",
        # pgqueuer's named queues are its entrypoints (queue_size counts per entrypoint).
        queue_column="entrypoint",
        state_column="status",
        pending=("queued",),
        claimed=("picked",),
        done=("successful", "canceled", "deleted"),
        failed=("exception", "failed"),
        claimed_at_column="updated",
        worker_column="queue_manager_id",
        heartbeat_column="heartbeat",
        attempts_column="attempts",
    ),
)

# kombu's SQLAlchemy transport (kombu.transport.sqlalchemy): ``visible`` true is waiting; a
# delivered message is kept with visible false and never delivered again (the transport has
# no acknowledgement in the table), so it is done, and a claim is invisible to the database.
# Its ``timestamp`` is set only on delivery, so waiting rows have no enqueue time. The named
# queue is ``queue_id``, kombu_queue's id (the queue's name is kombu_queue.name): --queue takes
# the name (or the id), and output shows the name. No delayed delivery in the transport (a
# Celery eta waits in the worker's memory).
KOMBU = _shape(
    "kombu",
    ("kombu_message",),
    ("id", "visible", "timestamp", "payload", "version", "queue_id"),
    ("postgresql", *MYSQL_FAMILY, "sqlite", "mssql"),
    "live",
    Profile(
        name="kombu_message",
        table="kombu_message",
        library="kombu",
        noun="message",
        id_column="id",
        order_by="id",
        queue_column="queue_id",
        queue_names=QueueNames("kombu_queue", "id", "name"),
        state_column="visible",
        pending=(True,),
        done=(False,),
    ),
)

# django-q2's ORM broker: ``lock`` is "locked until". Enqueue sets it to now, a pull sets it
# to now + the cluster's retry; a finished task's row is deleted. A row locked into the
# future is in flight; once its lock passes it is waiting again and is redelivered by
# django-q2 itself, so there is nothing to release. The lock time of a waiting row is when
# it became available, the closest thing to an enqueue time.
DJANGO_Q2 = _shape(
    "django-q2",
    ("django_q_ormq",),
    ("id", "key", "payload", "lock"),
    ("postgresql", *MYSQL_FAMILY, "sqlite"),
    "live",
    Profile(
        name="django_q_ormq",
        table="django_q_ormq",
        library="django-q2",
        noun="task",
        id_column="id",
        order_by="id",
        time_column="lock",
        # The cluster's name (Q_CLUSTER name, or async_task's cluster=): the named queue.
        queue_column="key",
        # Django writes UTC (USE_TZ) into MariaDB's and SQLite's naive datetime columns.
        naive_utc=True,
        state_sql="CASE WHEN {lock.bare} > {qadmin_clock} THEN 'locked' ELSE 'available' END",
        pending=("available",),
        claimed=("locked",),
    ),
)

# pg-boss 10: pgboss.job, a state enum, partitioned by queue name (one partition per queue,
# read through the parent). The id is a uuid, so the order is created_on. Its maintenance
# fails an 'active' job past its expire_in and retries it per its retry_limit: pg-boss
# recovers stalled jobs itself.
PG_BOSS = _shape(
    "pg-boss",
    ("job",),
    ("id", "name", "state", "retry_count", "start_after", "started_on", "expire_in", "keep_until"),
    POSTGRESQL,
    "live",
    Profile(
        name="job",
        table="job",
        library="pg-boss",
        noun="job",
        id_column="id",
        order_by="created_on",
        time_column="created_on",
        due_column="start_after",
        queue_column="name",
        state_column="state",
        # A 'retry' job is fetched again once its start_after passes (pg-boss's fetch takes
        # every state before 'active'): waiting for a retry until then.
        pending=("created",),
        retrying=("retry",),
        claimed=("active",),
        done=("completed", "cancelled"),
        failed=("failed",),
        claimed_at_column="started_on",
        attempts_column="retry_count",
        error_column="output",
    ),
)

# graphile-worker 0.16 (migration 000016 on): _private_jobs has no state column; a job is
# locked (locked_at/locked_by), permanently failed (attempts reached max_attempts, kept), or
# waiting; a finished job is deleted. A lock older than 4 hours is ignored by its workers, and
# graphile_worker.force_unlock_workers() also unlocks the job's named queue
# (_private_job_queues), which an UPDATE of the job row alone would leave locked.
GRAPHILE_WORKER = _shape(
    "graphile-worker",
    ("_private_jobs",),
    ("id", "task_id", "run_at", "attempts", "max_attempts", "locked_at", "locked_by", "key"),
    POSTGRESQL,
    "live",
    Profile(
        name="_private_jobs",
        table="_private_jobs",
        library="graphile-worker",
        noun="job",
        id_column="id",
        order_by="id",
        time_column="created_at",
        due_column="run_at",
        state_sql=(
            "CASE WHEN {locked_at.bare} IS NOT NULL THEN 'locked'"
            " WHEN {attempts.bare} >= {max_attempts.bare} THEN 'failed'"
            " ELSE 'waiting' END"
        ),
        pending=("waiting",),
        claimed=("locked",),
        failed=("failed",),
        claimed_at_column="locked_at",
        worker_column="locked_by",
        attempts_column="attempts",
        error_column="last_error",
    ),
)

# graphile-worker's documented user-facing view graphile_worker.jobs (over _private_jobs and
# _private_tasks): the same rows and states, read the same way (no index: counted bounded).
GRAPHILE_WORKER_VIEW = _shape(
    "graphile-worker",
    ("jobs",),
    (
        "id",
        "task_identifier",
        "run_at",
        "attempts",
        "max_attempts",
        "locked_at",
        "locked_by",
        "key",
    ),
    POSTGRESQL,
    "live",
    dataclasses.replace(
        GRAPHILE_WORKER.profile, name="jobs", table="jobs", queue_column="queue_name"
    ),
)

# River (Go): river_job with the river_job_state enum. Its rescuer moves a 'running' job
# stuck past RescueStuckJobsAfter back to 'retryable' (or discards it) by itself.
RIVER = _shape(
    "river",
    ("river_job",),
    ("id", "state", "kind", "queue", "attempt", "max_attempts", "scheduled_at", "attempted_at"),
    POSTGRESQL,
    "shape",
    Profile(
        name="river_job",
        table="river_job",
        library="river",
        noun="job",
        id_column="id",
        order_by="id",
        time_column="created_at",
        due_column="scheduled_at",
        queue_column="queue",
        state_column="state",
        pending=("available",),
        # River's scheduler makes these 'available' once their scheduled_at passes ('pending'
        # waits for an outside action and counts as scheduled).
        scheduled=("scheduled", "pending"),
        retrying=("retryable",),
        claimed=("running",),
        done=("completed", "cancelled"),
        failed=("discarded",),
        claimed_at_column="attempted_at",
        attempts_column="attempt",
        error_column="errors",
        failed_at_column="finalized_at",
        # River's JobRetry (river_job_retry): available now, one more attempt allowed when
        # the job used them all, no longer finalized.
        retry=Retry(
            source="River's JobRetry",
            state="available",
            sets=(
                (
                    "max_attempts",
                    "CASE WHEN {attempt.bare} = {max_attempts.bare}"
                    " THEN {max_attempts.bare} + 1 ELSE {max_attempts.bare} END",
                ),
                ("scheduled_at", "{qadmin_clock}"),
                ("finalized_at", "NULL"),
            ),
        ),
    ),
)

# Oban (Elixir, and Oban for Python, PyPI ``oban`` 0.7, which installs the same schema):
# oban_jobs with the oban_job_state enum; its Lifeline plugin rescues orphaned 'executing'
# jobs by itself (by age: rescue_after, 5 min in Python), so nothing to release. Its
# timestamps are UTC without a time zone. 'scheduled' and 'retryable' jobs wait for
# scheduled_at (its stager makes them 'available'); 'suspended' (Oban Pro's workflows: a job
# held until others finish; installed by Oban for Python, never set by it) is neither
# waiting nor claimed. A fetch sets attempted_by to [node, producer uuid]; each producer (one
# per queue and node) beats in oban_producers.updated_at (Python's refresher: every 15 s,
# rows older than 60 s pruned; Elixir Oban keeps the table only with Pro, and without it a
# claim is judged by its age).
OBAN = _shape(
    "oban",
    ("oban_jobs",),
    ("id", "state", "queue", "worker", "attempt", "max_attempts", "inserted_at", "scheduled_at"),
    POSTGRESQL,
    "live",
    Profile(
        name="oban_jobs",
        table="oban_jobs",
        library="oban",
        noun="job",
        id_column="id",
        order_by="id",
        # fetch_jobs.sql: per queue, priority, then scheduled_at, then id.
        dequeue_order=("priority", "scheduled_at", "id"),
        time_column="inserted_at",
        due_column="scheduled_at",
        queue_column="queue",
        # Oban writes UTC into timestamp-without-time-zone columns.
        naive_utc=True,
        state_column="state",
        pending=("available",),
        scheduled=("scheduled",),
        retrying=("retryable",),
        claimed=("executing",),
        done=("completed", "cancelled"),
        failed=("discarded",),
        claimed_at_column="attempted_at",
        worker_column="attempted_by",
        heartbeat=Heartbeat(
            table="oban_producers",
            job_column="attempted_by",
            worker_column="uuid",
            beat_column="updated_at",
            key_sql="{attempted_by.bare}[2]",
        ),
        # Oban for Python's refresher prunes producers silent for 60 s (it beats every 15 s).
        heartbeat_floor_s=60.0,
        attempts_column="attempt",
        error_column="errors",
        failed_at_column="discarded_at",
        # Oban's retry_job (retry_many_jobs.sql in Oban for Python): available now, one more
        # attempt allowed when it used them all, its finish times cleared, its uniqueness
        # bitmap emptied.
        retry=Retry(
            source="Oban's retry_job",
            state="available",
            sets=(
                ("max_attempts", "GREATEST({max_attempts.bare}, {attempt.bare} + 1)"),
                ("scheduled_at", "timezone('UTC', now())"),
                ("completed_at", "NULL"),
                ("cancelled_at", "NULL"),
                ("discarded_at", "NULL"),
                ("meta", "jsonb_set({meta.bare}, ARRAY['uniq_bmp'], CAST('[]' AS jsonb))"),
            ),
        ),
    ),
)

# chancy 0.26 (PyPI ``chancy``, PostgreSQL; default table prefix ``chancy_``): chancy_jobs with
# a text state; ids are uuid7, so the order is created_at. A job waits 'pending' (or
# 'retrying', after a failure, for its Retry plugin's backoff) until scheduled_at; a worker
# claims it as 'running' with taken_by = its worker_id and started_at, and beats in
# chancy_workers.last_seen (every heartbeat_poll_interval, 30 s by default). Its Recovery
# plugin gives back the jobs of a worker unseen for heartbeat_timeout (90 s), raising their
# max_attempts as it does: more than a row's claim columns, so nothing for qadmin to release.
CHANCY = _shape(
    "chancy",
    ("chancy_jobs",),
    ("id", "queue", "func", "kwargs", "state", "taken_by", "scheduled_at", "max_attempts"),
    POSTGRESQL,
    "live",
    Profile(
        name="chancy_jobs",
        table="chancy_jobs",
        library="chancy",
        noun="job",
        id_column="id",
        order_by="created_at",
        # Worker.fetch_jobs: per queue, the highest priority first, then the id (uuid7).
        # created_at (the order key here: never a uuid) is named last so that explain plans
        # this order; after the unique id it never decides.
        dequeue_order=("priority DESC", "id", "created_at"),
        time_column="created_at",
        due_column="scheduled_at",
        queue_column="queue",
        state_column="state",
        pending=("pending",),
        retrying=("retrying",),
        claimed=("running",),
        done=("succeeded",),
        failed=("failed",),
        claimed_at_column="started_at",
        worker_column="taken_by",
        heartbeat=Heartbeat(
            table="chancy_workers",
            job_column="taken_by",
            worker_column="worker_id",
            beat_column="last_seen",
        ),
        # chancy's heartbeat_timeout (90 s): its own Recovery plugin's limit.
        heartbeat_floor_s=90.0,
        attempts_column="attempts",
        error_column="errors",
    ),
)

# dramatiq-pg 0.12 (PyPI ``dramatiq-pg``, PostgreSQL): one table, dramatiq.queue (schema
# ``dramatiq``, table ``queue``; both renamable), keyed by a uuid message_id; the named queue is
# queue_name, and a message delayed by dramatiq waits in the queue ``<name>.DQ`` with its eta
# inside the message (options.eta, epoch ms; no column), so there is no due column: the
# ``.DQ`` queues are the scheduled ones. mtime is the enqueue time and is reset when a consumer
# takes the message ('consumed'). The consumer's database session holds an advisory lock keyed
# on the message (dramatiq_pg.broker.message_lock: a sha256 of queue_name || message_id,
# shifted into a signed bigint) while it works it; a 'consumed' row nobody holds the lock of
# is a dead consumer's, which dramatiq-pg's own consumers take again on their next scan, and
# which its ``dramatiq-pg recover`` sets back to 'queued' (by age): the same UPDATE qadmin's
# requeue does, for the rows whose lock is gone. A consumed row read as 'queued' by
# dramatiq-pg's UTC-shifted default is written with ``NOW() AT TIME ZONE 'UTC'`` into a
# timestamptz: right only for a session time zone of UTC.
_DRAMATIQ_LOCK_HELD = (
    "EXISTS (SELECT 1 FROM (SELECT ('x' || substr(encode(sha256(convert_to("
    "{queue_name.bare} || {message_id.bare}::text, 'UTF8')), 'hex'), 25, 16))"
    "::bit(64)::bigint # (1::bigint << 63) AS k) AS m"
    " JOIN pg_locks AS l ON l.locktype = 'advisory' AND l.granted AND l.objsubid = 1"
    " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    " AND l.classid::bigint = (m.k >> 32) & 4294967295"
    " AND l.objid::bigint = m.k & 4294967295)"
)
DRAMATIQ_PG = _shape(
    "dramatiq-pg",
    ("queue",),
    ("message_id", "queue_name", "state", "mtime", "message", "result", "result_ttl"),
    POSTGRESQL,
    "live",
    Profile(
        name="queue",
        table="queue",
        library="dramatiq-pg",
        noun="message",
        id_column="message_id",
        order_by="mtime",
        time_column="mtime",
        queue_column="queue_name",
        state_column="state",
        pending=("queued",),
        claimed=("consumed",),
        done=("done",),
        failed=("rejected",),
        claimed_at_column="mtime",
        claim_alive_sql=_DRAMATIQ_LOCK_HELD,
        release=Release(state="queued"),
    ),
)

# Solid Queue (Rails): a job waits as a row of solid_queue_ready_executions and is claimed as
# a row of solid_queue_claimed_executions naming the process, whose heartbeat is in
# solid_queue_processes. Its supervisor releases the claims of a process whose heartbeat
# expired (deleting the claim and making the job ready again): nothing for qadmin to release.
SOLID_QUEUE_READY = _shape(
    "solid-queue",
    ("solid_queue_ready_executions",),
    ("id", "job_id", "queue_name", "priority", "created_at"),
    ACTIVE_RECORD,
    "shape",
    Profile(
        name="solid_queue_ready_executions",
        table="solid_queue_ready_executions",
        library="solid-queue",
        noun="job",
        id_column="job_id",
        order_by="id",
        time_column="created_at",
        queue_column="queue_name",
        naive_utc=True,  # Rails writes UTC into its timestamp-without-time-zone columns
    ),
)
# Solid Queue's jobs scheduled for later wait in solid_queue_scheduled_executions until its
# dispatcher moves each due one to the ready executions: every row waits for scheduled_at.
SOLID_QUEUE_SCHEDULED = _shape(
    "solid-queue",
    ("solid_queue_scheduled_executions",),
    ("id", "job_id", "queue_name", "priority", "scheduled_at", "created_at"),
    ACTIVE_RECORD,
    "shape",
    Profile(
        name="solid_queue_scheduled_executions",
        table="solid_queue_scheduled_executions",
        library="solid-queue",
        noun="job",
        id_column="job_id",
        order_by="id",
        time_column="created_at",
        due_column="scheduled_at",
        queue_column="queue_name",
        naive_utc=True,
    ),
)
SOLID_QUEUE_CLAIMED = _shape(
    "solid-queue",
    ("solid_queue_claimed_executions",),
    ("id", "job_id", "process_id", "created_at"),
    ACTIVE_RECORD,
    "shape",
    Profile(
        name="solid_queue_claimed_executions",
        table="solid_queue_claimed_executions",
        library="solid-queue",
        noun="job",
        id_column="job_id",
        order_by="id",
        time_column="created_at",
        # Every row is a claim (job_id is never NULL): read as a state so that depth, the
        # waiting rows, is 0 here; the waiting jobs are solid_queue_ready_executions.
        state_sql="CASE WHEN {job_id.bare} IS NULL THEN 'ready' ELSE 'claimed' END",
        pending=("ready",),
        claimed=("claimed",),
        claimed_at_column="created_at",
        naive_utc=True,
        worker_column="process_id",
        heartbeat=Heartbeat(
            table="solid_queue_processes",
            job_column="process_id",
            worker_column="id",
            beat_column="last_heartbeat_at",
        ),
        # Solid Queue's own process_alive_threshold (5 min; it beats every 60 s).
        heartbeat_floor_s=300.0,
    ),
)

# GoodJob (Rails, PostgreSQL): good_jobs has no state column; its states are derived from
# finished_at, error, performed_at and scheduled_at as GoodJob's own scopes do. A running
# job's process (locked_by_id) beats in good_job_processes. Claims are advisory locks that end
# with the session, after which GoodJob runs the job again: nothing to release.
GOOD_JOB = _shape(
    "good_job",
    ("good_jobs",),
    ("id", "queue_name", "scheduled_at", "performed_at", "finished_at", "error", "active_job_id"),
    POSTGRESQL,
    "shape",
    Profile(
        name="good_jobs",
        table="good_jobs",
        library="good_job",
        noun="job",
        id_column="id",
        order_by="created_at",
        time_column="created_at",
        due_column="scheduled_at",
        state_sql=(
            "CASE WHEN {finished_at.bare} IS NOT NULL AND {error.bare} IS NOT NULL"
            " THEN 'discarded'"
            " WHEN {finished_at.bare} IS NOT NULL THEN 'succeeded'"
            " WHEN {performed_at.bare} IS NOT NULL THEN 'running'"
            " WHEN {scheduled_at.bare} > CURRENT_TIMESTAMP THEN 'scheduled'"
            " ELSE 'queued' END"
        ),
        queue_column="queue_name",
        naive_utc=True,
        pending=("queued",),
        scheduled=("scheduled",),
        claimed=("running",),
        done=("succeeded",),
        failed=("discarded",),
        claimed_at_column="performed_at",
        worker_column="locked_by_id",
        heartbeat=Heartbeat(
            table="good_job_processes",
            job_column="locked_by_id",
            worker_column="id",
            beat_column="updated_at",
        ),
        attempts_column="executions_count",
        error_column="error",
    ),
)

# Que 1.x/2.x (Ruby, PostgreSQL): que_jobs; a finished job keeps finished_at, an expired one
# (out of retries) expired_at. A job being worked is held by an advisory lock, not a column,
# so claims do not show in the table, and end with the locking session.
QUE = _shape(
    "que",
    ("que_jobs",),
    ("id", "priority", "run_at", "job_class", "error_count", "finished_at", "expired_at"),
    POSTGRESQL,
    "shape",
    Profile(
        name="que_jobs",
        table="que_jobs",
        library="que",
        noun="job",
        id_column="id",
        order_by="id",
        due_column="run_at",
        queue_column="queue",
        state_sql=(
            "CASE WHEN {finished_at.bare} IS NOT NULL THEN 'finished'"
            " WHEN {expired_at.bare} IS NOT NULL THEN 'expired'"
            " ELSE 'ready' END"
        ),
        pending=("ready",),
        done=("finished",),
        failed=("expired",),
        attempts_column="error_count",
        error_column="last_error_message",
    ),
)

# Delayed::Job (Ruby, ActiveRecord): delayed_jobs; a finished job is deleted, a failed one kept
# with failed_at. Its own Delayed::Job.clear_locks! gives a dead worker's jobs back with an
# UPDATE clearing locked_at and locked_by: the same release qadmin does.
DELAYED_JOB = _shape(
    "delayed_job",
    ("delayed_jobs",),
    ("id", "priority", "attempts", "handler", "run_at", "locked_at", "locked_by", "failed_at"),
    ACTIVE_RECORD,
    "shape",
    Profile(
        name="delayed_jobs",
        table="delayed_jobs",
        library="delayed_job",
        noun="job",
        id_column="id",
        order_by="id",
        time_column="created_at",
        due_column="run_at",
        queue_column="queue",
        naive_utc=True,
        state_sql=(
            "CASE WHEN {failed_at.bare} IS NOT NULL THEN 'failed'"
            " WHEN {locked_at.bare} IS NOT NULL THEN 'locked'"
            " ELSE 'waiting' END"
        ),
        pending=("waiting",),
        claimed=("locked",),
        failed=("failed",),
        claimed_at_column="locked_at",
        worker_column="locked_by",
        attempts_column="attempts",
        error_column="last_error",
        release=Release(state=None, clear=("locked_at", "locked_by")),
    ),
)


def _hangfire_job(names: dict[str, str], dialects: tuple[str, ...]) -> LibraryShape:
    """Hangfire's Job table: its current state's name is kept on the row. The schema is
    lower-case on PostgreSQL (Hangfire.PostgreSql) and PascalCase on SQL Server."""
    return _shape(
        "hangfire",
        ("job",),
        ("id", "stateid", "statename", "invocationdata", "createdat"),
        dialects,
        "shape",
        Profile(
            name=names["table"],
            table=names["table"],
            library="hangfire",
            noun="job",
            id_column=names["id"],
            order_by=names["id"],
            time_column=names["createdat"],
            naive_utc=True,  # Hangfire writes DateTime.UtcNow
            state_column=names["statename"],
            pending=("Enqueued", "Scheduled", "Awaiting"),
            claimed=("Processing",),
            done=("Succeeded", "Deleted"),
            failed=("Failed",),
        ),
    )


def _hangfire_queue(names: dict[str, str], dialects: tuple[str, ...]) -> LibraryShape:
    """Hangfire's JobQueue: a fetched row has FetchedAt set. Hangfire fetches a row again once
    its invisibility timeout has passed (or the fetching transaction ended): it recovers a
    dead worker's job itself."""
    return _shape(
        "hangfire",
        ("jobqueue",),
        ("id", "jobid", "queue", "fetchedat"),
        dialects,
        "shape",
        Profile(
            name=names["table"],
            table=names["table"],
            library="hangfire",
            noun="job",
            id_column=names["jobid"],
            order_by=names["id"],
            queue_column=names["queue"],
            naive_utc=True,
            state_sql=f"CASE WHEN {{{names['fetchedat']}.bare}} IS NULL THEN 'enqueued'"
            " ELSE 'fetched' END",
            pending=("enqueued",),
            claimed=("fetched",),
            claimed_at_column=names["fetchedat"],
        ),
    )


_HANGFIRE_PG = {
    "table": "job",
    "id": "id",
    "createdat": "createdat",
    "statename": "statename",
    "jobid": "jobid",
    "fetchedat": "fetchedat",
    "queue": "queue",
}
_HANGFIRE_MSSQL = {
    "table": "Job",
    "id": "Id",
    "createdat": "CreatedAt",
    "statename": "StateName",
    "jobid": "JobId",
    "fetchedat": "FetchedAt",
    "queue": "Queue",
}

# -- django-tasks, huey, persist-queue (Python; SQLite and the ORM engines) --------------------

# django-tasks' database backend (``django_tasks.backends.database`` up to django-tasks 0.11,
# the django-tasks-db package since): one row per task in django_tasks_database_dbtaskresult,
# a status text (READY, RUNNING, SUCCESSFUL, FAILED). A task enqueued without run_after gets
# the sentinel 9999-01-01 ("whenever"): its worker takes READY rows whose run_after is that
# sentinel or has passed, so run_after is read in the state (SCHEDULED: a real run_after still
# ahead; anything below year 9000 is real) rather than as a due column, which would call every
# unscheduled task not due. A waiting task's age runs from when it became due: its run_after
# when a real one (below the sentinel; NULL in older versions means none) is later than its
# enqueued_at, else its enqueued_at. No retries, no heartbeat: a RUNNING task whose worker
# died stays RUNNING (started_at is its claim time) and the library has no recovery of its own.
DJANGO_TASKS = _shape(
    "django-tasks",
    ("django_tasks_database_dbtaskresult",),
    ("id", "status", "queue_name", "backend_name", "run_after", "enqueued_at", "task_path"),
    ("postgresql", *MYSQL_FAMILY, "sqlite"),
    "live",
    Profile(
        name="django_tasks_database_dbtaskresult",
        table="django_tasks_database_dbtaskresult",
        library="django-tasks",
        noun="task",
        id_column="id",
        # The id is a uuid: the enqueue time orders it. Its worker's order (the model's
        # Meta.ordering, served by tasks_db_new_ordering_idx):
        order_by="enqueued_at",
        dequeue_order=("priority DESC", "run_after", "enqueued_at"),
        time_column="enqueued_at",
        oldest_from=(
            (
                "run_after",
                "{run_after.bare} < '9000-01-01' AND {run_after.bare} > {enqueued_at.bare}",
            ),
            (
                "enqueued_at",
                "({run_after.bare} IS NULL OR {run_after.bare} >= '9000-01-01'"
                " OR {run_after.bare} <= {enqueued_at.bare})",
            ),
        ),
        queue_column="queue_name",
        # Django writes UTC (USE_TZ) into MariaDB's and SQLite's naive datetime columns.
        naive_utc=True,
        state_sql=(
            "CASE WHEN {status.bare} = 'READY' AND {run_after.bare} > {qadmin_clock}"
            " AND {run_after.bare} < '9000-01-01' THEN 'SCHEDULED' ELSE {status.bare} END"
        ),
        pending=("READY",),
        scheduled=("SCHEDULED",),
        claimed=("RUNNING",),
        done=("SUCCESSFUL",),
        failed=("FAILED",),
        claimed_at_column="started_at",
        error_column="exception_class_path",
        no_release=(
            "django-tasks gives nothing back itself and qadmin does not either: a RUNNING task"
            " whose worker died stays RUNNING; enqueue it again with the task's own enqueue()"
        ),
    ),
)

# huey's SQLite storage (SqliteHuey, huey 2.x-3.x): a waiting task is a row of ``task`` (its
# huey instance's name in ``queue``: the named queue), deleted when a consumer dequeues it, so
# a running task is not in the database at all (and a killed consumer's task is lost). A task
# with an eta (scheduled, or a retry with a retry_delay) is moved by the consumer into
# ``schedule`` with the eta as epoch seconds in ``timestamp``, and back into ``task`` by the
# consumer's scheduler once due. Neither table keeps an enqueue time.
HUEY_TASK = _shape(
    "huey",
    ("task",),
    ("id", "queue", "data", "priority"),
    ("sqlite",),
    "live",
    Profile(
        name="task",
        table="task",
        library="huey",
        noun="task",
        id_column="id",
        order_by="id",
        # SqliteStorage.dequeue: the highest priority first, then the lowest id.
        dequeue_order=("priority DESC", "id"),
        queue_column="queue",
    ),
)
HUEY_SCHEDULE = _shape(
    "huey",
    ("schedule",),
    ("id", "queue", "data", "timestamp"),
    ("sqlite",),
    "live",
    Profile(
        name="schedule",
        table="schedule",
        library="huey",
        noun="task",
        id_column="id",
        order_by="id",
        dequeue_order=("timestamp", "id"),
        # Every row waits for its eta: not due it is scheduled; due it waits for the
        # consumer's scheduler to move it into ``task`` (depth here means no scheduler runs).
        due_column="timestamp",
        time_unit="s",
        queue_column="queue",
    ),
)

# persist-queue's SQLite queues (persist-queue 1.x): one table per named queue,
# ``<kind>_<name>`` (SQLiteAckQueue: ack_queue_NAME; FILOSQLiteAckQueue: ack_filo_queue_NAME;
# UniqueAckQ: ack_unique_queue_NAME; SQLiteQueue: queue_NAME), so a named queue is a table.
# ``timestamp`` is the put time as epoch seconds (a float). The ack queues' ``status``: 0
# inited and 1 ready (nack'ed) wait, 2 unack is taken by a consumer (with no claim time and no
# owner), 5 acked, 9 ack_failed. persist-queue gives unacked rows back itself when a queue is
# opened with auto_resume (its default) or by resume_unack_tasks(): every unacked row, whether
# its consumer lives or not, so qadmin releases none.
_PERSIST_ACK = Profile(
    name="ack_queue",
    table="ack_queue",
    library="persist-queue",
    noun="item",
    id_column="_id",
    order_by="_id",
    time_column="timestamp",
    time_unit="s",
    state_column="status",
    pending=(0, 1),
    claimed=(2,),
    done=(5,),
    failed=(9,),
    no_release=(
        "persist-queue gives unacked items back itself, all of them, live consumer or not:"
        " resume_unack_tasks() (or opening the queue with auto_resume) while no consumer runs"
    ),
)
PERSIST_QUEUE_ACK = _shape(
    "persist-queue",
    ("ack_queue_*", "ack_unique_queue_*"),
    ("_id", "data", "timestamp", "status"),
    ("sqlite",),
    "live",
    _PERSIST_ACK,
)
PERSIST_QUEUE_ACK_FILO = _shape(
    "persist-queue",
    ("ack_filo_queue_*",),
    ("_id", "data", "timestamp", "status"),
    ("sqlite",),
    "live",
    dataclasses.replace(_PERSIST_ACK, dequeue_order=("_id DESC",)),
)
# SQLiteQueue (no acks): a get deletes the row, so every row waits.
PERSIST_QUEUE = _shape(
    "persist-queue",
    ("queue_*",),
    ("_id", "data", "timestamp"),
    ("sqlite",),
    "shape",
    Profile(
        name="queue",
        table="queue",
        library="persist-queue",
        noun="item",
        id_column="_id",
        order_by="_id",
        time_column="timestamp",
        time_unit="s",
    ),
)

SHAPES: tuple[LibraryShape, ...] = (
    PROCRASTINATE,
    PGQUEUER,
    KOMBU,
    DJANGO_Q2,
    PG_BOSS,
    GRAPHILE_WORKER,
    GRAPHILE_WORKER_VIEW,
    RIVER,
    OBAN,
    CHANCY,
    DRAMATIQ_PG,
    SOLID_QUEUE_READY,
    SOLID_QUEUE_SCHEDULED,
    SOLID_QUEUE_CLAIMED,
    GOOD_JOB,
    QUE,
    DELAYED_JOB,
    _hangfire_job(_HANGFIRE_PG, POSTGRESQL),
    _hangfire_job(_HANGFIRE_MSSQL, ("mssql",)),
    _hangfire_queue({**_HANGFIRE_PG, "table": "jobqueue"}, POSTGRESQL),
    _hangfire_queue({**_HANGFIRE_MSSQL, "table": "JobQueue"}, ("mssql",)),
    # django-tasks, huey, persist-queue
    DJANGO_TASKS,
    HUEY_TASK,
    HUEY_SCHEDULE,
    PERSIST_QUEUE_ACK_FILO,
    PERSIST_QUEUE_ACK,
    PERSIST_QUEUE,
)
