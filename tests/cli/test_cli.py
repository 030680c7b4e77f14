"""The CLI through click's runner: formats, exit codes, one-line errors, confirmations."""

from __future__ import annotations

import json

import pytest

from tests.helpers import invoke, run
from tests.helpers import one_line as one_line_error


@pytest.fixture
def db(tmp_path) -> list[str]:
    return ["--dsn", f"sqlite:///{tmp_path / 'q.db'}"]


def test_create_push_pop_in_every_format(db):
    assert run("create", "orders_q", "--kind", "fifo", *db).exit_code == 0
    pushed = run("push", "orders_q", "a", "b", "c", "--format", "json", *db)
    assert [r["id"] for r in json.loads(pushed.stdout)] == [1, 2, 3]
    csv_out = run("peek", "orders_q", "--format", "csv", *db).stdout.splitlines()
    assert csv_out[0] == "id,enqueued_at,payload" and csv_out[1].endswith(",a")
    plain = run("pop", "orders_q", "--format", "plain", *db).stdout
    assert plain.splitlines()[0].split() == ["id", "enqueued_at", "payload"]
    popped = json.loads(run("pop", "orders_q", "-n", "5", "--format", "json", *db).stdout)
    assert [(r["payload"], r["encoding"]) for r in popped] == [("b", "utf-8"), ("c", "utf-8")]


def test_empty_pop_exits_3_and_prints_an_empty_json_list(db):
    run("create", "q", "--kind", "fifo", *db)
    result = run("pop", "q", "--format", "json", *db)
    assert result.exit_code == 3
    assert json.loads(result.stdout) == []
    assert one_line_error(result) == "qadmin: queue q is empty"


def test_full_ring_exits_4_after_printing_what_went_in(db):
    run("create", "r", "--kind", "ring", "--capacity", "2", *db)
    result = run("push", "r", "a", "b", "c", "--format", "json", *db)
    assert result.exit_code == 4
    assert len(json.loads(result.stdout)) == 2
    assert "full" in one_line_error(result)


@pytest.mark.parametrize(
    "args,code",
    [
        (["pop", "nosuch"], 5),
        (["pop", "orders_q; drop table x"], 2),
        (["pop", "x" * 200], 2),
        (["pop", "Ünï"], 2),
        (["create", "q", "--kind", "ring"], 2),
        (["create", "q", "--kind", "fifo", "--capacity", "3"], 2),
        (["create", "q", "--kind", "heap", "--strict"], 2),
        (["create", "q", "--kind", "nosuchkind"], 2),
        (["pop", "q", "--count", "0"], 2),
        (["pop", "q", "--nosuchoption"], 2),
    ],
)
def test_bad_input_gets_one_line_and_its_exit_code(db, args, code):
    run("create", "orders_q", "--kind", "fifo", *db)
    result = run(*args, *db)
    assert result.exit_code == code, result.stderr
    assert one_line_error(result).startswith("qadmin: error: ")


def test_unknown_scheme_and_unreachable_server():
    bad = run("list", "--dsn", "oracle://u:pw@h/db")
    assert bad.exit_code == 2 and "unknown DSN scheme" in one_line_error(bad)
    down = run("list", "--dsn", "postgresql://u:hunter2@127.0.0.1:1/db")
    assert down.exit_code == 6
    assert "hunter2" not in down.stderr and "cannot connect" in one_line_error(down)


def test_wrong_kind_for_command(db):
    run("create", "f", "--kind", "fifo", *db)
    result = run("ack", "f", "1", *db)
    assert result.exit_code == 2 and "claim queues" in one_line_error(result)


def test_claim_cycle_through_the_cli(db):
    run("create", "c", "--kind", "claim", *db)
    run("push", "c", "job", *db)
    claimed = json.loads(run("pop", "c", "--format", "json", "--worker", "me", *db).stdout)[0]
    assert claimed["attempts"] == 1
    assert run("fail", "c", str(claimed["id"]), "--error", "boom", "--retry", *db).exit_code == 0
    again = json.loads(run("pop", "c", "--format", "json", *db).stdout)[0]
    assert again["attempts"] == 2
    assert run("ack", "c", str(again["id"]), *db).exit_code == 0
    assert run("ack", "c", str(again["id"]), *db).exit_code == 5


def test_push_from_stdin_lines_file_and_raw_pop_is_binary_safe(db, tmp_path):
    run("create", "b", "--kind", "fifo", *db)
    assert run("push", "b", "--lines", *db, input="one\r\ntwo\r\n").exit_code == 0  # CRLF
    blob = bytes(range(256)) * 4
    (tmp_path / "blob.bin").write_bytes(blob)
    assert run("push", "b", "--file", str(tmp_path / "blob.bin"), *db).exit_code == 0
    texts = [
        r["payload"] for r in json.loads(run("pop", "b", "-n", "2", "--format", "json", *db).stdout)
    ]
    assert texts == ["one", "two"]
    raw = invoke("pop", "b", "--raw", *db)
    assert raw.stdout_bytes == blob


