"""Run a harness headless: plan, isolate, point at a model, spawn, parse, fold into a Result.

The plan comes from the same code path as ``tackroom adapters render``. Each
run gets a run directory (``$XDG_DATA_HOME/tackroom/runs/<id>/``) holding the
harness's own home, a private TMPDIR, the raw stdout, the parsed events and
``result.json``, so a run never touches the caller's real config unless asked.
"""

from __future__ import annotations

import asyncio
import math
import os
import secrets
import shutil
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar
from urllib.parse import urlsplit

from tackroom._loop import run_to_end
from tackroom.adapters.plan import Endpoint, Plan, plan_run
from tackroom.adapters.versions import at_least
from tackroom.errors import HarnessNotFoundError, HarnessVersionError, ProfileError, RunError, TackroomError
from tackroom.harnesses import Located, data_dir, locate, probe_version
from tackroom.paths import check_name, inside
from tackroom.project import Project, load_project
from tackroom.redact import redact_text
from tackroom.run.home import prepare_home, remove_copies, stage_files
from tackroom.run.result import Result, save
from tackroom.run.session import EventCallback, execute
from tackroom.run.store import holding
from tackroom.values import iso

if TYPE_CHECKING:
    from tackroom.adapters.adapter import Adapter
    from tackroom.adapters.resolve import AdapterSet
    from tackroom.gateway import Gateway
    from tackroom.mock import MockServer, Script, ToolVocabulary
    from tackroom.profile.model import Profile
    from tackroom.trace.attribute import RunTraces
    from tackroom.trace.events import Usage

HomeMode = Literal["isolated", "real"]
T = TypeVar("T")


def run(adapter: str | Adapter | None, prompt: str, **kwargs: Any) -> Result:
    """Run a harness to completion (see :func:`arun` for the arguments).

    Inside a running event loop (Jupyter, an async application) the run gets a loop of its own in
    a thread, and this call waits for it as any blocking call would; ``await arun(...)`` lets the
    loop go on meanwhile.
    """
    return run_to_end(lambda: arun(adapter, prompt, **kwargs))


