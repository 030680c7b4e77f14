"""``qadmin check --all``: one Nagios plugin run for every queue ``status`` finds.

The worst queue's state is the exit code (status's order: CRITICAL, then the highest code).
The output follows the plugin conventions: the first line is the summary with the counts as
performance data; then one long-text line per queue, worst first; then each queue's
performance data on lines of their own (after a ``|`` on the last long-text line), labels
``NAME_METRIC`` with NAME as status shows it (``schema.table``, ``TABLE[QUEUE]``).

Thresholds: the registry's defaults, then the config's ``[check]`` keys (``warn_depth = 1000``,
``crit_oldest_age = "10m"``), then the ``--warn-X/--crit-X`` options, then each
``[check.queues."PATTERN"]`` whose pattern (``*`` and ``?`` wildcards) matches the queue's
name, with or without its schema (in file order, a later one winning key by key): the most
specific word wins. A pattern matching no queue found is said (a typo must not pass silently).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import click

from qadmin import config as config_mod
from qadmin import render
from qadmin.cli import output
from qadmin.cli.options import Target
from qadmin.cli.thresholds import limits
from qadmin.diagnostics import check as check_ops
from qadmin.diagnostics import registry
from qadmin.diagnostics.model import InspectReport, Options
from qadmin.errors import QadminError, UsageError

_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*\Z")
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def _sampled() -> set[str]:
    """Metrics read from a rate sample, which --all (like status) does not take."""
    return {m.name for m in registry.entry("rates").metrics}


def _value(where: str, key: str, value: Any, duration: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise UsageError(f"{where}: {key} must be a number" + (" or a duration" * duration))
    if isinstance(value, str):
        found = _DURATION.match(value) if duration else None
        if found is None:
            how = "a duration (90, 30s, 5m, 2h, 1d)" if duration else "a number"
            raise UsageError(f"{where}: {key} = {value!r} is not {how}")
        return float(found[1]) * _UNITS[found[2]]
    if value < 0:
        raise UsageError(f"{where}: {key} must not be negative")
    return float(value)


def _keys(where: str, entry: dict[str, Any]) -> dict[str, float]:
    """A table of warn_X / crit_X keys, checked: the metric exists and is not a rate."""
    known = {m.name: m for m in registry.metrics()}
    out: dict[str, float] = {}
    for key, value in entry.items():
        level, _, metric = key.partition("_")
        if level not in ("warn", "crit") or metric not in known:
            names = ", ".join(f"warn_{m}/crit_{m}" for m in sorted(known))
            raise UsageError(f"{where}: unknown key {key!r} (known: {names}, queues)")
        if metric in _sampled():
            raise UsageError(f"{where}: {key}: check --all takes no rate sample")
        out[key] = _value(where, key, value, known[metric].duration)
    return out


def matches(name: str, pattern: str) -> bool:
    """``*`` any run of characters, ``?`` one; everything else literal (a named queue's
    brackets too: ``jobs[mail]`` is that queue, not a character class). The name is status's
    (``schema.table[QUEUE]``), matched as it is or without its schema (``table[QUEUE]``), as
    the docs write a library's table."""
    regex = re.compile(re.escape(pattern).replace(r"\*", ".*").replace(r"\?", "."))
    if regex.fullmatch(name) is not None:
        return True
    table = name.split("[", 1)[0]
    if "." not in table:
        return False
    return regex.fullmatch(name.split(".", 1)[1]) is not None