def test_binary_payload_in_json_is_base64(db):
    run("create", "b", "--kind", "fifo", *db)
    run("push", "b", *db, input=b"\xff\xfe\x00")
    row = json.loads(run("pop", "b", "--format", "json", *db).stdout)[0]
    assert row["encoding"] == "base64" and row["payload"] == "//4A"


def test_destructive_commands_need_yes_off_a_tty_and_dry_run_changes_nothing(db):
    run("create", "d", "--kind", "fifo", *db)
    run("push", "d", "a", "b", *db)
    refused = run("purge", "d", *db)
    assert refused.exit_code == 2 and "--yes" in one_line_error(refused)
    dry = run("purge", "d", "--dry-run", "--format", "json", *db)
    assert json.loads(dry.stdout)["messages"] == 2
    assert len(json.loads(run("peek", "d", "--format", "json", *db).stdout)) == 2
    drop_dry = run("drop", "d", "--dry-run", *db)
    assert "DROP TABLE" in drop_dry.stdout
    assert run("drop", "d", *db).exit_code == 2
    assert run("drop", "d", "--yes", *db).exit_code == 0
    assert run("peek", "d", *db).exit_code == 5


def test_list_and_inspect(db):
    run("create", "a_q", "--kind", "ring", "--capacity", "8", *db)
    run("push", "a_q", "x", *db)
    listed = json.loads(run("list", "--format", "json", *db).stdout)
    assert listed == [
        {
            "name": "a_q",
            "kind": "ring",
            "capacity": 8,
            "strict": False,
            "watermark": False,
            "max_attempts": None,
            "created_at": listed[0]["created_at"],
            "state": "ready",
            "paused_at": None,
        }
    ]
    info = json.loads(run("inspect", "a_q", "--format", "json", *db).stdout)
    assert info["size"]["depth"] == 1 and info["size"]["depth_exact"] is True
    assert info["kind"] == "ring" and info["engine"] == "sqlite"
    assert info["size"]["ring_fill"] == 0.125


def test_demo_runs_on_the_embedded_default_with_no_configuration():
    result = run("demo", "--format", "json")
    assert result.exit_code == 0, result.stderr
    info = json.loads(result.stdout)
    assert info["queue"] == "orders_q" and info["size"]["depth"] == 7
    assert info["engine"] == "sqlite" and info["findings"] == []


def test_demo_leaves_a_real_orders_q_alone(tmp_path, monkeypatch):
    """A tester's DBA followed the tour (orders_q on the config's default server), then ran
    demo: it popped three real orders and pushed ten fake ones. demo now uses the embedded
    file whatever QADMIN_DSN and the config's default say, and refuses an orders_q it did
    not make (exit 2) where --dsn sends it, touching nothing."""
    real = tmp_path / "real.db"
    mine = ["--dsn", f"sqlite:///{real}"]
    assert run("create", "orders_q", "--kind", "fifo", *mine).exit_code == 0
    assert run("push", "orders_q", "real-1", "real-2", *mine).exit_code == 0
    config = tmp_path / "c.toml"
    config.write_text(f'default = "prod"\n[connections.prod]\ndsn = "sqlite:///{real}"\n')
    monkeypatch.setenv("QADMIN_DSN", f"sqlite:///{real}")
    shown = run("demo", "--config", str(config), "--format", "json")
    assert shown.exit_code == 0 and json.loads(shown.stdout)["size"]["depth"] == 7
    refused = run("demo", *mine)
    assert refused.exit_code == 2 and "was not made by demo" in one_line_error(refused)
    monkeypatch.delenv("QADMIN_DSN")
    left = json.loads(run("peek", "orders_q", "--count", "5", "--format", "json", *mine).stdout)
    assert [m["payload"] for m in left] == ["real-1", "real-2"]


