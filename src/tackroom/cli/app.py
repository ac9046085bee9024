"""The Typer application: every command group, registered (see :mod:`tackroom.cli` for the entry point).

A command's module is imported only when that command runs (or when help lists them all): a
command pays for its own imports, never for every other command's (Rich, asyncio, the gateway's
server). :data:`COMMANDS` names where each one lives.
"""

from __future__ import annotations

from importlib import import_module

import typer
from typer.core import TyperGroup

TYPE_CHECKING = False  # not typing's: the quickest commands should not load it
if TYPE_CHECKING:
    from typer import _click

RUN, CONFIGURE, PROVE, OBSERVE, EVALUATE = "Run", "Configure", "Prove", "Observe", "Evaluate"
COMMANDS: dict[str, tuple[str, str, str]] = {
    "run": ("tackroom.cli.run", "run_command", RUN),
    "install": ("tackroom.cli.install", "install_command", RUN),
    "runs": ("tackroom.cli.runs", "app", RUN),
    "mock": ("tackroom.cli.mock", "app", RUN),
    "resident": ("tackroom.cli.resident", "app", RUN),
    "profile": ("tackroom.cli.profile", "app", CONFIGURE),
    "adapters": ("tackroom.cli.adapters", "app", CONFIGURE),
    "trust": ("tackroom.cli.trust", "trust_command", CONFIGURE),
    "detect": ("tackroom.cli.detect", "detect_command", CONFIGURE),
    "probe": ("tackroom.cli.probe", "probe_command", PROVE),
    "capabilities": ("tackroom.cli.capabilities", "capabilities_command", PROVE),
    "drift": ("tackroom.cli.drift", "drift_command", PROVE),
    "doctor": ("tackroom.cli.doctor", "doctor_command", PROVE),
    "usage": ("tackroom.cli.usage", "app", OBSERVE),
    "trace": ("tackroom.cli.trace", "app", OBSERVE),
    "gateway": ("tackroom.cli.gateway", "app", OBSERVE),
    "eval": ("tackroom.cli.eval", "app", EVALUATE),
}
"""Each command's name: the module it lives in, the Typer group or function there, and the panel
``--help`` lists it under (what a user wants to do), in help order."""

START = (
    "Start here (no API key: the built-in mock model answers): tackroom install claude-code && "
    'tackroom run claude-code "Say hello" --mock-text "Hello from the mock model"'
)
"""The first command of the tour, shown under the help and by ``tackroom`` alone."""


class _Commands(TyperGroup):
    """The root group: it knows its commands by name and makes each from its module when asked."""

    def list_commands(self, ctx: _click.Context) -> list[str]:
        return [*super().list_commands(ctx), *COMMANDS]

    def get_command(self, ctx: _click.Context, cmd_name: str) -> _click.Command | None:
        if cmd_name not in COMMANDS:
            return super().get_command(ctx, cmd_name)
        if cmd_name not in self.commands:
            self.commands[cmd_name] = _command(cmd_name)
        return self.commands[cmd_name]


def _command(name: str) -> _click.Command:
    """The Click command ``name`` is, made exactly as ``add_typer``/``command`` on the root would."""
    module, attribute, panel = COMMANDS[name]
    found = getattr(import_module(module), attribute)
    holder = typer.Typer(add_completion=False)
    holder.callback()(_nothing)  # a callback makes it a group, even around one command
    if isinstance(found, typer.Typer):
        holder.add_typer(found, name=name, rich_help_panel=panel)
    else:
        holder.command(name, rich_help_panel=panel)(found)
    group = typer.main.get_command(holder)
    assert isinstance(group, TyperGroup)
    return group.commands[name]


def _nothing() -> None:
    """The holder group's callback: it has nothing to do."""


app = typer.Typer(
    name="tackroom",
    help="Drive every coding-agent CLI through one interface, and prove what it configured was used.",
    cls=_Commands,
    no_args_is_help=True,
    epilog=START,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root(
    debug: bool = typer.Option(False, "--debug", help="Show a traceback on errors."),
) -> None:
    """Drive every coding-agent CLI through one interface, and prove what it configured was used."""