async def arun(
    adapter: str | Adapter | None,
    prompt: str,
    *,
    options: Mapping[str, Any] | None = None,
    workdir: Path | None = None,
    mock: Script | Path | str | MockServer | None = None,
    mock_text: str | None = None,
    base_url: str | None = None,
    api_key_env: str | None = None,
    mock_log: Path | None = None,
    timeout_s: float = 600.0,
    home: HomeMode = "isolated",
    credentials: bool = False,
    on_event: EventCallback | None = None,
    adapters: AdapterSet | None = None,
    runs_dir: Path | None = None,
    environ: Mapping[str, str] | None = None,
    profile: Profile | Literal["default"] | None = "default",
    harness_version: str | None = None,
    executable: Located | None = None,
    gateway: str | None = None,
    capture: bool = False,
    capture_db: Path | None = None,
    transport: str | None = None,
) -> Result:
    """Run ``adapter`` once on ``prompt`` and return its :class:`Result`.

    ``transport`` reaches the same harness another way its adapter declares
    (``[adapter.X.transports]``, e.g. ``acp = "claude-code-acp"``): that
    adapter is run instead. The adapter's own family needs no declaration.

    The repository holding ``workdir`` may have a project file
    (``tackroom.toml``): with ``adapter=None`` its ``harness`` is run, its
    ``[options]`` apply under ``options`` (an option given here wins), and its
    ``profile`` names the project's profile directory. With ``adapter=None``
    and no ``harness`` there, the adapter the repository's markers pick is run
    (:func:`tackroom.detect.choose_harness`); none, or a tie, is a
    :class:`~tackroom.errors.DetectionError` listing the candidates.

    ``mock`` (a script, or a script file) or ``mock_text`` starts the keyless
    mock model and points the harness at it (a running ``MockServer`` is used
    as it is and left running); a mock run gets the mock's dummy key and none
    of the caller's credentials. ``base_url`` points the harness at any other
    endpoint with the caller's own key: the variable ``api_key_env`` names, else
    the wire's usual one (``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``, ...). With
    neither the harness uses its own defaults and the caller's keys (its
    adapter's ``env.pass``). ``home="real"`` runs against the caller's real
    home; ``credentials=True`` copies the harness's real config dirs into the
    isolated home first, and takes them out again when the run ends, however
    it ends.

    ``profile`` is rendered natively into the isolated home before the harness
    starts: ``"default"`` is the global profile plus the project's (isolated
    runs only; the project's hooks and MCP servers only once the user trusted
    it, ``tackroom trust``), None is none. What the harness cannot express is
    dropped by name (``Result.dropped``). A ``${VAR}`` its MCP servers and
    hooks reference reaches the harness only through the allowlist or the
    adapter's ``env.pass``; what was kept back, and why, is in
    ``Result.withheld``.

    ``harness_version`` runs that managed install (``tackroom install NAME
    --version V``); by default the verified version, else the newest installed,
    else the executable on PATH. Either way the adapter's data is the one for
    the version that runs (its ``since`` entries up to that version), and
    ``Result.adapter_hash`` is that adapter's hash.
    ``executable`` runs that install of the harness instead (a probe of one
    version of several installed).

    ``gateway`` (the URL of a running ``tackroom gateway``) sends the run's
    model calls through it, under the trace id ``<run id>``; ``capture=True``
    starts a gateway for the run itself, in front of the mock, ``base_url`` or
    the provider's own API, and ``Result.capture`` then holds every model call
    it saw with its usage (stored in the state database, or in ``capture_db``).
    Either way the harness's base URL is set through its adapter's
    ``model_endpoint`` data, as for any endpoint.

    A run that fails before its harness starts (an unknown adapter, a missing
    or too old harness, a bad profile, a plan error) leaves no run directory.
    """
    environ = os.environ if environ is None else environ
    stack = ExitStack()
    try:
        # Everything before the spawn reads files, runs `--version`, copies credentials and renders
        # the profile: off the loop, so a caller's other tasks (other runs) keep going meanwhile.
        ready = await _off_loop(
            partial(
                _prepare,
                stack,
                adapter,
                prompt,
                options=options,
                workdir=workdir,
                mock=mock,
                mock_text=mock_text,
                base_url=base_url,
                api_key_env=api_key_env,
                mock_log=mock_log,
                timeout_s=timeout_s,
                home=home,
                credentials=credentials,
                adapters=adapters,
                runs_dir=runs_dir,
                environ=environ,
                profile=profile,
                harness_version=harness_version,
                executable=executable,
                gateway=gateway,
                capture=capture,
                capture_db=capture_db,
                transport=transport,
            )
        )
        try:
            return await _launch(ready, timeout_s, on_event, home, gateway, environ)
        except TackroomError as exc:  # the harness started: its run directory is kept
            exc.adapter = exc.adapter or ready.adapter.name
            exc.run_dir = exc.run_dir or ready.run_dir
            raise
    finally:
        await _off_loop(stack.close)


async def _off_loop(work: Callable[[], T]) -> T:
    """``work()`` in a worker thread. If the caller is cancelled meanwhile, the work still ends
    before the cancellation goes on, so nothing it holds is closed under it."""
    future = asyncio.get_running_loop().run_in_executor(None, work)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        await asyncio.wait([future])
        raise


@dataclass(frozen=True)
class _Ready:
    """A run set up and about to spawn: its adapter at the version that runs, plan, argv and env."""

    adapter: Adapter
    version: str | None
    plan: Plan
    argv: list[str]
    env: dict[str, str]
    workdir: Path
    run_dir: Path
    root: Path
    captor: Gateway | None
    dropped: tuple[str, ...]
    withheld: tuple[str, ...]