def test_config_connections_and_conn_list_masks_passwords(tmp_path, monkeypatch):
    config = tmp_path / "c.toml"
    db = tmp_path / "named.db"
    config.write_text(
        f'default = "local"\n[connections.local]\ndsn = "sqlite:///{db}"\n'
        '[connections.prod]\ndsn = "postgresql://app:s3cret@db1/app"\n'
    )
    listed = run("conn", "list", "-v", "--config", str(config), "--format", "json")
    assert "s3cret" not in listed.stdout
    assert {r["name"] for r in json.loads(listed.stdout)} == {"local", "prod"}
    names_only = json.loads(run("conn", "list", "--config", str(config), "--format", "json").stdout)
    assert "dsn" not in names_only[0]
    assert run("create", "q", "--kind", "heap", "--config", str(config)).exit_code == 0
    assert db.exists(), "the config's default connection was used"
    assert run("list", "-c", "nosuch", "--config", str(config)).exit_code == 2
    missing = run("list", "--config", str(tmp_path / "absent.toml"))
    assert missing.exit_code == 2 and "not found" in one_line_error(missing)
    monkeypatch.setenv("QADMIN_DSN", f"sqlite:///{tmp_path / 'env.db'}")
    assert run("create", "q", "--kind", "heap").exit_code == 0
    assert (tmp_path / "env.db").exists()


def test_inspect_reads_the_config_once(tmp_path, monkeypatch):
    """The connection and a declared table's profile come from one reading of the file."""
    from qadmin import config as config_mod

    config = tmp_path / "c.toml"
    db = tmp_path / "named.db"
    config.write_text(
        f'default = "local"\n[connections.local]\ndsn = "sqlite:///{db}"\n'
        '[tables.jobs]\ntable = "jobs_t"\nstate_column = "status"\npending = ["new"]\n'
    )
    assert run("create", "orders_q", "--kind", "fifo", "--config", str(config)).exit_code == 0
    reads: list[str | None] = []
    load = config_mod.load_config

    def counted(path: str | None) -> config_mod.Config:
        reads.append(path)
        return load(path)

    monkeypatch.setattr(config_mod, "load_config", counted)
    result = run("inspect", "orders_q", "--config", str(config), "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["queue"] == "orders_q"
    assert reads == [str(config)]


def test_verbose_names_the_connection_with_the_password_masked():
    result = invoke("-v", "list", "--dsn", "postgresql://u:pw-Xy7@127.0.0.1:1/db")
    assert "pw-Xy7" not in result.stderr
    assert "postgresql://u:***@127.0.0.1:1/db" in result.stderr


def test_every_changing_command_needs_yes_off_a_tty_and_changes_nothing_without_it(db, tmp_path):
    (tmp_path / "in.jsonl").write_text('{"payload": "x"}\n')
    run("create", "r", "--kind", "ring", "--capacity", "4", *db)
    run("create", "w", "--kind", "fifo", "--watermark", *db)
    run("create", "c", "--kind", "claim", *db)
    run("create", "f", "--kind", "fifo", *db)
    for queue in ("r", "w", "c", "f"):
        run("push", queue, "a", "b", *db)
    run("pop", "c", *db)
    before = {q: run("peek", q, "--format", "json", *db).stdout for q in ("r", "w", "c", "f")}
    for args in (
        ["resize", "r", "--capacity", "8"],
        ["repair", "r"],
        ["watermark", "w", "repair"],
        ["requeue", "c", "--stale-after", "1"],
        ["convert", "f", "--to", "ring", "--capacity", "8"],
        ["maintain", "f"],
        ["purge", "f"],
        ["drop", "f"],
        ["archive", "f", "--to", str(tmp_path / "arch"), "--older-than", "0s"],
        ["load", "f", "--from", str(tmp_path / "in.jsonl"), "--replace-stage"],
    ):
        refused = run(*args, *db)
        assert refused.exit_code == 2, args
        assert "--yes" in one_line_error(refused), args
    after = {q: run("peek", q, "--format", "json", *db).stdout for q in ("r", "w", "c", "f")}
    assert after == before
    listed = json.loads(run("list", "--format", "json", *db).stdout)
    assert {(q["name"], q["kind"], q["capacity"]) for q in listed} == {
        ("r", "ring", 4),
        ("w", "fifo", None),
        ("c", "claim", None),
        ("f", "fifo", None),
    }


@pytest.mark.parametrize(
    "value,said",
    [
        ("0.5", "0.5 s is below 1 s: requeue would release every claim in progress"),
        ("0", "0 s is below 1 s: requeue would release every claim in progress"),
        ("400d", "'400d' is out of range (1 s to 365 d)"),
    ],
)
def test_requeue_says_the_stale_after_given_and_its_real_bounds(db, value, said):
    """--stale-after 0.5 was cut to 0 first ("0 s is below 1 s"), and the range said "0 s to
    3.1536e+07 s" though requeue refuses 0: the value given and the real bounds now."""
    assert invoke("create", "c", "--kind", "claim", *db).exit_code == 0
    result = invoke("requeue", "c", "--stale-after", value, "--yes", *db)
    assert result.exit_code == 2 and said in one_line_error(result), result.output
    status = invoke("status", "--stale-after", "400d", *db)
    assert status.exit_code == 2 and "'400d' is out of range (0 s to 365 d)" in status.stderr
