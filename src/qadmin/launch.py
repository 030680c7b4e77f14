"""The ``qadmin`` script's entry point: Ctrl-C while the CLI is still importing (click, rich,
the commands: a few hundred milliseconds) is the same one line and exit 130 as Ctrl-C later,
not a traceback from inside an import."""

from __future__ import annotations

import sys

from qadmin.errors import EXIT_INTERRUPTED  # a module of constants: imports nothing slow


def main() -> None:
    from qadmin import interrupts

    interrupts.install()
    try:
        from qadmin.cli import main as cli_main
    except KeyboardInterrupt:
        sys.stderr.write(f"qadmin: {interrupts.name()}\n")
        raise SystemExit(interrupts.exit_code(EXIT_INTERRUPTED)) from None
    cli_main()
