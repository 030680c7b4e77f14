"""The ``qadmin`` command: a click group whose commands live in one module per area.

Every error leaves through ``QadminGroup.main``: one line on stderr and the exit code the README
documents, a traceback only with --debug, and any secret seen in this process scrubbed.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from typing import Any

import click

from qadmin import __version__, interrupts
from qadmin.cli.index import INDEX
from qadmin.cli.options import global_connection_options, global_format_option
from qadmin.errors import (
    EXIT_EMPTY,
    EXIT_ERROR,
    EXIT_FULL,
    EXIT_INTERRUPTED,
    EXIT_UNDELIVERED,
    EXIT_USAGE,
    Interrupted,
    QadminError,
)

# check's Nagios UNKNOWN (docs/cli.md): its usage errors, the group's options included.
EXIT_PLUGIN_UNKNOWN = 3


def _say(message: str, code: int) -> None:
    interrupts.settle()  # the line is being said: a second stop must not cut it short
    quiet = (EXIT_EMPTY, EXIT_FULL, EXIT_INTERRUPTED)
    prefix = "qadmin: " if code in quiet else "qadmin: error: "
    from qadmin import render, secrets  # with the DSN parser it scrubs with: when needed

    # one line, and nothing in it (a stored name, a driver's message) drives the terminal
    text = secrets.scrub(prefix + " ".join(message.split()))
    click.echo(render.visible(text, lines=False), err=True)


def _missing_dependency(exc: Exception, argv: list[str]) -> QadminError | None:
    """An optional package (pyarrow, pyspark, pandas, pyodbc) failing to import anywhere below
    a command: the one line naming what to install, instead of an internal error."""
    if not isinstance(exc, ImportError):
        return None
    from qadmin import extras

    return extras.from_import_error(exc, _command_word(argv))


def _interrupted(said: str | None = None) -> int:
    """Ctrl-C, SIGTERM, SIGHUP: one line that is not an error (what a multi-step write had
    done, when it says), exit 128 + the signal (130 for Ctrl-C, as a shell reports it). On a
    terminal a newline first, so the line does not follow the ``^C`` echo."""
    if sys.stderr.isatty():
        click.echo("", err=True)
    how = interrupts.name()
    _say(how if said in (None, "interrupted") else f"{how}: {said}", EXIT_INTERRUPTED)
    return interrupts.exit_code(EXIT_INTERRUPTED)


class QadminGroup(click.Group):
    """A group whose standalone run turns every failure into one line and an exit code, and
    whose commands are imported only when one is run: ``qadmin --help`` and a usage error read
    the command list from ``cli/index.py`` (a test keeps it equal to the commands) instead of
    importing every command's modules, the diagnostics and the engines."""

    def list_commands(self, ctx: click.Context | None) -> list[str]:
        return sorted(set(self.commands) | set(INDEX))

    def get_command(self, ctx: click.Context | None, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in INDEX:
            self._load(INDEX[cmd_name][0])
        return self.commands.get(cmd_name)

    def _load(self, module: str) -> None:
        for command in importlib.import_module(f"qadmin.cli.{module}").COMMANDS:
            self.add_command(command)

    def load_all(self) -> dict[str, click.Command]:
        """Every command, imported (the docs tests, the index check, shell completion)."""
        for module in dict.fromkeys(m for m, _ in INDEX.values()):
            self._load(module)
        return dict(self.commands)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            # A listed command's first help paragraph, as click would shorten it.
            stand_in = self.commands.get(name) or click.Command(name, help=INDEX[name][1])
            rows.append((name, stand_in.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        # Before click's own handler, which would print a blank line and abort with exit 1.
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise Interrupted("interrupted") from None
        except BrokenPipeError:
            # The reader (head, grep -q) went away mid-output: exit as the command said it
            # would (output.if_reader_leaves: 0, a verdict, or 11), not click's 1. What is
            # still buffered goes nowhere, so the exit flush is quiet.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
            raise click.exceptions.Exit(_reader_left()) from None

    def main(
        self,
        args: Any = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        argv = list(sys.argv[1:] if args is None else args)
        debug = "--debug" in argv or bool(os.environ.get("QADMIN_DEBUG"))
        code = 0
        from qadmin.cli import output

        output.install()
        try:
            result = super().main(argv, prog_name or "qadmin", complete_var, False, **extra)
            code = result if isinstance(result, int) else 0
        except click.exceptions.NoArgsIsHelpError as exc:
            click.echo(exc.ctx.get_help() if exc.ctx else str(exc), err=True)
            code = EXIT_USAGE
        except click.exceptions.Exit as exc:
            code = exc.exit_code
        except (click.exceptions.Abort, KeyboardInterrupt):
            code = _interrupted(None)
        except Interrupted as exc:
            code = _interrupted(str(exc))
        except click.ClickException as exc:
            if isinstance(exc, click.UsageError) and _command_word(argv) == "check":
                # A group-level option check also takes (qadmin --lock-timeout abc check q):
                # the plugin's UNKNOWN line and exit 3, as for its own options.
                click.echo(f"QADMIN UNKNOWN - usage: {' '.join(exc.format_message().split())}")
                sys.exit(EXIT_PLUGIN_UNKNOWN)
            hint = ""
            if isinstance(exc, click.UsageError) and exc.ctx is not None:
                hint = f" (see '{exc.ctx.command_path} --help')"
            _say(exc.format_message() + hint, exc.exit_code)
            code = exc.exit_code
        except QadminError as exc:
            if debug:
                _traceback()
            _say(str(exc), exc.exit_code)
            code = exc.exit_code
            if exc.ends_process:
                # Threads of an abandoned Spark client retry for minutes and its exit hooks
                # wait for them: the line is out, the process ends now.
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        except BrokenPipeError:
            # The reader (head, grep -q) went away (stderr too, when this is the flush of both).
            code = _reader_left()
            sys.stderr = open(os.devnull, "w")  # noqa: SIM115
        except OSError as exc:
            why = output.failure(exc)
            if why is not None:
                # stdout closed or full under a command that is not pop: one line, exit 11.
                if debug:
                    _traceback()
                _say(f"output failed ({why})", EXIT_UNDELIVERED)
                code = EXIT_UNDELIVERED
            elif exc.filename is None:
                code = _internal(exc, debug)
            else:
                # A path the user gave that cannot be read or written: the path and the reason.
                if debug:
                    _traceback()
                _say(f"{exc.filename}: {exc.strerror or exc}", EXIT_USAGE)
                code = EXIT_USAGE
        except Exception as exc:
            code = _internal(exc, debug, argv)
        code = _flushed(code, output)
        interrupts.settle()
        sys.exit(code)


def _reader_left() -> int:
    """The exit code when stdout's reader went away: output.if_reader_leaves's; a command
    that changed something says its printout is lost."""
    from qadmin.cli import output

    code = output.code_if_reader_left()
    if code == EXIT_UNDELIVERED:
        with contextlib.suppress(OSError):
            _say("output failed (the reader closed the pipe): what was done is done", code)
    return code


def _flushed(code: int, output: Any) -> int:
    """Flush stdout before the exit code is chosen: output still buffered that cannot be
    written (a full disk) is the one line and exit 11, not Python's exit-time complaint."""
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
    why = output.failure()
    if why is not None:
        output.quiet()
        if code == 0:
            _say(f"output failed ({why})", EXIT_UNDELIVERED)
            return EXIT_UNDELIVERED
    return code


def _traceback() -> None:
    """The current exception's traceback, scrubbed, on stderr (--debug only: the module that
    formats it costs every start ~30 ms, so it is imported here)."""
    import traceback

    from qadmin import secrets

    click.echo(secrets.scrub(traceback.format_exc()), err=True)


def _command_word(argv: list[str]) -> str | None:
    """The command named in ``argv`` (the first word that is one)."""
    return next((a for a in argv if a in INDEX), None)


def _internal(exc: Exception, debug: bool, argv: list[str] | None = None) -> int:
    """An exception nobody classified: a missing optional package's install line, else one
    'internal error' line (the traceback only with --debug, which it then does not advertise)."""
    if debug:
        _traceback()
    missing = _missing_dependency(exc, argv or [])
    if missing is not None:
        _say(str(missing), missing.exit_code)
        return missing.exit_code
    hint = "" if debug else " (run with --debug for details)"
    _say(f"internal error: {type(exc).__name__}: {exc}{hint}", EXIT_ERROR)
    return EXIT_ERROR


@click.group(cls=QadminGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="qadmin")
@click.option("--debug", is_flag=True, help="Show tracebacks (secrets are still masked).")
@click.option("-v", "--verbose", is_flag=True, help="Say which connection is used, on stderr.")
@global_connection_options
@global_format_option
def cli(debug: bool, verbose: bool, **connection: Any) -> None:
    """Create, manage and diagnose message queues kept in database tables.

    With no --dsn, -c or QADMIN_DSN, qadmin works on an embedded SQLite file. The connection
    options work before the command or after it (after wins): qadmin --dsn DSN list.

    Exit codes: 0 ok, 1 error, 2 usage, 3 queue empty, 4 queue full, 5 not found,
    6 connection failed, 7 permission missing, 8 lock timeout, 9 optional dependency
    missing, 10 incomplete (maintain: work left undone), 11 output failed part way
    (pop: what was not delivered stays queued), 130 interrupted (Ctrl-C; SIGHUP 129,
    SIGTERM 143).
    """
    if debug:
        # Read where the detail is produced (the Spark driver's log level, its Java stacks).
        os.environ["QADMIN_DEBUG"] = "1"


def main() -> None:
    cli.main()