@dataclass
class Thresholds:
    """The config's [check] section and the options given, turned into each queue's limits."""

    base: dict[str, float] = field(default_factory=dict)
    given: dict[str, float] = field(default_factory=dict)
    patterns: list[tuple[str, dict[str, float]]] = field(default_factory=list)

    def values(self, name: str) -> dict[str, float]:
        merged = {**self.base, **self.given}
        for pattern, keys in self.patterns:
            if matches(name, pattern):
                merged.update(keys)
        return merged

    def unmatched(self, names: list[str]) -> list[str]:
        """The notes for the patterns that match none of the queues found: a misspelt or
        mis-qualified pattern must not leave its queues silently at the looser levels."""
        return [
            f'[check.queues."{pattern}"] matches no queue found (names as status shows them: '
            "schema.table, schema.table[QUEUE], with or without the schema)"
            for pattern, _ in self.patterns
            if not any(matches(name, pattern) for name in names)
        ]

    def options(self, name: str, stale_after: int) -> Options:
        values: dict[str, Any] = dict(self.values(name))
        try:
            return Options(stale_after, 0.0, limits=limits(values))
        except UsageError as exc:
            raise UsageError(f"{name}: {exc} (with the config's [check] thresholds)") from None


def thresholds(conf: config_mod.Config, given: dict[str, Any]) -> Thresholds:
    section = {} if conf.check is None else conf.check
    if not isinstance(section, dict):
        raise UsageError("config file: [check] must be a table of warn_X / crit_X keys")
    queues = section.get("queues", {})
    if not isinstance(queues, dict) or not all(isinstance(v, dict) for v in queues.values()):
        raise UsageError('config file: [check.queues."PATTERN"] tables expected')
    base = _keys("config file: [check]", {k: v for k, v in section.items() if k != "queues"})
    patterns = [(p, _keys(f'config file: [check.queues."{p}"]', e)) for p, e in queues.items()]
    options = {k: float(v) for k, v in given.items() if v is not None}
    result = Thresholds(base, options, patterns)
    for probe in ["*", *(p for p, _ in patterns)]:
        result.options(probe, 0)  # inverted levels: said now, once, not per queue
    return result


@dataclass
class Verdict:
    name: str
    status: str
    code: int
    summary: str
    perf: list[str] = field(default_factory=list)
    metrics: dict[str, float | None] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def plain(text: str, keep_bar: bool = False) -> str:
    """One plugin output line: a control character (a newline in a queue's name) shown as
    its escape (``\\n``, ``\\x1b``), never a line break; ``|`` (perfdata's separator) as
    ``/`` unless it is the line's own separator (``keep_bar``)."""
    text = render.escaped(text)
    return text if keep_bar else text.replace("|", "/")


def _label(name: str, metric: str) -> str:
    """A perfdata label: ``=`` (which the plugin guidelines forbid in a label, quoted or not)
    as ``_``; quoted when it holds a space or a quote (doubled)."""
    label = plain(f"{name}_{metric}").replace("=", "_")
    if any(c in label for c in " '"):
        return "'" + label.replace("'", "''") + "'"
    return label


def _verdict(line: Any, report: InspectReport | None) -> Verdict:
    if report is None:
        why = line.error or line.worst or "not read"
        return Verdict(line.name, "UNKNOWN", check_ops.UNKNOWN, f"not read: {why}")
    result = check_ops.evaluate(report)
    text, _, perf = result.line.partition(" | ")
    summary = text.split(": ", 1)[1] if ": " in text else text
    labelled = []
    for item in perf.split():
        metric, _, rest = item.partition("=")
        labelled.append(f"{_label(line.name, metric)}={rest}")
    return Verdict(
        line.name,
        result.status,
        result.code,
        summary,
        labelled,
        result.metrics,
        result.problems,
    )


