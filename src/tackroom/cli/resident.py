"""``tackroom resident``: keep tackroom's modules loaded, so a command does not load them again."""

from __future__ import annotations

import datetime
from typing import Any

import typer

from tackroom.cli._output import console, print_json

app = typer.Typer(
    help="Keep tackroom loaded in one process that every command is forked from (a run's fixed cost "
    "falls to under half). A run, usage, adapters or profile command starts one when none runs "
    "(TACKROOM_NO_RESIDENT_START=1 or CI set: none). Commands it cannot run exactly as they would run "
    "by themselves (another interpreter, changed code) run by themselves.",
    no_args_is_help=True,
)


@app.command("start")
def start_command(
    idle: float = typer.Option(
        3600.0, "--idle", min=0.1, help="Stop after this many seconds with no command."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Start the resident for this user's cache directory; commands use it from now on."""
    from tackroom import resident

    _show(resident.start("tackroom.cli:main", idle_s=idle), as_json, "started")


@app.command("stop")
def stop_command(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Stop the resident (a command it runs finishes first); commands run by themselves again."""
    from tackroom import resident

    _show(resident.stop(), as_json, "stopped")


@app.command("status")
def status_command(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Whether a resident runs, since when, and how many commands it ran."""
    from tackroom import resident

    _show(resident.status(), as_json, "running")


def _show(found: dict[str, Any] | None, as_json: bool, done: str) -> None:
    if found is None:
        import os

        from tackroom.handover import no_start, socket_path

        why = no_start(os.environ, socket_path())
        if as_json:
            print_json({"state": "none", "starts": why is None, "why_not": why})
            return
        starts = (
            "the next run, usage, adapters or profile command starts one"
            if why is None
            else f"commands start none ({why})"
        )
        console().print(f"no resident tackroom is running; {starts}", markup=False)
        return
    if as_json:
        print_json({"state": done, **found})
        return
    served = f"{found['served']} command(s) served"
    if found["refused"]:
        reasons = ", ".join(f"{count} {reason}" for reason, count in sorted(found["refused"].items()))
        served += f", {sum(found['refused'].values())} run by themselves ({reasons})"
    if done == "stopped":
        line = f"resident tackroom stopped: pid {found['pid']}; {served}"
        if found["running"]:
            line += f"; the {found['running']} it runs finish first"
    else:
        since = datetime.datetime.fromtimestamp(found["started"]).strftime("%Y-%m-%d %H:%M:%S")
        line = (
            f"resident tackroom {done}: pid {found['pid']}, at {found['socket']}, since {since}; "
            f"{served}, {found['running']} running; it stops after {found['idle_s']:g} s idle"
        )
    if found.get("auto") and done != "stopped":
        line += "; a command started it (TACKROOM_NO_RESIDENT_START=1: commands start none)"
    if found.get("stale"):
        line += f"; stale ({found['stale']}): the next command runs by itself and the resident stops"
    console().print(line, markup=False)
