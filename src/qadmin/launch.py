"""The ``qadmin`` script's entry point: Ctrl-C while the CLI is still importing (click, rich,
the commands: a few hundred milliseconds) is the same one line and exit 130 as Ctrl-C later,
not a traceback from inside an import."""

from __future__ import annotations

import sys

from qadmin.errors import EXIT_INTERRUPTED  # a module of constants: imports nothing slow


def main() -> None:
    try:
        from qadmin.cli import main as cli_main
    except KeyboardInterrupt:
        sys.stderr.write("qadmin: interrupted\n")
        raise SystemExit(EXIT_INTERRUPTED) from None
    cli_main()