def _prepare(
    stack: ExitStack,
    adapter: str | Adapter | None,
    prompt: str,
    *,
    options: Mapping[str, Any] | None,
    workdir: Path | None,
    mock: Script | Path | str | MockServer | None,
    mock_text: str | None,
    base_url: str | None,
    api_key_env: str | None,
    mock_log: Path | None,
    timeout_s: float,
    home: HomeMode,
    credentials: bool,
    adapters: AdapterSet | None,
    runs_dir: Path | None,
    environ: Mapping[str, str],
    profile: Profile | Literal["default"] | None,
    harness_version: str | None,
    executable: Located | None,
    gateway: str | None,
    capture: bool,
    capture_db: Path | None,
    transport: str | None,
) -> _Ready:
    """Resolve, locate, probe, make the run directory, start the services, plan, stage and render.

    Whatever is started is entered into ``stack``, which the caller closes once the run is over.
    """
    named = adapter if isinstance(adapter, str) else adapter.name if adapter is not None else None
    try:
        workdir = _workdir(workdir)
        mocked = mock is not None or mock_text is not None
        _check_run_values(timeout_s, mocked, base_url, credentials, api_key_env, gateway, capture)
        project = load_project(workdir)
        resolved = _resolve(adapter, adapters, workdir, project)
        named = resolved.name
        if transport is not None:
            resolved = _by_transport(resolved, transport, adapters, workdir)
            named = resolved.name
        options = project.options_with(options) if project is not None else options
        located = executable or locate(resolved, environ, version=harness_version)
        if located is None:
            raise HarnessNotFoundError(_not_found(resolved, harness_version))
        version = located.version or probe_version(resolved, located)
        # From here on everything reads the adapter as it applies to the version that runs.
        resolved = resolved.at(version)
        check_min_version(resolved, version, located.path)
        loaded = _profile(profile, workdir, home, environ)
        root = runs_dir or data_dir(environ) / "runs"
        missing = [d for d in (root, *root.parents) if not d.exists()]
        try:
            run_dir = _new_run_dir(root, resolved.name)
        except OSError as exc:  # $XDG_DATA_HOME is a file, read-only, full
            raise RunError(f"cannot create a run directory in {str(root)!r}: {exc.strerror or exc}") from exc
        stack.enter_context(holding(run_dir))  # `tackroom runs prune` leaves a running run alone
        with _removed_on_failure(run_dir, missing):
            server = _start_mock(resolved, mock, mock_text, mock_log, stack)
            endpoint = _endpoint(server, base_url, api_key_env)
            captor = _start_gateway(server, base_url, environ, capture_db, stack) if capture else None
            through = gateway or (captor.url if captor is not None else None)
            if through is not None:
                endpoint = _through_gateway(endpoint, through, run_dir.name, api_key_env)
            run_home = run_dir / "home" if home == "isolated" else None
            plan = plan_run(
                resolved,
                prompt,
                options=options,
                workdir=workdir,
                home=run_home,
                endpoint=endpoint,
                environ=environ,
            )
            copied: list[Path] = []
            stack.callback(remove_copies, copied)
            prepare_home(resolved, run_dir, run_home, credentials, environ, copied)
            stage_files(plan.files, run_home)
            env = plan.environ()
            dropped, withheld = _render_profile(loaded, resolved, run_home, workdir, environ, env, endpoint)
            if located.bin_dir is not None:
                # A managed install's runtime (node, bun) comes first, as it was installed with.
                env["PATH"] = f"{located.bin_dir}{os.pathsep}{env.get('PATH', '')}"
            argv = [str(located.path), *plan.argv[1:]]
    except TackroomError as exc:
        exc.adapter = exc.adapter or named
        raise
    return _Ready(resolved, version, plan, argv, env, workdir, run_dir, root, captor, dropped, withheld)


