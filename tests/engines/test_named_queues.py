"""Named queues, due times, epochs and NULL-ness states, read as a DBA asks for them.

One hand-built table holds two named queues (``orders``, ``mail``) as job-queue libraries keep
them: jobs due now, jobs scheduled for later, a job waiting for its retry, a claimed job, a
finished one. Declared in the config like a user would, it is read per named queue by size,
inspect, check, claims and status on every live engine, and the figures are the rows' own:
depth counts only waiting jobs that are due, the oldest age is the oldest due job's (since its
due time), the not-due ones are counted apart.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from tests.conftest import Target
from tests.helpers import invoke_on

LIVE = ("sqlite", "postgresql", "mariadb", "mysql8")

DDL = {
    "sqlite": (
        "CREATE TABLE {t} (id INTEGER PRIMARY KEY, queue TEXT NOT NULL, status TEXT NOT NULL, "
        "run_at TIMESTAMP, created_at TIMESTAMP NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, "
        "claimed_at TIMESTAMP, worker TEXT)"
    ),
    "postgresql": (
        "CREATE TABLE {t} (id bigserial PRIMARY KEY, queue text NOT NULL, status text NOT NULL, "
        "run_at timestamptz, created_at timestamptz NOT NULL, attempts int NOT NULL DEFAULT 0, "
        "claimed_at timestamptz, worker text)"
    ),
    "mysql": (
        "CREATE TABLE {t} (id BIGINT AUTO_INCREMENT PRIMARY KEY, queue VARCHAR(64) NOT NULL, "
        "status VARCHAR(16) NOT NULL, run_at DATETIME(6) NULL, created_at DATETIME(6) NOT NULL, "
        "attempts INT NOT NULL DEFAULT 0, claimed_at DATETIME(6) NULL, worker VARCHAR(64))"
    ),
}

PROFILE = """
[tables.jobs]
state_column = "status"
pending = ["new"]
claimed = ["working"]
done = ["done"]
queue_column = "queue"
due_column = "run_at"
time_column = "created_at"
attempts_column = "attempts"
claimed_at_column = "claimed_at"
worker_column = "worker"
"""


def configured(target: Target, config: Path, *args: str) -> Result:
    """``args`` on ``target`` with the config file that names its queues."""
    return invoke_on(target, *args, "--config", str(config))


def as_json(target: Target, config: Path, *args: str, codes: tuple[int, ...] = (0,)) -> Any:
    result = configured(target, config, *args, "--format", "json")
    assert result.exit_code in codes, (args, result.exit_code, result.output)
    return json.loads(result.stdout)


def _family(target: Target) -> str:
    return "mysql" if target.label in ("mariadb", "mysql8") else target.label


def _sql(target: Target, statements: list[str]) -> None:
    """Statements on the target's own connection (times are UTC literals: the servers here
    run in UTC, and MariaDB's DATETIME is read in the session's time zone)."""
    engine = target.engine()
    try:
        for statement in statements:
            engine.run([statement], None, write=True)
    finally:
        engine.close()


def _table(target: Target) -> str:
    return f'"{target.schema}".jobs' if target.label == "postgresql" else "jobs"


def _at(delta_s: float) -> str:
    """A UTC time ``delta_s`` from now, as every engine reads a literal."""
    return (datetime.now(UTC) + timedelta(seconds=delta_s)).strftime("%Y-%m-%d %H:%M:%S")


def _fill(target: Target) -> None:
    rows = [
        # queue, status, run_at, created_at, attempts, claimed_at, worker
        ("orders", "new", _at(-600), _at(-7200), 0, None, None),
        ("orders", "new", _at(-300), _at(-7200), 0, None, None),
        ("orders", "new", _at(-60), _at(-7200), 0, None, None),
        ("orders", "new", _at(3600), _at(-10800), 0, None, None),  # scheduled for later
        ("orders", "new", _at(3600), _at(-10800), 0, None, None),
        ("orders", "new", _at(1800), _at(-10800), 2, None, None),  # waiting for its retry
        ("orders", "done", _at(-9000), _at(-9000), 1, None, None),
        ("mail", "new", None, _at(-30), 0, None, None),  # no due time: due, aged from created
        ("mail", "working", _at(-1200), _at(-1200), 1, _at(-1200), "w1"),
    ]
    values = []
    for row in rows:
        values.append(
            "("
            + ", ".join(
                "NULL" if v is None else (str(v) if isinstance(v, int) else f"'{v}'") for v in row
            )
            + ")"
        )
    _sql(
        target,
        [
            DDL[_family(target)].format(t=_table(target)),
            f"INSERT INTO {_table(target)} "
            "(queue, status, run_at, created_at, attempts, claimed_at, worker) "
            "VALUES " + ", ".join(values),
        ],
    )


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "qadmin.toml"
    path.write_text(PROFILE)
    return path


@pytest.fixture(params=LIVE)
def jobs(request: pytest.FixtureRequest, tmp_path: Path) -> Target:
    from tests.conftest import make_target

    target = make_target(request.param, request, tmp_path)
    _fill(target)
    return target


def test_depth_is_due_waiting_jobs_of_the_named_queue(jobs: Target, config: Path) -> None:
    orders = as_json(jobs, config, "size", "jobs", "--queue", "orders")
    assert (orders["depth"], orders["depth_exact"]) == (3, True)
    assert (orders["scheduled"], orders["retrying"]) == (2, 1)
    # since the oldest due job's due time (10 min), not its enqueue time (2 h)
    assert 590 <= orders["oldest_age_s"] < 900, orders
    mail = as_json(jobs, config, "size", "jobs", "--queue", "mail")
    assert (mail["depth"], mail["scheduled"], mail["retrying"], mail["claimed"]) == (1, 0, 0, 1)
    assert 25 <= mail["oldest_age_s"] < 300  # no due time: aged from its enqueue time
    whole = as_json(jobs, config, "size", "jobs")
    assert (whole["depth"], whole["scheduled"], whole["retrying"]) == (4, 2, 1)
    assert 590 <= whole["oldest_age_s"] < 900


def test_inspect_lists_each_named_queue(jobs: Target, config: Path) -> None:
    report = as_json(jobs, config, "inspect", "jobs", "--sample", "0", codes=(0,))
    lines = {q["queue"]: q for q in report["named_queues"]["queues"]}
    assert set(lines) == {"orders", "mail"}
    assert (lines["orders"]["depth"], lines["orders"]["scheduled"]) == (3, 2)
    assert (lines["orders"]["retrying"], lines["orders"]["running"]) == (1, 0)
    assert (lines["mail"]["depth"], lines["mail"]["running"], lines["mail"]["stale"]) == (1, 1, 1)


def test_check_and_claims_take_one_named_queue(jobs: Target, config: Path) -> None:
    # A shared server may add its own warnings (an old snapshot elsewhere, InnoDB's purge
    # lag): the queue's verdicts are read from the line, the exit code only where it must be.
    quiet = configured(jobs, config, "check", "jobs", "--queue", "orders", "--warn-depth", "4")
    assert quiet.exit_code in (0, 1) and "depth 3 >=" not in quiet.stdout, quiet.output
    assert "depth=3;4;" in quiet.stdout  # 3 due: the 3 not due do not count
    deep = configured(jobs, config, "check", "jobs", "--queue", "orders", "--warn-depth", "3")
    assert deep.exit_code == 1 and "depth 3 >= 3" in deep.stdout, deep.output
    stuck = configured(jobs, config, "check", "jobs", "--queue", "mail", "--stale-after", "5m")
    assert stuck.exit_code == 1 and "stale_claims" in stuck.stdout, stuck.output
    fine = configured(jobs, config, "check", "jobs", "--queue", "orders", "--stale-after", "5m")
    assert fine.exit_code in (0, 1) and "stale_claims:" not in fine.stdout, fine.output
    claims = as_json(jobs, config, "claims", "jobs", "--queue", "mail", "--stale-after", "5m")
    assert [c["claimed_by"] for c in claims] == ["w1"]
    none = as_json(jobs, config, "claims", "jobs", "--queue", "orders", "--stale-after", "5m")
    assert none == []


def test_status_shows_every_named_queue_worst_first(jobs: Target, config: Path) -> None:
    result = configured(jobs, config, "status", "--stale-after", "5m", "--format", "json")
    if jobs.label == "sqlite":  # a file of its own: the server engines hold others' queues
        assert result.exit_code == 1, result.output  # mail's stale claim: WARNING
    lines = json.loads(result.stdout)["lines"]
    ours = [line for line in lines if line["table"] == "jobs" and line["what"] == "declared"]
    assert [line["name"] for line in ours] == ["jobs[mail]", "jobs[orders]"]
    assert ours[0]["status"] == "WARNING" and "stale" in ours[0]["worst"]
    assert (ours[1]["depth"], ours[1]["depth_exact"]) == (3, True)
    # a line judges what check judges: on a shared server that may be server-wide state
    # (InnoDB's purge lag, another session's snapshot), never this queue's own trouble
    shared = ("purge_lag", "snapshot_held")
    assert ours[1]["status"] == "OK" or ours[1]["worst"].split(":")[0] in shared, ours[1]


def test_a_named_queue_on_a_table_that_holds_one_is_refused(jobs: Target, tmp_path: Path) -> None:
    plain = tmp_path / "plain.toml"
    plain.write_text(PROFILE.replace('queue_column = "queue"\n', ""))
    result = configured(jobs, plain, "size", "jobs", "--queue", "orders")
    assert result.exit_code == 2 and "--queue applies to tables that hold several" in result.stderr


# A table with no state column, as several Python libraries keep one: a job waits while
# dequeued_at is NULL, is done once finished_at is set, failed once failed_at is; its
# worker beats in a workers table. Times are integer epochs in milliseconds.
TASKS = {
    "sqlite": (
        "CREATE TABLE workers (name TEXT PRIMARY KEY, last_seen INTEGER NOT NULL)",
        "CREATE TABLE tasks (id INTEGER PRIMARY KEY, queue TEXT NOT NULL, "
        "enqueued INTEGER NOT NULL, dequeued_at INTEGER, finished_at INTEGER, "
        "failed_at INTEGER, worker TEXT)",
    ),
    "postgresql": (
        "CREATE TABLE {s}workers (name text PRIMARY KEY, last_seen bigint NOT NULL)",
        "CREATE TABLE {s}tasks (id bigserial PRIMARY KEY, queue text NOT NULL, "
        "enqueued bigint NOT NULL, dequeued_at bigint, finished_at bigint, "
        "failed_at bigint, worker text)",
    ),
    "mysql": (
        "CREATE TABLE workers (name VARCHAR(64) PRIMARY KEY, last_seen BIGINT NOT NULL)",
        "CREATE TABLE tasks (id BIGINT AUTO_INCREMENT PRIMARY KEY, queue VARCHAR(64) NOT NULL, "
        "enqueued BIGINT NOT NULL, dequeued_at BIGINT, finished_at BIGINT, "
        "failed_at BIGINT, worker VARCHAR(64))",
    ),
}

TASKS_PROFILE = """
[tables.tasks]
queue_column = "queue"
time_column = "enqueued"
claimed_at_column = "dequeued_at"
worker_column = "worker"
time_unit = "ms"

