"""The ``--warn-<metric>`` / ``--crit-<metric>`` options of inspect and check, generated from
the diagnostics registry: check judges them, and inspect's findings use the same limits."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from qadmin.cli.options import Duration, Number
from qadmin.diagnostics import registry
from qadmin.diagnostics.model import Limit
from qadmin.errors import UsageError

F = TypeVar("F", bound=Callable[..., Any])


def _option_name(level: str, metric: str) -> str:
    return f"--{level}-{metric.replace('_', '-')}"


def threshold_options(func: F) -> F:
    for metric in reversed(registry.metrics()):
        for level in ("crit", "warn"):
            default = metric.crit if level == "crit" else metric.warn
            shown = f" [default: {default:g}{metric.unit}]" if default is not None else ""
            func = click.option(
                _option_name(level, metric.name),
                type=Duration(fractional=True) if metric.duration else Number(),
                metavar="DURATION" if metric.duration else "N",
                help=f"{'Critical' if level == 'crit' else 'Warning'} threshold: "
                f"{metric.help}.{shown}",
            )(func)
    return func


def limits(values: dict[str, Any]) -> dict[str, Limit]:
    """The limits given as options (popped from ``values``), merged with the registry's
    defaults; a given level that crosses the other level's default drops that default."""
    out: dict[str, Limit] = {}
    for metric in registry.metrics():
        warn = values.pop(f"warn_{metric.name}", None)
        crit = values.pop(f"crit_{metric.name}", None)
        if warn is None and crit is None:
            continue
        if warn is not None and crit is not None and float(warn) > float(crit):
            raise UsageError(
                f"{_option_name('warn', metric.name)} {warn} is above "
                f"{_option_name('crit', metric.name)} {crit} (inverted thresholds)"
            )
        if warn is None and metric.warn is not None and metric.warn <= float(crit):
            warn = metric.warn
        if crit is None and metric.crit is not None and metric.crit >= float(warn):
            crit = metric.crit
        out[metric.name] = Limit(
            None if warn is None else float(warn), None if crit is None else float(crit), True
        )
    return out
