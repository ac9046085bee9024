"""``tackroom run``: run a harness headless and show its normalized events.

This module is the command's grammar and its checks; :mod:`tackroom.cli._run` runs it (signals,
exit codes), and :func:`tackroom.cli.quick.run_quickly` takes its common forms without Typer.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import typer

from tackroom.cli import _params

if TYPE_CHECKING:
    from tackroom.profile.model import Profile


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
    auth: str | None = typer.Option(
        None,
        "--auth",
        help="How the harness signs in to the endpoint: api-key, or oauth (a subscription: its token "
        "variable, or its own sign-in with --credentials). Default: a key if one is set, else a sign-in.",
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
    from tackroom.cli._run import go
    from tackroom.options import parse_option_args

    if home not in ("isolated", "real"):
        raise typer.BadParameter("must be 'isolated' or 'real'", param_hint="--home")
    if network not in (None, "host", "none"):
        raise typer.BadParameter("must be 'host' or 'none'", param_hint="--network")
    if auth not in (None, "api-key", "oauth"):
        raise typer.BadParameter("must be 'api-key' or 'oauth'", param_hint="--auth")
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
    code = go(
        name,
        prompt,
        options=options,
        show="json" if as_json else "events" if events else "live",
        profile=_profile(profile, no_profile),
        workdir=workdir,
        mock=mock,
        mock_text=mock_text,
        base_url=base_url,
        api_key_env=api_key_env,
        auth=auth,
        mock_log=mock_log,
        timeout_s=timeout,
        home="real" if home == "real" else "isolated",
        credentials=credentials,
        gateway=gateway,
        capture=capture,
        transport=transport,
        sandbox=sandbox,
        network=None if network is None else "none" if network == "none" else "host",
        image=image,
    )
    raise typer.Exit(code)


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
    from tackroom.cli._render import load

    return load(dirs) or None
