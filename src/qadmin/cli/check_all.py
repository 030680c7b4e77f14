"""``qadmin check --all``: one Nagios plugin run for every queue ``status`` finds.

The worst queue's state is the exit code (status's order: CRITICAL, then the highest code).
The output follows the plugin conventions: the first line is the summary with the counts as
performance data; then one long-text line per queue, worst first; then each queue's
performance data on lines of their own (after a ``|`` on the last long-text line), labels
``NAME_METRIC`` with NAME as status shows it (``schema.table``, ``TABLE[QUEUE]``).

Thresholds: the registry's defaults, then the config's ``[check]`` keys (``warn_depth = 1000``,
``crit_oldest_age = "10m"``), then the ``--warn-X/--crit-X`` options, then each
``[check.queues."PATTERN"]`` whose pattern (``*`` and ``?`` wildcards) matches the queue's
name (in file order, a later one winning key by key): the most specific word wins.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import click

from qadmin import config as config_mod
from qadmin import render
from qadmin.cli.options import Target
from qadmin.cli.thresholds import limits
from qadmin.diagnostics import check as check_ops
from qadmin.diagnostics import registry
from qadmin.diagnostics.model import InspectReport, Options
from qadmin.errors import UsageError

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


def _matches(name: str, pattern: str) -> bool:
    """``*`` any run of characters, ``?`` one; everything else literal (a named queue's
    brackets too: ``jobs[mail]`` is that queue, not a character class)."""
    regex = re.escape(pattern).replace(r"\*", ".*").replace(r"\?", ".")
    return re.fullmatch(regex, name) is not None


@dataclass
class Thresholds:
    """The config's [check] section and the options given, turned into each queue's limits."""

    base: dict[str, float] = field(default_factory=dict)
    given: dict[str, float] = field(default_factory=dict)
    patterns: list[tuple[str, dict[str, float]]] = field(default_factory=list)

    def values(self, name: str) -> dict[str, float]:
        merged = {**self.base, **self.given}
        for pattern, keys in self.patterns:
            if _matches(name, pattern):
                merged.update(keys)
        return merged

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


def _label(name: str, metric: str) -> str:
    """A perfdata label: quoted when it holds a space, ``=`` or a quote (doubled)."""
    label = f"{name}_{metric}".replace("|", "/")
    if any(c in label for c in " ='"):
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

    def each(item: Any, line: Any, report: InspectReport | None) -> None:
        verdicts[line.name] = _verdict(line, report)

    found = status_ops.gather(
        engine,
        declared,
        limits_for.options("", stale_after),
        broken,
        options_for=lambda name: limits_for.options(name, stale_after),
        each=each,
    )
    ordered = [verdicts.get(line.name) or _verdict(line, None) for line in found.lines]
    code = found.code
    if not ordered:
        code = check_ops.UNKNOWN
    shown = check_ops.STATUS[code]
    counts = {s: sum(1 for v in ordered if v.status == s) for s in check_ops.STATUS.values()}
    if render.resolve_format(fmt) == "json":
        render.document(
            {
                "status": shown,
                "code": code,
                "queues": len(ordered),
                "counts": {k.lower(): v for k, v in counts.items()},
                "lines": [dataclasses.asdict(v) for v in ordered],
                "notes": found.notes,
            },
            "json",
        )
        return code
    click.echo(_first_line(shown, ordered, counts))
    texts = [f"{v.status} {v.name}: {v.summary}".replace("|", "/") for v in ordered]
    perf = [" ".join(v.perf) for v in ordered if v.perf]
    if texts and perf:
        texts[-1] += " | " + perf[0]
        texts += perf[1:]
    for text in texts:
        click.echo(text)
    return code


def _first_line(shown: str, ordered: list[Verdict], counts: dict[str, int]) -> str:
    if not ordered:
        summary = "no queues found (qadmin's catalogs, library tables, [tables.NAME])"
    else:
        parts = ", ".join(f"{counts[s]} {s.lower()}" for s in ("CRITICAL", "WARNING", "UNKNOWN"))
        summary = f"{len(ordered)} queues: {parts}, {counts['OK']} ok"
        worst = ordered[0]
        if worst.status != "OK":
            summary += f"; worst {worst.name}: {worst.summary}".replace("|", "/")
    perf = " ".join(f"{s.lower()}={counts[s]}" for s in ("CRITICAL", "WARNING", "UNKNOWN", "OK"))
    return f"QADMIN {shown} - {summary} | queues={len(ordered)} {perf}"