async def _launch(
    ready: _Ready,
    timeout_s: float,
    on_event: EventCallback | None,
    home: HomeMode,
    gateway: str | None,
    environ: Mapping[str, str],
) -> Result:
    """Spawn the prepared run, fold its result, and attribute its traces and captured calls."""
    plan = ready.plan
    started = datetime.now(UTC)
    result = await execute(
        ready.adapter,
        ready.argv,
        ready.env,
        ready.workdir,
        plan.stdin,
        timeout_s,
        ready.run_dir,
        on_event,
        options=plan.options,
    )
    result = replace(
        result,
        argv=(ready.argv[0], *plan.shown_argv()[1:]),
        harness_version=ready.version,
        dropped=ready.dropped,
        withheld=(*plan.withheld, *ready.withheld),
        error=_explained(result, plan.untrusted),
        started_at=iso(started),
        workdir=str(ready.workdir),
        home=home,
    )
    traces = await _off_loop(partial(_traces, ready.adapter, result, started, ready.env, environ, ready.root))
    result = replace(result, trace=traces)
    if ready.captor is not None:
        captured = await _off_loop(partial(_captured, ready.captor, ready.run_dir.name, result))
        result = replace(result, capture=captured)
    elif gateway is not None:
        fetched = await _off_loop(partial(_fetched, gateway, ready.run_dir.name, result.usage))
        result = replace(result, capture=fetched)
    await _off_loop(partial(save, result))
    return result


def _traces(
    adapter: Adapter,
    result: Result,
    started: datetime,
    env: Mapping[str, str],
    environ: Mapping[str, str],
    root: Path,
) -> RunTraces | None:
    """The sessions the run produced, from its harness's own logs; None when they cannot be read.

    A log is outside input: whatever is wrong with it is an issue in the
    result, never a failed run.
    """
    from tackroom.run.store import list_runs
    from tackroom.trace.attribute import run_traces, windows

    isolated = result.home == "isolated"
    ended = started + timedelta(seconds=result.duration_s)
    others = [] if isolated else [w for w in windows(list_runs(root)) if w.run_id != result.run_dir.name]
    real_home = Path(environ.get("HOME") or Path.home())
    try:
        return run_traces(
            adapter,
            result.run_dir,
            workdir=Path(result.workdir or "."),
            isolated=isolated,
            started=started,
            ended=ended,
            env=env if isolated else environ,
            home=result.run_dir / "home" if isolated else real_home,
            others=others,
        )
    except (OSError, TackroomError):
        return None


def _not_found(adapter: Adapter, version: str | None) -> str:
    if version is not None:
        return (
            f"{adapter.harness} {version} (adapter {adapter.name!r}) is not installed by tackroom: run "
            f"`tackroom install {adapter.name} --version {version}`"
        )
    return (
        f"{adapter.executable!r} (adapter {adapter.name!r}) is not installed by tackroom and "
        f"not on PATH: run `tackroom install {adapter.name}`"
    )


def _endpoint(server: MockServer | None, base_url: str | None, api_key_env: str | None) -> Endpoint | None:
    if server is not None:
        return Endpoint.for_mock(server.base_url)
    if base_url:
        return Endpoint(base_url, api_key_env=api_key_env)
    return None


def _start_gateway(
    server: MockServer | None,
    base_url: str | None,
    environ: Mapping[str, str],
    db: Path | None,
    stack: ExitStack,
) -> Gateway:
    """A gateway for this run alone, in front of the mock, the base URL, or the providers' own APIs."""
    from tackroom.gateway import Gateway
    from tackroom.state.db import StateDB

    upstream = (
        server.base_url if server is not None else Endpoint(base_url).url_for(False) if base_url else None
    )
    return stack.enter_context(Gateway(upstream, db=StateDB(db) if db else StateDB.default(environ)))


def _through_gateway(endpoint: Endpoint | None, url: str, run_id: str, api_key_env: str | None) -> Endpoint:
    """The endpoint the harness gets: the gateway, with the run id as the trace id in its path."""
    check_base_url(url)
    traced = f"{url.rstrip('/')}/t/{run_id}"
    if endpoint is None:
        return Endpoint(traced, api_key_env=api_key_env)
    return replace(endpoint, base_url=traced)


