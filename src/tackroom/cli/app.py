"""The Typer application: every command group, registered (see :mod:`tackroom.cli` for the entry point)."""

from __future__ import annotations

import typer

from tackroom.cli import adapters, gateway, mock, profile, runs, trace, usage
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
app.add_typer(gateway.app, name="gateway")
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
