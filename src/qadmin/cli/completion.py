"""``qadmin completion SHELL``: print the shell completion script (also in completions/)."""

from __future__ import annotations

import click
from click.shell_completion import get_completion_class

SHELLS = ("bash", "zsh", "fish")


def completion_script(shell: str) -> str:
    """The script click generates for qadmin; completions/ holds these, checked by a test."""
    from qadmin.cli import cli

    cls = get_completion_class(shell)
    if cls is None:
        raise click.UsageError(f"no completion for {shell}")
    return cls(cli, {}, "qadmin", "_QADMIN_COMPLETE").source()


@click.command()
@click.argument("shell", type=click.Choice(SHELLS))
def completion(shell: str) -> None:
    """Print the completion script for SHELL; e.g. qadmin completion bash > ~/.qadmin.bash"""
    click.echo(completion_script(shell))


COMMANDS = [completion]
