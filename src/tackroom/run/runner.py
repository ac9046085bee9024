"""Run a harness headless: plan, isolate, point at a model, spawn, parse, fold into a Result.

The plan comes from the same code path as ``tackroom adapters render``. Each
run gets a run directory (``$XDG_DATA_HOME/tackroom/runs/<id>/``) holding the
harness's own home, a private TMPDIR, the raw stdout, the parsed events and
``result.json``, so a run never touches the caller's real config unless asked.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import secrets
import shutil
import time
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from tackroom.errors import HarnessNotFoundError, HarnessVersionError, ProfileError, RunError
from tackroom.harnesses import data_dir, locate, probe_version, version_key
from tackroom.plan import Endpoint
from tackroom.project import Project, load_project
from tackroom.run.home import prepare_home, stage_files
from tackroom.run.result import Result
from tackroom.run.session import EventCallback, execute
from tackroom.run.store import holding

if TYPE_CHECKING:
    from tackroom.adapters.resolve import Adapter, AdapterSet
    from tackroom.mock import MockServer, Script, ToolVocabulary
    from tackroom.profile.model import Profile

HomeMode = Literal["isolated", "real"]


def run(adapter: str | Adapter | None, prompt: str, **kwargs: Any) -> Result:
    """Run a harness to completion (see :func:`arun` for the arguments)."""
    return asyncio.run(arun(adapter, prompt, **kwargs))


async def arun(
    adapter: str | Adapter | None,
    prompt: str,
    *,
    options: Mapping[str, Any] | None = None,
    workdir: Path | None = None,
    mock: Script | Path | str | None = None,
    mock_text: str | None = None,
    base_url: str | None = None,
    mock_log: Path | None = None,
    timeout_s: float = 600.0,
    home: HomeMode = "isolated",
    credentials: bool = False,
    on_event: EventCallback | None = None,
    adapters: AdapterSet | None = None,
    runs_dir: Path | None = None,
    environ: Mapping[str, str] | None = None,
    profile: Profile | Literal["default"] | None = "default",
) -> Result:
    """Run ``adapter`` once on ``prompt`` and return its :class:`Result`.

    The repository holding ``workdir`` may have a project file
    (``tackroom.toml``): with ``adapter=None`` its ``harness`` is run, its
    ``[options]`` apply under ``options`` (an option given here wins), and its
    ``profile`` names the project's profile directory.

    ``mock`` (a script, or a script file) or ``mock_text`` starts the keyless
    mock model and points the harness at it; ``base_url`` points it at any
    endpoint; with neither the harness uses its own defaults and the caller's
    keys (passed by name only). ``home="real"`` runs against the caller's real
    home; ``credentials=True`` copies the harness's real config dirs into the
    isolated home first. ``profile`` is rendered natively into the isolated
    home before the harness starts: ``"default"`` is the global profile plus
    the project's (isolated runs only), None is none. What the harness cannot
    express is dropped by name (``Result.dropped``), and the variables its MCP
    servers and hooks reference are passed through by name.

    A run that fails before its harness starts (an unknown adapter, a missing
    or too old harness, a bad profile, a plan error) leaves no run directory.
    """
    environ = os.environ if environ is None else environ
    workdir = _workdir(workdir)
    _check_run_values(timeout_s, mock is not None or mock_text is not None, base_url)
    project = load_project(workdir)
    resolved = _resolve(adapter, adapters, workdir, project)
    options = project.options_with(options) if project is not None else options
    located = locate(resolved, environ)
    if located is None:
        raise HarnessNotFoundError(
            f"{resolved.executable!r} (adapter {resolved.name!r}) is not installed by tackroom and "
            f"not on PATH: run `tackroom install {resolved.name}`"
        )
    version = located.version or probe_version(resolved, located)
    check_min_version(resolved, version, located.path)
    loaded = _profile(profile, workdir, home)
    root = runs_dir or data_dir(environ) / "runs"
    missing = [d for d in (root, *root.parents) if not d.exists()]
    try:
        run_dir = _new_run_dir(root, resolved.name)
    except OSError as exc:  # $XDG_DATA_HOME is a file, read-only, full
        raise RunError(f"cannot create a run directory in {str(root)!r}: {exc.strerror or exc}") from exc
    with ExitStack() as stack:
        stack.enter_context(holding(run_dir))  # `tackroom runs prune` leaves a running run alone
        with _removed_on_failure(run_dir, missing):
            server = _start_mock(resolved, mock, mock_text, mock_log, stack)
            url = server.base_url if server is not None else base_url
            endpoint = Endpoint(url) if url else None
            run_home = run_dir / "home" if home == "isolated" else None
            plan = resolved.plan(
                prompt, options=options, workdir=workdir, home=run_home, endpoint=endpoint, environ=environ
            )
            prepare_home(resolved, run_dir, run_home, credentials, environ)
            stage_files(plan.files)
            env = plan.environ()
            dropped = _render_profile(loaded, resolved, run_home, workdir, environ, env)
            if located.bin_dir is not None:
                # A managed install's runtime (node, bun) comes first, as it was installed with.
                env["PATH"] = f"{located.bin_dir}{os.pathsep}{env.get('PATH', '')}"
            argv = [str(located.path), *plan.argv[1:]]
        result = await execute(resolved, argv, env, workdir, plan.stdin, timeout_s, run_dir, on_event)
        result = replace(result, harness_version=version, dropped=dropped)
        (run_dir / "result.json").write_text(json.dumps(result.to_json(), indent=2), encoding="utf-8")
        return result


def _workdir(workdir: Path | None) -> Path:
    path = (workdir or Path.cwd()).resolve()
    if not path.is_dir():
        raise RunError(f"working directory {str(path)!r} is not a directory: create it or pass another")
    return path


def _check_run_values(timeout_s: float, mock: bool, base_url: str | None) -> None:
    """Refuse values that would make a run wait forever, end at once, or go nowhere."""
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, int | float) or not 0 < timeout_s < math.inf:
        raise RunError(f"timeout must be a positive, finite number of seconds, got {timeout_s!r}")
    if mock and base_url is not None:
        raise RunError("choose one model endpoint: a mock script, mock text, or a base URL")
    if base_url is not None:
        check_base_url(base_url)


def check_base_url(url: str) -> str:
    """``url`` if a harness can be pointed at it (``http(s)://host[:port][/path]``), else a RunError."""
    if not _http_url(url):
        raise RunError(f"base URL {url!r} is not an http(s)://host[:port][/path] URL")
    return url


def _http_url(url: str) -> bool:
    if any(c.isspace() or ord(c) < 32 for c in url):
        return False
    try:
        parts = urlsplit(url)
        port = parts.port  # raises ValueError when not a number in 0-65535
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname) and port != 0


