"""Generated command lines, DSNs and config files: every run ends with a documented exit code,
one line on stderr when it fails, no traceback, and no secret in any output."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import invoke

SECRETS = (
    "FUZZ-pg-Secret1",
    "FUZZ-my-Secret2",
    "FUZZ-ms-Secret3",
    "FUZZ-cfg-Secret4",
    "FUZZ-env-Secret5",
)
# DSNs that reach qadmin through the environment instead of the command line.
ENV_DSNS = [
    f"postgresql://u:{SECRETS[4]}@127.0.0.1:1/db",
    f"mysql://root:{SECRETS[4]}@127.0.0.1:1/x",
    f"mssql://sa:{SECRETS[4]}@127.0.0.1:1/db?driver=FreeTDS",
    f"postgresql://u:{SECRETS[4]}@127.0.0.1:bad/db",
]
COMMANDS = [
    "create",
    "list",
    "drop",
    "purge",
    "push",
    "pop",
    "peek",
    "ack",
    "fail",
    "inspect",
    "explain",
    "size",
    "ghosts",
    "fragmentation",
    "locks",
    "claims",
    "requeue",
    "repair",
    "check",
    "watermark",
    "resize",
    "convert",
    "export",
    "archive",
    "load",
    "tail",
    "collect",
    "demo",
    "ping",
    "conn",
    "completion",
    "nosuchcommand",
]
NAMES = [
    "q",
    "orders_q",
    "orders_q; drop table x",
    "x" * 200,
    "Ünï",
    "o'q",
    'o"q',
    "a-b",
    "",
    "qadmin_queues",
    "r",
    "c",
    "w",
    "advance",
    "repair",
]
VALUES = [
    "0",
    "-1",
    "1",
    "3",
    "99999999999999999999",
    "abc",
    "5m",
    "1.5",
    "",
    "\x00",
    "json",
    "csv",
    "yaml",
    "fifo",
    "ring",
    "claim",
    "nosuchkind",
    "bash",
    "tcsh",
]
OPTIONS = [
    "--count",
    "-n",
    "--format",
    "--kind",
    "--capacity",
    "--strict",
    "--yes",
    "--dry-run",
    "--wait",
    "--stale-after",
    "--deep",
    "--max-pages",
    "--sample",
    "--warn-depth",
    "--crit-depth",
    "--schema",
    "--connect-timeout",
    "--lock-timeout",
    "--statement-timeout",
    "--raw",
    "--lines",
    "--error",
    "--retry",
    "--delay",
    "--due",
    "--all",
    "--table",
    "--order-by",
    "--older-than",
    "--to",
    "--watermark",
    "--payload-column",
    "--id-column",
    "--bogus",
    "-v",
    "--help",
]


def dsns(tmp: Path) -> list[str]:
    return [
        f"sqlite:///{tmp / 'fuzz.db'}",
        "sqlite:///:memory:",
        f"postgresql://u:{SECRETS[0]}@127.0.0.1:1/db",
        f"mysql://root:{SECRETS[1]}@127.0.0.1:1/x",
        f"mssql://sa:{SECRETS[2]}@127.0.0.1:1/db?driver=FreeTDS",
        f"DRIVER={{FreeTDS}};SERVER=127.0.0.1;PORT=1;UID=sa;PWD={SECRETS[2]}",
        "nope://x/y",
        "",
        "postgresql://h:99999/db",
        "sqlite://host/x",
        "postgresql://[::1/db",
        f"postgresql://u:{SECRETS[0]}@127.0.0.1:notaport/db",
        f"postgresql://u:{SECRETS[0]}/@x@127.0.0.1:1/db",
        f"mysql://root:a@{SECRETS[1]}@127.0.0.1:notaport/x",
        f"postgresql://u@127.0.0.1:1/db?sslpassword={SECRETS[3]}",
    ]


def configs(tmp: Path) -> list[str]:
    (tmp / "ok.toml").write_text(
        f'default = "a"\n[connections.a]\ndsn = "sqlite:///{tmp / "cfg.db"}"\n'
        f'[connections.b]\ndsn = "postgresql://u:{SECRETS[3]}@127.0.0.1:1/db"\n'
    )
    (tmp / "bad.toml").write_text("this is = = not toml [")
    (tmp / "shape.toml").write_text("[connections]\nx = 1\n")
    return [str(tmp / n) for n in ("ok.toml", "bad.toml", "shape.toml", "missing.toml")]


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> tuple[list[str], list[str], Path]:
    tmp = tmp_path_factory.mktemp("fuzz")
    db = f"sqlite:///{tmp / 'fuzz.db'}"
    for name, kind, extra in (
        ("q", "fifo", []),
        ("r", "ring", ["--capacity", "2"]),
        ("c", "claim", []),
        ("w", "fifo", ["--watermark"]),
    ):
        invoke("create", name, "--kind", kind, *extra, "--dsn", db)
    invoke("push", "q", "a", "b", "--dsn", db)
    (tmp / "load.jsonl").write_text('{"payload": "x"}\n{"payload_base64": "!!"}\n')
    return dsns(tmp), configs(tmp), tmp


def argv(draw: st.DrawFn, dsn_pool: list[str], config_pool: list[str], tmp: Path) -> list[str]:
    command = draw(st.sampled_from(COMMANDS))
    args = [command]
    if command == "conn":
        args.append(draw(st.sampled_from(["list", "nope", "-v"])))
    for _ in range(draw(st.integers(0, 6))):
        choice = draw(st.integers(0, 5))
        if choice == 0:
            args.append(draw(st.sampled_from(NAMES)))
        elif choice == 1:
            args += [draw(st.sampled_from(OPTIONS)), draw(st.sampled_from(VALUES))]
        elif choice == 2:
            args.append(draw(st.sampled_from(OPTIONS)))
        elif choice == 3:
            args += ["--dsn", draw(st.sampled_from(dsn_pool))]
        elif choice == 4:
            args += ["--config", draw(st.sampled_from(config_pool))]
        else:
            args.append(draw(st.text(max_size=30)))
    if command == "tail":
        args += ["--count", "1", "--interval", "0.2"]
    if command == "collect":
        args += ["--to", str(tmp / "history")]
    if command in ("export", "archive"):  # the last --to wins: never write outside tmp
        args += ["--to", str(tmp / f"{command}.parquet")]
    if command == "load":
        args += ["--from", str(tmp / "load.jsonl")]
    if "--wait" in args:
        args[args.index("--wait") + 1 : args.index("--wait") + 2] = ["0.1"]
    if draw(st.integers(0, 4)) == 0:
        args.insert(0, "--debug")
    return args


@settings(
    max_examples=500,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_generated_command_lines(world, data):
    dsn_pool, config_pool, tmp = world
    args = data.draw(st.composite(lambda draw: argv(draw, dsn_pool, config_pool, tmp))())
    env = {"QADMIN_HOME": str(tmp / "home")}
    if data.draw(st.integers(0, 3)) == 0:
        env["QADMIN_DSN"] = data.draw(st.sampled_from(ENV_DSNS))
    # --debug exports QADMIN_DEBUG for Spark to read: one example's must not leak into the next.
    env["QADMIN_DEBUG"] = None
    result = invoke(*args, env=env)
    stderr, stdout = result.stderr, result.stdout
    debug = args[0] == "--debug"
    command = args[1] if debug and len(args) > 1 else args[0]
    assert "internal error" not in stderr, (args, stderr)
    allowed = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9} if command != "check" else {0, 1, 2, 3}
    assert result.exit_code in allowed, (args, result.exit_code, stderr)
    if not debug:
        assert "Traceback" not in stderr and "Traceback" not in stdout, args
        if result.exit_code != 0 and command != "check":
            assert len(stderr.strip().splitlines()) <= 1, (args, stderr)
    for secret in SECRETS:
        assert secret not in stdout and secret not in stderr, (args, secret)
