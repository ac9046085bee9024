"""``tackroom run``: run a harness headless and show its normalized events.

A signal to tackroom (SIGTERM, SIGHUP, SIGQUIT; SIGINT is Ctrl-C) stops the
run as a timeout would: the harness's group and any process that escaped it are
stopped, ``result.json`` says the run was stopped, and tackroom exits
128 + the signal's number.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import typer

from tackroom.cli import _params
from tackroom.cli._live import Live, jsonl_event, jsonl_result, safe, write_json
from tackroom.cli._output import console

if TYPE_CHECKING:
    from tackroom.profile.model import Profile
    from tackroom.run.result import Result

# Ctrl-C is asyncio.run's own (it cancels the run and raises KeyboardInterrupt: exit 130).
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


def run_command(
    words: list[str] = typer.Argument(
        ...,
        metavar="[NAME] PROMPT",
        help="Adapter name (default: the project's harness, else the one detected), then the prompt.",
    ),
    model: str | None = typer.Option(None, "--model", "-m", help="Model (same as --option model=M)."),
    option: list[str] = typer.Option([], "--option", "-o", help="KEY=VALUE; repeat for more."),
    mock: Path | None = typer.Option(
        None, "--mock", exists=True, dir_okay=False, help="Answer from this mock script (TOML or JSON)."
    ),
    mock_text: str | None = typer.Option(None, "--mock-text", help="Answer with this text from the mock."),
    base_url: str | None = typer.Option(
        None, "--base-url", callback=_params.base_url, help="Point the harness at this endpoint."
    ),
    api_key_env: str | None = typer.Option(
        None, "--api-key-env", help="Variable holding the key for --base-url (default: the wire's usual one)."
    ),
    gateway: str | None = typer.Option(
        None,
        "--gateway",
        callback=_params.base_url,
        help="Send the model calls through this running gateway.",
    ),
    capture: bool = typer.Option(
        False, "--capture", help="Start a gateway for this run and record every model call it makes."
    ),
    mock_log: Path | None = typer.Option(
        None, "--mock-log", dir_okay=False, help="Write every mock request as JSONL."
    ),
    timeout: float = typer.Option(
        600.0, "--timeout", callback=_params.seconds, help="Seconds before the run is killed."
    ),
    workdir: Path = typer.Option(
        Path(), "--workdir", exists=True, file_okay=False, help="Working directory; selects the project."
    ),
    home: str = typer.Option("isolated", "--home", help="'isolated' (default) or 'real'."),
    credentials: bool = typer.Option(False, "--credentials", help="Copy the harness's real config in."),
    profile: list[Path] = typer.Option(
        [], "--profile", help="Profile to render into the run's home (default: global + the project's)."
    ),
    no_profile: bool = typer.Option(False, "--no-profile", help="Render no profile, not even the default."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as one JSON object."),
    events: bool = typer.Option(False, "--events", help="Stream normalized events as JSONL."),
    transport: str | None = typer.Option(
        None, "--transport", help="Reach the harness another way its adapter declares (e.g. acp)."
    ),
    sandbox: str | None = typer.Option(
        None,
        "--sandbox",
        help="Run the harness in: none, bwrap, docker or podman (default: the project's, else none).",
    ),
    image: str | None = typer.Option(
        None, "--image", help="The container image a docker or podman sandbox runs the harness in."
    ),
    network: str | None = typer.Option(
        None,
        "--network",
        help="'host', or 'none': nothing but the model endpoint (default: the project's, else host).",
    ),
) -> None:
    """Run a harness headless; exit with its exit code (1 on a model failure it hid).

    `tackroom run PROMPT` runs the harness the project file (tackroom.toml) names, else the detected one.
    """
    from tackroom.options import parse_option_args
    from tackroom.run.runner import arun

    if home not in ("isolated", "real"):
        raise typer.BadParameter("must be 'isolated' or 'real'", param_hint="--home")
    if network not in (None, "host", "none"):
        raise typer.BadParameter("must be 'host' or 'none'", param_hint="--network")
    if sum(x is not None for x in (mock, mock_text, base_url)) > 1:
        raise typer.BadParameter("choose one of --mock, --mock-text and --base-url")
    if profile and no_profile:
        raise typer.BadParameter("give --profile or --no-profile, not both")
    name, prompt = _name_and_prompt(words, workdir)
    if name is None:
        from tackroom.cli.detect import chosen_adapter

        name = chosen_adapter(None, workdir, "`tackroom run NAME PROMPT`").name
    options: dict[str, Any] = parse_option_args(option)
    if model:
        options["model"] = model
    live = None if as_json or events else Live(console())
    result = _until_signal(
        arun(
            name,
            prompt,
            options=options,
            workdir=workdir,
            mock=mock,
            mock_text=mock_text,
            base_url=base_url,
            api_key_env=api_key_env,
            mock_log=mock_log,
            timeout_s=timeout,
            home="real" if home == "real" else "isolated",
            credentials=credentials,
            on_event=jsonl_event if events else (live.event if live else None),
            profile=_profile(profile, no_profile),
            gateway=gateway,
            capture=capture,
            transport=transport,
            sandbox=sandbox,
            network=None if network is None else "none" if network == "none" else "host",
            image=image,
        )
    )
    if result.dropped or result.withheld:
        from rich.markup import escape

        err = console(stderr=True)
        for note in (*result.dropped, *result.withheld):
            err.print(f"[yellow]{escape(safe(note))}[/]", highlight=False)
    try:
        if as_json:
            write_json(result.to_json(), indent=2)
        elif events:
            jsonl_result(result)
        elif live:
            live.summary(result)
            _capture_summary(result)
    except BrokenPipeError:
        # Whoever read stdout went away (`| head`); the run and its result.json are complete.
        _quiet_stdout()
    raise typer.Exit(_exit_code(result))


def _capture_summary(result: Result) -> None:
    """One line on what the run's gateway saw (``--capture``)."""
    if result.capture is None:
        return
    calls = result.capture["calls"]
    usage = result.capture["usage"]
    if calls is None:  # a running gateway's record could not be had: the reason is in failures
        for failure in result.capture["failures"]:
            console(stderr=True).print(f"gateway: {failure}", markup=False)
        return
    line = f"gateway: {len(calls)} model call(s) captured"
    if usage is not None:
        figures = ", ".join(
            f"{name} {'n/r' if usage['usage'][name] is None else usage['usage'][name]}"
            for name in usage["usage"]
        )
        cost = usage["cost_usd"] if usage["cost_usd"] is not None else "unknown"
        line += f"; {figures}; cost ${cost}" + (
            f" ({usage['unpriced_calls']} unpriced)" if usage["unpriced_calls"] else ""
        )
    console(stderr=True).print(line, markup=False)


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so the flush at exit does not fail on the closed pipe too."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _until_signal(run: Coroutine[Any, Any, Result]) -> Result:
    """Run to the end, or until a stop signal: then cancel the run (which cleans up) and exit 128+N."""
    received: list[int] = []

    async def main() -> Result:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        for number in _STOP_SIGNALS:
            loop.add_signal_handler(number, _stop, task, number, received)
        try:
            return await run
        finally:
            for number in _STOP_SIGNALS:
                loop.remove_signal_handler(number)

    try:
        return asyncio.run(main())
    except asyncio.CancelledError:
        if not received:
            raise
        name = signal.Signals(received[0]).name
        with contextlib.suppress(OSError):  # after SIGHUP the terminal may be gone
            print(f"tackroom: stopped by {name}; the harness and its processes were stopped", file=sys.stderr)
        raise typer.Exit(128 + received[0]) from None


