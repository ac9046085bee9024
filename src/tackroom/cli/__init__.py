"""The ``tackroom`` command line: parse, call the library, print. Nothing more.

Errors are shown once, here at the edge: a :class:`~tackroom.errors.TackroomError`
prints one message to stderr and exits 1; usage errors exit 2; Ctrl-C exits
130; a traceback only with ``--debug``.
"""

from __future__ import annotations

import io
import sys
import traceback

import typer

from tackroom.cli import adapters, mock, profile, runs, trace, usage
from tackroom.cli.capabilities import capabilities_command
from tackroom.cli.detect import detect_command
from tackroom.cli.doctor import doctor_command
from tackroom.cli.drift import drift_command
from tackroom.cli.install import install_command
from tackroom.cli.probe import probe_command
from tackroom.cli.run import run_command
from tackroom.cli.trust import trust_command

app = typer.Typer(
    name="tackroom",
    help="Drive every coding-agent CLI through one interface, and prove what it configured was used.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(adapters.app, name="adapters")
app.add_typer(mock.app, name="mock")
app.add_typer(profile.app, name="profile")
app.add_typer(runs.app, name="runs")
app.add_typer(trace.app, name="trace")
app.add_typer(usage.app, name="usage")
app.command("detect")(detect_command)
app.command("probe")(probe_command)
app.command("capabilities")(capabilities_command)
app.command("doctor")(doctor_command)
app.command("drift")(drift_command)
app.command("install")(install_command)
app.command("run")(run_command)
app.command("trust")(trust_command)


@app.callback()
def _root(
    debug: bool = typer.Option(False, "--debug", help="Show a traceback on errors."),
) -> None:
    """Drive every coding-agent CLI through one interface, and prove what it configured was used."""


def main() -> None:
    """Console-script entry point."""
    from tackroom.errors import TackroomError

    debug = "--debug" in sys.argv[1:]
    for stream in (sys.stdout, sys.stderr):
        # A path or name from outside can hold a lone surrogate (undecodable bytes in argv or a
        # file name); printing it must show an escape, not crash the command.
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    try:
        app(prog_name="tackroom")
    except TackroomError as exc:
        from tackroom.redact import redact_text

        if debug:
            traceback.print_exc()
        # An error may quote what the user typed, a URL with a password in it included.
        print(f"tackroom: error: {redact_text(str(exc))}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