def check_min_version(adapter: Adapter, version: str | None, path: Path) -> None:
    """:class:`HarnessVersionError` when the harness is older than the adapter's ``min_version``.

    A version that could not be read is not refused (it was not observed to be old).
    """
    minimum = adapter.effective.get("min_version")
    if minimum is None or version is None or _older(version, str(minimum)) is False:
        return
    verified = adapter.verified_with
    fix = f"run `tackroom install {adapter.name}`" + (f" (installs {verified})" if verified else "")
    raise HarnessVersionError(
        f"{adapter.harness} {version} ({path}) is older than {minimum}, the oldest version adapter "
        f"{adapter.name!r} works with: {fix}, or point the adapter's executable at a newer one"
    )


def _older(version: str, minimum: str) -> bool:
    have, need = version_key(version), version_key(minimum)
    width = max(len(have), len(need))
    return have + (0,) * (width - len(have)) < need + (0,) * (width - len(need))


@contextmanager
def _removed_on_failure(run_dir: Path, made: list[Path]) -> Iterator[None]:
    """Remove ``run_dir`` if setting the run up fails: only a run whose harness started keeps one.

    ``made`` are the directories above it this run created (``runs/`` on a first
    run): they go too if nothing else is in them, so a failed run writes nothing.
    """
    try:
        yield
    except BaseException:
        shutil.rmtree(run_dir, ignore_errors=True)
        for directory in made:  # deepest first; rmdir refuses one another run has used meanwhile
            with suppress(OSError):
                directory.rmdir()
        raise