def _captured(captor: Gateway, run_id: str, result: Result) -> dict[str, Any]:
    """The run's calls as its gateway stored them, their usage summed, and beside the harness's report."""
    captor.flush()
    return _capture(captor.store.calls(run=run_id), captor.failures, result.usage)


def _capture(calls: list[dict[str, Any]], failures: list[str], reported: Usage) -> dict[str, Any]:
    from tackroom.gateway.reconcile import reconcile
    from tackroom.gateway.store import summarize

    summed = summarize(calls, "run")
    return {
        "calls": calls,
        "usage": summed[0] if summed else None,
        "reconciliation": reconcile(reported, calls),
        "failures": failures,
    }


MAX_CALLS_BYTES = 256 * 1024 * 1024
FETCH_TIMEOUT_S = 30.0
"""How long a run waits for a running gateway's record of its calls (the gateway waits up to 10 s
for calls still in flight, then stores what it has)."""


def _fetched(gateway: str, run_id: str, reported: Usage) -> dict[str, Any]:
    """The run's calls as a running gateway (``--gateway URL``) stored them, asked over HTTP.

    The answer is outside input: anything but the gateway's own shape leaves the capture's
    calls unknown (None), with the reason in ``failures``; the run itself is not failed.
    """
    import urllib.error
    import urllib.request

    import orjson

    url = f"{gateway.rstrip('/')}/_tackroom/calls?run={run_id}"
    shown = redact_text(gateway)
    try:
        with urllib.request.urlopen(url, timeout=FETCH_TIMEOUT_S) as answer:
            data = answer.read(MAX_CALLS_BYTES + 1)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return _uncaptured(f"the gateway at {shown} did not give the run's calls: {exc}")
    if len(data) > MAX_CALLS_BYTES:
        return _uncaptured(f"the gateway at {shown} sent more than {MAX_CALLS_BYTES} bytes of calls")
    try:
        value = orjson.loads(data)
        calls, failures = value["calls"], value["failures"]
        if not isinstance(calls, list) or not all(isinstance(f, str) for f in failures):
            raise TypeError("not a list of calls")
        return _capture(calls, list(failures), reported)
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, ArithmeticError, AttributeError) as exc:
        return _uncaptured(f"the gateway at {shown} answered something else than its calls ({exc!r})")


def _uncaptured(reason: str) -> dict[str, Any]:
    return {"calls": None, "usage": None, "reconciliation": None, "failures": [reason]}


def _explained(result: Result, untrusted: str | None) -> str | None:
    """A failed run's error, with the trust flag tackroom withheld when that may be why."""
    if result.ok or untrusted is None:
        return result.error
    return f"{result.error} ({untrusted})" if result.error else untrusted


def _workdir(workdir: Path | None) -> Path:
    path = (workdir or Path.cwd()).resolve()
    if not path.is_dir():
        raise RunError(f"working directory {str(path)!r} is not a directory: create it or pass another")
    return path


def _check_run_values(
    timeout_s: float,
    mock: bool,
    base_url: str | None,
    credentials: bool,
    api_key_env: str | None,
    gateway: str | None = None,
    capture: bool = False,
) -> None:
    """Refuse values that would make a run wait forever, end at once, go nowhere, or leak a credential."""
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, int | float) or not 0 < timeout_s < math.inf:
        raise RunError(f"timeout must be a positive, finite number of seconds, got {timeout_s!r}")
    if mock and base_url is not None:
        raise RunError("choose one model endpoint: a mock script, mock text, or a base URL")
    if mock and credentials:
        raise RunError(
            "a run against the mock gets no real credential: drop --credentials (credentials=True), or point "
            "the harness at a real endpoint with --base-url"
        )
    if api_key_env is not None and base_url is None and gateway is None:
        raise RunError("--api-key-env names the key for --base-url or --gateway; give the endpoint too")
    if base_url is not None:
        check_base_url(base_url)
    if gateway is not None:
        check_base_url(gateway)
        if capture:
            raise RunError(
                "--gateway sends the run through a running gateway; --capture starts one: choose one"
            )
        if mock or base_url is not None:
            raise RunError(
                "a running gateway forwards to its own upstream: drop --mock/--base-url, "
                "or use --capture to start a gateway in front of them"
            )


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
    if minimum is None or version is None or at_least(version, str(minimum)) is not False:
        return
    verified = adapter.verified_with
    fix = f"run `tackroom install {adapter.name}`" + (f" (installs {verified})" if verified else "")
    raise HarnessVersionError(
        f"{adapter.harness} {version} ({path}) is older than {minimum}, the oldest version adapter "
        f"{adapter.name!r} works with: {fix}, or point the adapter's executable at a newer one"
    )


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