[tables.tasks.states]
failed = "failed_at IS NOT NULL"
done = "finished_at IS NOT NULL"
claimed = "dequeued_at IS NOT NULL"
pending = "dequeued_at IS NULL"

[tables.tasks.heartbeat]
table = "workers"
worker_key = "name"
beat_column = "last_seen"
"""


def _ms(delta_s: float) -> int:
    return int((datetime.now(UTC).timestamp() + delta_s) * 1000)


@pytest.fixture(params=LIVE)
def tasks(request: pytest.FixtureRequest, tmp_path: Path) -> Target:
    from tests.conftest import make_target

    target = make_target(request.param, request, tmp_path)
    prefix = f'"{target.schema}".' if target.label == "postgresql" else ""
    ddl = [d.format(s=prefix) for d in TASKS[_family(target)]]
    rows = [
        ("a", _ms(-90), None, None, None, None),
        ("a", _ms(-30), None, None, None, None),
        ("a", _ms(-600), _ms(-500), None, None, "alive"),  # its worker beats
        ("a", _ms(-600), _ms(-500), None, None, "dead"),  # its worker stopped an hour ago
        ("b", _ms(-5000), _ms(-4000), _ms(-3000), None, "alive"),
        ("b", _ms(-5000), _ms(-4000), None, _ms(-3000), "alive"),
        ("b", _ms(-10), None, None, None, None),
    ]
    values = ", ".join(
        "(" + ", ".join("NULL" if v is None else repr(v) for v in row) + ")" for row in rows
    )
    _sql(
        target,
        [
            *ddl,
            f"INSERT INTO {prefix}workers (name, last_seen) VALUES "
            f"('alive', {_ms(-1)}), ('dead', {_ms(-3600)})",
            f"INSERT INTO {prefix}tasks (queue, enqueued, dequeued_at, finished_at, failed_at, "
            f"worker) VALUES {values}",
        ],
    )
    return target


@pytest.fixture
def tasks_config(tmp_path: Path) -> Path:
    path = tmp_path / "tasks.toml"
    path.write_text(TASKS_PROFILE)
    return path


def test_states_from_null_columns_epochs_and_a_workers_table(
    tasks: Target, tasks_config: Path
) -> None:
    a = as_json(tasks, tasks_config, "size", "tasks", "--queue", "a")
    assert (a["depth"], a["claimed"], a["done"], a["failed"]) == (2, 2, 0, 0)
    assert 85 <= a["oldest_age_s"] < 300, a  # epoch ms read as ms
    b = as_json(tasks, tasks_config, "size", "tasks", "--queue", "b")
    assert (b["depth"], b["claimed"], b["done"], b["failed"]) == (1, 0, 1, 1)
    claims = as_json(tasks, tasks_config, "claims", "tasks", "--queue", "a", "--stale-after", "1m")
    assert [c["claimed_by"] for c in claims] == ["dead"]  # the beating worker's job is not stale
    assert 480 <= claims[0]["claimed_for_s"] < 900


def test_a_bad_states_condition_is_one_line(tasks: Target, tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(TASKS_PROFILE.replace("failed_at IS NOT NULL", "failed_at = 1; DROP TABLE x"))
    result = configured(tasks, bad, "size", "tasks")
    assert result.exit_code == 2, result.output
    assert "write COLUMN IS [NOT] NULL" in result.stderr and len(result.stderr.splitlines()) == 1
    missing = tmp_path / "missing.toml"
    missing.write_text(TASKS_PROFILE.replace("finished_at IS NOT NULL", "nosuch IS NOT NULL"))
    result = configured(tasks, missing, "size", "tasks")
    assert result.exit_code == 2 and "no column 'nosuch'" in result.stderr, result.output


def test_claims_without_a_claim_time_are_never_an_empty_ok(tasks: Target, tmp_path: Path) -> None:
    """A claimed state but no claim time and no heartbeat (persist-queue's unacked rows)."""
    undated = tmp_path / "undated.toml"
    text = TASKS_PROFILE.split("[tables.tasks.heartbeat]")[0]
    undated.write_text(text.replace('claimed_at_column = "dequeued_at"\n', ""))
    listed = configured(tasks, undated, "claims", "tasks", "--queue", "a", "--format", "json")
    assert listed.exit_code == 1, listed.output
    assert len(json.loads(listed.stdout)) == 2 and "age is unknown" in listed.stderr
    checked = configured(tasks, undated, "check", "tasks", "--queue", "a")
    assert checked.exit_code == 1 and "claims_unread" in checked.stdout, checked.output


def test_epoch_times_in_another_unit_are_one_line(tasks: Target, tmp_path: Path) -> None:
    """Epoch milliseconds read as seconds: a year past 9999, one line, never a traceback."""
    wrong = tmp_path / "wrong.toml"
    wrong.write_text(TASKS_PROFILE.replace('time_unit = "ms"', 'time_unit = "s"'))
    result = configured(tasks, wrong, "size", "tasks", "--queue", "a")
    assert result.exit_code == 2, result.output
    assert "is not an epoch in s" in result.stderr and len(result.stderr.splitlines()) == 1
    checked = configured(tasks, wrong, "check", "tasks", "--queue", "a")
    assert checked.exit_code == 3 and checked.stdout.startswith("QADMIN UNKNOWN"), checked.output


def test_naive_utc_times_are_read_as_utc_whatever_the_session_zone(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Oban writes UTC into timestamp-without-time-zone columns: a session in Tokyo must
    not age its jobs by nine hours."""
    from tests.conftest import make_target

    target = make_target("postgresql", request, tmp_path)
    table = f'"{target.schema}".naive'
    _sql(
        target,
        [
            f"CREATE TABLE {table} (id bigserial PRIMARY KEY, at timestamp NOT NULL)",
            f"INSERT INTO {table} (at) VALUES (timezone('UTC', now()) - interval '20 minutes')",
        ],
    )
    path = tmp_path / "naive.toml"
    path.write_text('[tables.naive]\ntime_column = "at"\nnaive_timezone = "UTC"\n')
    monkeypatch.setenv("PGOPTIONS", "-c TimeZone=Asia/Tokyo")
    size = as_json(target, path, "size", "naive")
    assert 1190 <= size["oldest_age_s"] < 1500, size
    path.write_text('[tables.naive]\ntime_column = "at"\n')
    session = as_json(target, path, "size", "naive")
    assert session["oldest_age_s"] > 9 * 3600  # read in the session's zone: 9 h too old


def test_status_fits_a_terminal_and_names_what_it_cannot_read(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """80 columns on a terminal, however long a queue's name or its worst finding; a
    [tables.NAME] entry qadmin cannot use is a line saying why (UNKNOWN), one whose table this
    connection lacks is a note (one config serves several servers); the rest are read."""
    from tests.conftest import make_target

    target = make_target("sqlite", request, tmp_path)
    _fill(target)
    long_name = "jobs_with_a_rather_long_name_for_a_queue_table_kept_by_some_team"
    _sql(target, [f"ALTER TABLE jobs RENAME TO {long_name}"])
    config = tmp_path / "wide.toml"
    config.write_text(
        PROFILE.replace("[tables.jobs]", f'[tables.jobs]\ntable = "{long_name}"')
        + '\n[tables.gone]\ntable = "no_such_table"\n'
        + '\n[tables.typo]\nstate_colum = "st"\n'
    )
    monkeypatch.setenv("COLUMNS", "80")
    shown = configured(target, config, "status", "--stale-after", "5m", "--format", "table")
    assert shown.exit_code == 3, shown.output  # UNKNOWN: one entry cannot be used
    lines = shown.stdout.splitlines()
    assert lines and max(len(line) for line in lines) <= 80, shown.stdout
    assert "jobs[mail]" in shown.stdout and "jobs[orders]" in shown.stdout
    assert "[tables.gone] not read here" in shown.stderr
    data = json.loads(configured(target, config, "status", "--format", "json").stdout)["lines"]
    typo = next(line for line in data if line["name"] == "typo")
    assert typo["status"] == "UNKNOWN" and "state_colum" in typo["error"]
    assert not any(line["name"] == "gone" for line in data)


def test_rows_that_name_no_queue_are_a_queue_too(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Delayed::Job's default queue is a NULL queue name: inspect and status show those rows
    as TABLE[], and --queue-null reads them."""
    from tests.conftest import make_target

    target = make_target("sqlite", request, tmp_path)
    _sql(
        target,
        [
            "CREATE TABLE dj (id INTEGER PRIMARY KEY, queue TEXT, st TEXT NOT NULL)",
            "INSERT INTO dj (queue, st) VALUES (NULL, 'new'), (NULL, 'new'), ('mail', 'new')",
        ],
    )
    config = tmp_path / "dj.toml"
    config.write_text(
        '[tables.dj]\nqueue_column = "queue"\nstate_column = "st"\npending = ["new"]\n'
    )
    report = as_json(target, config, "inspect", "dj", "--sample", "0")
    lines = {q["queue"]: q["depth"] for q in report["named_queues"]["queues"]}
    assert lines == {"mail": 1, None: 2}
    assert as_json(target, config, "size", "dj", "--queue-null")["depth"] == 2
    status = json.loads(configured(target, config, "status", "--format", "json").stdout)["lines"]
    assert {line["name"]: line["depth"] for line in status} == {"dj[mail]": 1, "dj[]": 2}


def test_a_heartbeat_table_qadmin_cannot_read_is_one_line(tasks: Target, tmp_path: Path) -> None:
    """A live worker's claim must never look stale because its workers table was misnamed."""
    for text, said in (
        ('table = "workers"', 'table = "nosuch_workers"'),
        ('beat_column = "last_seen"', 'beat_column = "nosuchcol"'),
        ('table = "workers"', 'table = "elsewhere.workers"'),
    ):
        bad = tmp_path / "bad_heartbeat.toml"
        bad.write_text(TASKS_PROFILE.replace(text, said))
        for command in ("claims", "requeue"):
            result = configured(tasks, bad, command, "tasks", "--queue", "a", "--dry-run")
            if command == "claims":
                result = configured(tasks, bad, command, "tasks", "--queue", "a")
            assert result.exit_code == 2, (said, result.output)
            assert "heartbeat" in result.stderr and len(result.stderr.splitlines()) == 1


def test_a_due_time_that_is_not_a_time_is_one_line(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Epoch milliseconds without --time-unit, and text that is no date, in a SQLite due
    column: one line naming the value (check UNKNOWN), never depth 0 and OK."""
    from tests.conftest import make_target

    target = make_target("sqlite", request, tmp_path)
    now_ms = _ms(0)
    _sql(
        target,
        [
            "CREATE TABLE ep (id INTEGER PRIMARY KEY, st TEXT NOT NULL, run_at INTEGER)",
            f"INSERT INTO ep (st, run_at) VALUES ('new', {now_ms - 60_000}), "
            f"('new', {now_ms + 3_600_000})",
            "CREATE TABLE junk (id INTEGER PRIMARY KEY, st TEXT NOT NULL, run_at TEXT)",
            "INSERT INTO junk (st, run_at) VALUES ('new', 'garbage'), ('new', NULL)",
        ],
    )
    config = tmp_path / "due.toml"
    config.write_text(
        '[tables.ep]\nstate_column = "st"\npending = ["new"]\ndue_column = "run_at"\n'
        '[tables.junk]\nstate_column = "st"\npending = ["new"]\ndue_column = "run_at"\n'
    )
    for name in ("ep", "junk"):
        size = configured(target, config, "size", name)
        assert size.exit_code == 2, size.output
        assert f"{name}.run_at" in size.stderr and len(size.stderr.splitlines()) == 1
        checked = configured(target, config, "check", name, "--sample", "0")
        assert checked.exit_code == 3 and checked.stdout.startswith("QADMIN UNKNOWN")
    config.write_text(
        config.read_text().replace(
            'due_column = "run_at"\n[tables.junk]',
            'due_column = "run_at"\ntime_unit = "ms"\n[tables.junk]',
        )
    )
    fixed = as_json(target, config, "size", "ep")
    assert (fixed["depth"], fixed["scheduled"]) == (1, 1)


def test_a_threshold_whose_figure_was_not_read_is_never_ok(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """110,000 waiting rows: the oldest is not read (more than 10,000 due, no (state, time)
    index); --crit-oldest-age cannot be called met because --crit-depth was."""
    from tests.conftest import make_target

    target = make_target("postgresql", request, tmp_path)
    table = f'"{target.schema}".big'
    _sql(
        target,
        [
            f"CREATE TABLE {table} (id bigserial PRIMARY KEY, st text NOT NULL, "
            "at timestamptz NOT NULL)",
            f"CREATE INDEX ON {table} (st)",
            f"INSERT INTO {table} (st, at) SELECT 'new', now() - interval '2 hours' "
            "FROM generate_series(1, 110000)",
            f"ANALYZE {table}",
        ],
    )
    config = tmp_path / "big.toml"
    config.write_text('[tables.big]\nstate_column = "st"\npending = ["new"]\ntime_column = "at"\n')
    result = configured(
        target,
        config,
        "check",
        "big",
        "--crit-depth",
        "10000000",
        "--crit-oldest-age",
        "1h",
        "--sample",
        "0",
    )
    assert result.exit_code == 3, result.output
    assert "oldest_age not evaluable: oldest waiting row not read" in result.stdout


def test_failed_jobs_only_a_planner_can_guess_are_an_estimate_never_paged_on(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """A tester's hand-built table of 200,000 jobs, no index on its status, never analyzed,
    none failed: the failed count was the planner's default guess (410) shown as a floor,
    "dead at least 410 >= 100", CRITICAL. It is an estimate: status shows it with ~, check
    does not judge it (the truth may be anything from 0: UNKNOWN, never CRITICAL on a guess)
    and metrics say its quality."""
    from tests.conftest import make_target

    target = make_target("postgresql", request, tmp_path)
    table = f'"{target.schema}".myjobs'
    _sql(
        target,
        [
            f"CREATE TABLE {table} (id bigserial PRIMARY KEY, status text NOT NULL, "
            "at timestamptz NOT NULL DEFAULT now())",
            f"INSERT INTO {table} (status) SELECT 'done' FROM generate_series(1, 200000)",
        ],
    )
    config = tmp_path / "my.toml"
    config.write_text(
        '[tables.myjobs]\nstate_column = "status"\npending = ["new"]\ndone = ["done"]\n'
        'failed = ["error"]\ntime_column = "at"\n'
    )
    size = as_json(target, config, "size", "myjobs")
    assert size["failed"] and size["failed"] > 0, "the planner's guess, not a count"
    checked = configured(target, config, "check", "myjobs", "--crit-dead", "100", "--sample", "0")
    assert checked.exit_code == 3, checked.output
    assert "CRITICAL" not in checked.stdout and "dead not evaluable" in checked.stdout
    listed = json.loads(configured(target, config, "status", "--format", "json").stdout)
    [line] = [row for row in listed["lines"] if row["table"] == "myjobs"]
    assert line["dead_quality"] == "estimate", line
    scraped = configured(target, config, "metrics").stdout
    assert any(
        m.startswith("qadmin_queue_quality{")
        and 'figure="dead"' in m
        and 'table="myjobs"' in m
        and 'quality="estimate"' in m
        for m in scraped.splitlines()
    ), scraped


def test_a_misspelt_named_queue_is_never_a_silent_ok(jobs: Target, config: Path) -> None:
    result = configured(jobs, config, "check", "jobs", "--queue", "ordres", "--sample", "0")
    assert result.exit_code == 1 and "queue_unseen" in result.stdout, result.output
    assert "'ordres'" in result.stdout
    real = configured(jobs, config, "check", "jobs", "--queue", "orders", "--sample", "0")
    assert "queue_unseen" not in real.stdout


def test_one_busy_named_queue_does_not_inflate_the_others(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """120,000 waiting jobs in queue bulk, 5 in default, none due in mailers, with the
    library's (state, queue, ...) index: each quiet queue is counted through it, exactly (the
    planner split the state's rows evenly: 51,300 for a queue of 5), the busy one a floor."""
    from tests.conftest import make_target

    target = make_target("postgresql", request, tmp_path)
    table = f'"{target.schema}".jobs'
    _sql(
        target,
        [
            f"CREATE TABLE {table} (id bigserial PRIMARY KEY, state text NOT NULL, "
            "queue text NOT NULL, run_at timestamptz NOT NULL)",
            f"CREATE INDEX ON {table} (state, queue, run_at, id)",
            f"INSERT INTO {table} (state, queue, run_at) SELECT 'available', 'bulk', "
            "now() - interval '1 minute' FROM generate_series(1, 120000)",
            f"INSERT INTO {table} (state, queue, run_at) SELECT 'available', 'default', "
            "now() - interval '30 minutes' FROM generate_series(1, 5)",
            f"INSERT INTO {table} (state, queue, run_at) SELECT 'scheduled', 'mailers', "
            "now() + interval '1 day' FROM generate_series(1, 3)",
            f"ANALYZE {table}",
        ],
    )
    config = tmp_path / "busy.toml"
    config.write_text(
        '[tables.jobs]\nstate_column = "state"\npending = ["available"]\n'
        'scheduled = ["scheduled"]\nqueue_column = "queue"\ndue_column = "run_at"\n'
    )
    quiet = as_json(target, config, "size", "jobs", "--queue", "default")
    assert (quiet["depth"], quiet["depth_exact"]) == (5, True), quiet
    assert 1790 <= quiet["oldest_age_s"] < 2400
    idle = as_json(target, config, "size", "jobs", "--queue", "mailers")
    assert (idle["depth"], idle["depth_exact"], idle["scheduled"]) == (0, True, 3), idle
    busy = configured(
        target, config, "check", "jobs", "--queue", "bulk", "--crit-depth", "100", "--sample", "0"
    )
    # past the count's 100,001: the planner's estimate when higher, else a floor; never exact
    assert busy.exit_code == 2, busy.output
    assert "depth ~" in busy.stdout or "depth at least 100001" in busy.stdout


def test_epoch_times_in_a_smaller_unit_are_one_line(tasks: Target, tmp_path: Path) -> None:
    """Epoch milliseconds read as microseconds: January 1970, an age of 56 years that check
    judged silently; now one line naming the unit, exit 2 (check UNKNOWN)."""
    wrong = tmp_path / "wrong.toml"
    wrong.write_text(TASKS_PROFILE.replace('time_unit = "ms"', 'time_unit = "us"'))
    result = configured(tasks, wrong, "size", "tasks", "--queue", "a")
    assert result.exit_code == 2, result.output
    assert "is not an epoch in us: it reads as 1970" in result.stderr, result.stderr
    assert len(result.stderr.splitlines()) == 1
    checked = configured(tasks, wrong, "check", "tasks", "--queue", "a")
    assert checked.exit_code == 3 and checked.stdout.startswith("QADMIN UNKNOWN"), checked.output


def test_status_over_a_big_job_table_never_scans_it(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """110,000 finished jobs in three named queues, then each queue's 3 ready jobs, 2
    running and, last in the heap, its 6,000 jobs scheduled for tomorrow (the state an enum,
    as Oban's and River's are), with the library's (state, queue, ...) index. status reads
    every named queue's states through the index: no sequential scan of the table, by the
    server's own counter. Two traps it fell into: the server kept a generic plan for a
    bounded count of a state after five runs (psycopg prepares a statement run five times)
    and scanned for it; the one not-due value read to check the due column, and the probe
    for any row of a named queue (a queue whose rows all lie at the table's end), were
    planned as LIMIT 1 scans that met every other job first."""
    from qadmin.ops import status
    from tests.conftest import make_target

    target = make_target("postgresql", request, tmp_path)
    table = f'"{target.schema}".jobs'
    queues = ("q1", "q2", "q3")
    states = ("available", "scheduled", "executing", "retryable", "done", "discarded", "cancelled")
    fill = [
        f'CREATE TYPE "{target.schema}".job_state AS ENUM ({", ".join(map(repr, states))})',
        f'CREATE TABLE {table} (id bigserial PRIMARY KEY, state "{target.schema}".job_state '
        "NOT NULL, "
        "queue text NOT NULL, run_at timestamptz NOT NULL, created_at timestamptz NOT NULL)",
        f"CREATE INDEX ON {table} (state, queue, run_at, id)",
        f"INSERT INTO {table} (state, queue, run_at, created_at) SELECT 'done', "
        "'q' || (1 + g % 3), now() - interval '1 day', now() - interval '1 day' "
        "FROM generate_series(1, 110000) AS g",
    ]
    for state, offset, n in (
        ("available", "- interval '5 minutes'", 3),
        ("scheduled", "+ interval '1 day'", 6000),
        ("executing", "- interval '2 minutes'", 2),
    ):
        fill += [
            f"INSERT INTO {table} (state, queue, run_at, created_at) SELECT '{state}', '{q}', "
            f"now() {offset}, now() - interval '10 minutes' FROM generate_series(1, {n})"
            for q in queues
        ]
    # and last a queue of 30,000 finished jobs and one scheduled: all its rows at the end
    fill += [
        f"INSERT INTO {table} (state, queue, run_at, created_at) SELECT 'done', 'q4', "
        "now() - interval '1 day', now() - interval '1 day' FROM generate_series(1, 30000)",
        f"INSERT INTO {table} (state, queue, run_at, created_at) "
        "VALUES ('scheduled', 'q4', now() + interval '1 day', now())",
    ]
    _sql(target, [*fill, f"ANALYZE {table}"])
    declared = {
        "jobs": {
            "state_column": "state",
            "pending": ["available"],
            "scheduled": ["scheduled"],
            "retrying": ["retryable"],
            "claimed": ["executing"],
            "done": ["done"],
            "failed": ["discarded", "cancelled"],
            "queue_column": "queue",
            "due_column": "run_at",
            "time_column": "created_at",
        }
    }
    engine = target.engine()
    try:

        def scans() -> int:
            engine.run(["SELECT pg_stat_force_next_flush()"])  # flushed when the session idles
            rows = engine.query(
                "SELECT seq_scan FROM pg_stat_user_tables "
                "WHERE schemaname = :s AND relname = 'jobs'",
                {"s": target.schema},
            )
            return int(rows[0]["seq_scan"])

        before = scans()
        found = status.gather(engine, declared, schema=target.schema)
        assert scans() == before, "status scanned the job table"
    finally:
        engine.close()
    lines = {line.queue: line for line in found.lines}
    assert sorted(lines) == [*queues, "q4"], found.lines
    for queue in queues:
        line = lines[queue]
        assert (line.depth, line.depth_exact, line.scheduled) == (3, True, 6000), line
        assert line.scheduled_quality == "exact", line
    assert (lines["q4"].depth, lines["q4"].depth_exact, lines["q4"].scheduled) == (0, True, 1)