def _profile(profile: Profile | Literal["default"] | None, workdir: Path, home: HomeMode) -> Profile | None:
    """The profile to render: the one given, or the default layers (global, then the project's)."""
    if profile != "default":
        return profile
    if home != "isolated":  # the default profile is for isolated homes; a real one is the user's own
        return None
    from tackroom.adapters.resolve import config_dir, resolve_builtins
    from tackroom.profile.load import load_profile, profile_dirs

    dirs = profile_dirs(workdir, config_dir())
    return load_profile(dirs, harnesses=resolve_builtins()) if dirs else None


def _render_profile(
    profile: Profile | None,
    adapter: Adapter,
    home: Path | None,
    workdir: Path,
    environ: Mapping[str, str],
    env: dict[str, str],
) -> tuple[str, ...]:
    if profile is None:
        return ()
    from tackroom.profile.render import plan_render, referenced_variables, write

    if home is None:
        raise ProfileError(
            "a profile is rendered into the run's isolated home; with --home real, write it yourself with "
            "`tackroom profile render NAME --scope project`"
        )
    rendered = write(plan_render(profile, adapter, root=home, workdir=workdir))
    for name in referenced_variables(profile.for_harness(adapter.harness)):
        if name in environ:
            env.setdefault(name, environ[name])
    return tuple(str(drop) for drop in rendered.drops)


def _resolve(
    adapter: str | Adapter | None, adapters: AdapterSet | None, workdir: Path, project: Project | None
) -> Adapter:
    """The adapter named here, else the project's ``harness``."""
    if adapter is not None and not isinstance(adapter, str):
        return adapter
    name = adapter if adapter is not None else (project.harness if project is not None else None)
    if name is None:
        where = project.file if project is not None else "a tackroom.toml at the repository root"
        raise RunError(
            f'no adapter named: name one (`tackroom run NAME PROMPT`) or set harness = "NAME" in {where}'
        )
    if adapters is None:
        from tackroom.adapters.resolve import load_adapters

        adapters = load_adapters(project=workdir)
    return adapters[name]


def _new_run_dir(root: Path, name: str) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = root / f"{stamp}-{name}-{secrets.token_hex(3)}"
    path.mkdir(parents=True)
    return path


def vocabulary(adapter: Adapter) -> ToolVocabulary:
    """The mock's tool vocabulary, from the adapter's ``[tools]`` table."""
    from tackroom.mock import ToolName, ToolVocabulary

    table: dict[str, Any] = dict(adapter.effective.get("tools", {}))
    mcp = table.pop("mcp", None)
    call = table.pop("mcp_call", None)
    mcp_call = ToolName(call["tool"], wrap=dict(call["args"])) if call else None
    tools = {
        neutral: ToolName(entry["name"], dict(entry.get("args", {})))
        if isinstance(entry, dict)
        else ToolName(entry)
        for neutral, entry in table.items()
    }
    if mcp:
        return ToolVocabulary(tools=tools, mcp=mcp, mcp_call=mcp_call)
    return ToolVocabulary(tools=tools, mcp_call=mcp_call)


def _start_mock(
    adapter: Adapter, script: Script | Path | str | None, text: str | None, log: Path | None, stack: ExitStack
) -> MockServer | None:
    if script is None and text is None:
        return None
    from tackroom.mock import MockServer, Script, load_script

    if text is not None:
        loaded = Script.text(text)
    elif isinstance(script, Script):
        loaded = script
    else:
        loaded = load_script(Path(str(script)))
    server = MockServer(script=loaded, tools=vocabulary(adapter), log_path=log)
    return stack.enter_context(server)