def _profile(
    profile: Profile | Literal["default"] | None, workdir: Path, home: HomeMode, environ: Mapping[str, str]
) -> Profile | None:
    """The profile to render: the one given, or the default layers (global, then the project's).

    The project's hooks and MCP servers are in the default only once the user
    trusted the project; what was left out is in ``Profile.withheld``.
    """
    if profile != "default":
        return profile
    if home != "isolated":  # the default profile is for isolated homes; a real one is the user's own
        return None
    from tackroom.adapters.resolve import config_dir, resolve_builtins
    from tackroom.trust import default_profile

    loaded = default_profile(
        workdir, config=config_dir(environ), harnesses=resolve_builtins(), environ=environ
    )
    # An empty profile renders nothing, but what it withheld is still said.
    return loaded if loaded or loaded.withheld else None


def _render_profile(
    profile: Profile | None,
    adapter: Adapter,
    home: Path | None,
    workdir: Path,
    environ: Mapping[str, str],
    env: Mapping[str, str],
    endpoint: Endpoint | None,
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Render the profile into the run's home: (items dropped, things withheld), each with why."""
    if profile is None:
        return (), ()
    from tackroom.profile.render import plan_render, referenced_variables, write

    if home is None:
        raise ProfileError(
            "a profile is rendered into the run's isolated home; with --home real, write it yourself with "
            "`tackroom profile render NAME --scope project`"
        )
    rendered = write(plan_render(profile, adapter, root=home, workdir=workdir))
    withheld = list(profile.withheld)
    for name in referenced_variables(profile.for_harness(adapter.harness)):
        # What the allowlist and env.pass let through is in env already; nothing else is added.
        if name in environ and name not in env:
            withheld.append(_variable_withheld(name, adapter, endpoint, environ))
    return tuple(str(drop) for drop in rendered.drops), tuple(withheld)


def _variable_withheld(
    name: str, adapter: Adapter, endpoint: Endpoint | None, environ: Mapping[str, str]
) -> str:
    passed: list[str] = list(adapter.effective.get("env", {}).get("pass", ()))
    said = f"${{{name}}}: withheld, though the profile's MCP servers or hooks reference it"
    if name in passed and endpoint is not None:
        return f"{said}: a run against an endpoint tackroom points the harness at gets no other credential"
    from tackroom.adapters.resolve import config_dir

    listed = ", ".join(f'"{n}"' for n in (*passed, name))
    # One table per adapter across operator files: extend the one there is, or start one.
    where = (
        adapter.source if adapter.source != "builtin" else config_dir(environ) / "adapters.d" / "50-pass.toml"
    )
    return (
        f"{said}: only the allowlist and the adapter's env.pass reach the harness. To pass it, add "
        f"pass = [{listed}] under [adapter.{adapter.name}.env] in the operator file {where}"
    )


def _resolve(
    adapter: str | Adapter | None, adapters: AdapterSet | None, workdir: Path, project: Project | None
) -> Adapter:
    """The adapter named here, else the project's ``harness``, else the one the repository's markers pick."""
    if adapter is not None and not isinstance(adapter, str):
        return adapter
    from tackroom.detect import choose_harness

    if adapters is None:
        from tackroom.adapters.resolve import load_adapters

        adapters = load_adapters(project=workdir)
    how = "`tackroom run NAME PROMPT`, or run(NAME, ...) in Python"
    return adapters[choose_harness(adapter, workdir, project=project, adapters=adapters, how=how).adapter]


def _protocol(family: str) -> str:
    """The transport a family speaks: its ``protocol`` (the acp families'), else its own name."""
    from tackroom.families import get_family

    spoken = getattr(get_family(family), "protocol", None)
    return spoken if isinstance(spoken, str) and spoken else family


def _by_transport(adapter: Adapter, transport: str, adapters: AdapterSet | None, workdir: Path) -> Adapter:
    """The adapter that reaches ``adapter``'s harness over ``transport``, as its ``transports`` table says."""
    if transport in (adapter.family, _protocol(adapter.family)):
        return adapter
    declared: dict[str, str] = dict(adapter.effective.get("transports", {}))
    target = declared.get(transport)
    if target is None:
        ways = ", ".join(sorted({adapter.family, *declared}))
        raise RunError(
            f"adapter {adapter.name!r} declares no {transport!r} transport (it is reached by: {ways}); "
            f'add {transport} = "<adapter>" under [adapter.{adapter.name}.transports] to declare one'
        )
    if adapters is None:
        from tackroom.adapters.resolve import load_adapters

        adapters = load_adapters(project=workdir)
    if target not in adapters:
        raise RunError(
            f"adapter {adapter.name!r} reaches {transport!r} through adapter {target!r}, which does not exist"
        )
    reached = adapters[target]
    if _protocol(reached.family) != transport:
        raise RunError(
            f"adapter {adapter.name!r} reaches {transport!r} through adapter {target!r}, whose family "
            f"{reached.family!r} does not speak {transport!r}"
        )
    return reached


def _new_run_dir(root: Path, name: str) -> Path:
    # The adapter name is operator data ("x/../.." is a valid TOML key): one safe name, or no run.
    stamp = time.strftime("%Y%m%d-%H%M%S")
    run_id = check_name(f"{stamp}-{check_name(name, 'adapter name')}-{secrets.token_hex(3)}", "run id")
    root.mkdir(parents=True, exist_ok=True)
    path = inside(root, run_id)
    path.mkdir()
    return path


def vocabulary(adapter: Adapter) -> ToolVocabulary:
    """The mock's tool vocabulary, from the adapter's ``[tools]`` table."""
    from tackroom.mock import ToolName, ToolVocabulary

    table: dict[str, Any] = dict(adapter.effective.get("tools", {}))
    mcp = table.pop("mcp", None)
    call = table.pop("mcp_call", None)
    mcp_call = ToolName(call["tool"], wrap=dict(call["args"])) if call else None
    answer = table.pop("text_call", None)
    text_call = ToolName(answer["tool"], wrap=dict(answer["args"])) if answer else None
    tools = {
        neutral: ToolName(entry["name"], dict(entry.get("args", {})))
        if isinstance(entry, dict)
        else ToolName(entry)
        for neutral, entry in table.items()
    }
    if mcp:
        return ToolVocabulary(tools=tools, mcp=mcp, mcp_call=mcp_call, text_call=text_call)
    return ToolVocabulary(tools=tools, mcp_call=mcp_call, text_call=text_call)


def _start_mock(
    adapter: Adapter,
    script: Script | Path | str | MockServer | None,
    text: str | None,
    log: Path | None,
    stack: ExitStack,
) -> MockServer | None:
    if script is None and text is None:
        return None
    from tackroom.mock import MockServer, Script, load_script

    if isinstance(script, MockServer):
        return script  # the caller's, already serving: it stays up after the run
    if text is not None:
        loaded = Script.text(text)
    elif isinstance(script, Script):
        loaded = script
    else:
        loaded = load_script(Path(str(script)))
    server = MockServer(script=loaded, tools=vocabulary(adapter), log_path=log)
    return stack.enter_context(server)