def _stop(task: asyncio.Task[Result], number: int, received: list[int]) -> None:
    # A second signal while the first is being handled stops the cleanup's graceful part too.
    received.append(number)
    task.cancel()


def _name_and_prompt(words: list[str], workdir: Path) -> tuple[str | None, str]:
    """``NAME PROMPT``, or ``PROMPT`` alone for the project's harness (a lone adapter name lacks one)."""
    if len(words) > 2:
        raise typer.BadParameter(
            f"expected [NAME] PROMPT, got {len(words)} words: quote the prompt", param_hint="[NAME] PROMPT"
        )
    _params.prompt(words[-1])
    if len(words) == 2:
        return words[0], words[1]
    from tackroom.adapters.resolve import load_adapters

    if words[0] in load_adapters(project=workdir):
        raise typer.BadParameter(f"missing PROMPT after the adapter name {words[0]!r}", param_hint="PROMPT")
    return None, words[0]


def _profile(dirs: list[Path], no_profile: bool) -> Profile | Literal["default"] | None:
    if no_profile:
        return None
    if not dirs:
        return "default"  # the global profile and the project's, for isolated runs
    from tackroom.cli.profile import load

    return load(dirs) or None


def _exit_code(result: Result) -> int:
    if result.ok:
        return 0
    if result.timed_out:
        return 124
    return result.exit_code if result.exit_code not in (None, 0) else 1