def run(
    target: Target,
    given: dict[str, Any],
    stale_after: int,
    queue_timeout: float,
    fmt: str | None,
) -> int:
    """Read every queue, print the plugin's output, return the exit code."""
    import dataclasses

    from qadmin.ops import status as status_ops

    conf = config_mod.load_config(target.config)
    limits_for = thresholds(conf, given)
    limit_ms = min(target.timeouts.statement_ms, max(1, round(queue_timeout * 1000)))
    timeouts = dataclasses.replace(target.timeouts, statement_ms=limit_ms)
    engine = dataclasses.replace(target, timeouts=timeouts).engine()
    declared, broken = conf.tables, conf.broken
    verdicts: dict[str, Verdict] = {}

    def each(engine: Any, item: Any, line: Any, report: InspectReport | None) -> None:
        verdicts[line.name] = _verdict(line, report)

    found = status_ops.gather(
        engine,
        declared,
        limits_for.options("", stale_after),
        broken,
        options_for=lambda name: limits_for.options(name, stale_after),
        each=each,
        schema=target.schema,
    )
    ordered = [verdicts.get(line.name) or _verdict(line, None) for line in found.lines]
    code = found.code
    unmatched = limits_for.unmatched([line.name for line in found.lines])
    if not ordered:
        code = check_ops.UNKNOWN
    shown = check_ops.STATUS[code]
    output.if_reader_leaves(code)
    counts = {s: sum(1 for v in ordered if v.status == s) for s in check_ops.STATUS.values()}
    if render.resolve_format(fmt) == "json":
        render.document(
            {
                "status": shown,
                "code": code,
                "queues": len(ordered),
                "counts": {k.lower(): v for k, v in counts.items()},
                "lines": [dataclasses.asdict(v) for v in ordered],
                "notes": [*found.notes, *unmatched],
                # why there is nothing to judge, as status's document says it
                "error": None if ordered else NONE_FOUND,
            },
            "json",
        )
        return code
    first = _first_line(shown, ordered, counts)
    if unmatched:
        head, _, counted = first.partition(" | ")
        first = f"{head}; {len(unmatched)} threshold pattern(s) match no queue | {counted}"
    click.echo(plain(first, keep_bar=True))
    texts = [plain(f"WARNING config: {note}") for note in unmatched]
    texts += [plain(f"{v.status} {v.name}: {v.summary}") for v in ordered]
    perf = [" ".join(v.perf) for v in ordered if v.perf]
    if texts and perf:
        texts[-1] += " | " + perf[0]
        texts += perf[1:]
    for text in texts:
        click.echo(render.visible(text))  # a stored queue name never drives the terminal
    return code


NONE_FOUND = "no queues found (qadmin's catalogs, library tables, [tables.NAME])"


def failed(error: QadminError, fmt: str | None) -> int:
    """The run itself failed (no connection, a SQLite file missing or not a database, a bad
    [check]): check --all's answer, and status's: one UNKNOWN line, or with --format json the
    run's document, UNKNOWN with no lines and ``error``; exit 3, as the check could not run."""
    said = check_ops.unknown("all queues", str(error))
    output.if_reader_leaves(check_ops.UNKNOWN)
    if render.resolve_format(fmt) == "json":
        render.document(failed_document(said.problems[0]), "json")
    else:
        click.echo(render.visible(said.line))
    return check_ops.UNKNOWN


def failed_document(error: str) -> dict[str, Any]:
    """--format json when the run itself failed (no connection, a bad config): the same
    document as a run's, UNKNOWN with no queue, and the reason in ``error``."""
    counts = {s.lower(): 0 for s in check_ops.STATUS.values()}
    return {
        "status": check_ops.STATUS[check_ops.UNKNOWN],
        "code": check_ops.UNKNOWN,
        "queues": 0,
        "counts": counts,
        "lines": [],
        "notes": [],
        "error": error,
    }


def _first_line(shown: str, ordered: list[Verdict], counts: dict[str, int]) -> str:
    if not ordered:
        summary = NONE_FOUND
    else:
        parts = ", ".join(f"{counts[s]} {s.lower()}" for s in ("CRITICAL", "WARNING", "UNKNOWN"))
        summary = f"{len(ordered)} queues: {parts}, {counts['OK']} ok"
        worst = ordered[0]
        if worst.status != "OK":
            summary += f"; worst {worst.name}: {worst.summary}".replace("|", "/")
    perf = " ".join(f"{s.lower()}={counts[s]}" for s in ("CRITICAL", "WARNING", "UNKNOWN", "OK"))
    return f"QADMIN {shown} - {summary} | queues={len(ordered)} {perf}"
