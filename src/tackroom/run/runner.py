"""Run a harness headless: a spec, prepared, its services started, launched, folded into a Result.

A run is a value before it is a process: :class:`~tackroom.run.spec.RunSpec`
says what it is; :mod:`~tackroom.run.prepare` resolves it on this machine and
makes its run directory (``$XDG_DATA_HOME/tackroom/runs/<id>/``: the harness's
own home, a private TMPDIR, the raw stdout, the parsed events and
``result.json``); :mod:`~tackroom.run.services` starts the mock and the
gateway it talks to; this module composes them, spawns the harness, folds its
result and attributes its traces. The plan comes from the same code path as
``tackroom adapters render``, so what render shows is what runs.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from contextlib import ExitStack
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from tackroom._loop import run_to_end
from tackroom.errors import RunSpecError, TackroomError
from tackroom.project import load_project
from tackroom.run.prepare import Local, Ready, prepare, removed_on_failure, stage
from tackroom.run.process import off_loop
from tackroom.run.result import Result, save
from tackroom.run.sandbox import Network, get_sandbox
from tackroom.run.services import captured, fetched, start_services
from tackroom.run.services import vocabulary as vocabulary
from tackroom.run.session import EventCallback, execute
from tackroom.run.spec import AuthMode as AuthMode
from tackroom.run.spec import HomeMode as HomeMode
from tackroom.run.spec import ProfileRef, RunSpec, checked_workdir
from tackroom.run.spec import check_base_url as check_base_url
from tackroom.values import iso

if TYPE_CHECKING:
    from tackroom.adapters.adapter import Adapter
    from tackroom.adapters.resolve import AdapterSet
    from tackroom.harnesses import Located
    from tackroom.mock import MockServer, Script
    from tackroom.profile.model import Profile
    from tackroom.trace.attribute import RunTraces


def run(adapter: RunSpec | str | Adapter | None, prompt: str | None = None, **kwargs: Any) -> Result:
    """Run a harness to completion (see :func:`arun` for the arguments).

    Inside a running event loop (Jupyter, an async application) the run gets a loop of its own in
    a thread, and this call waits for it as any blocking call would; ``await arun(...)`` lets the
    loop go on meanwhile.

    A stand-in harness shows the whole path without a real one: a shell script that prints the last
    line of Claude Code's stream, run as an operator adapter extending ``claude-code``:

    >>> import json, pathlib, tackroom
    >>> agent, config = pathlib.Path("agent").resolve(), pathlib.Path("config")
    >>> done = {"type": "result", "result": "Hello", "usage": {"input_tokens": 12, "output_tokens": 3}}
    >>> _ = agent.write_text(f"#!/bin/sh\\necho '{json.dumps(done)}'\\n")
    >>> agent.chmod(0o755)
    >>> config.mkdir()
    >>> table = f'[adapter.mine]\\nextends = "claude-code"\\nexecutable = "{agent}"\\n'
    >>> _ = (config / "tackroom.toml").write_text(table)
    >>> result = tackroom.run("mine", "Say hello", adapters=tackroom.load_adapters(config=config))
    >>> result.ok, result.final_text, result.usage.input, result.argv[1:3]
    (True, 'Hello', 12, ('-p', 'Say hello'))
    """
    return run_to_end(lambda: arun(adapter, prompt, **kwargs))


async def arun(
    adapter: RunSpec | str | Adapter | None,
    prompt: str | None = None,
    *,
    options: Mapping[str, Any] | None = None,
    workdir: Path | None = None,
    mock: Script | Path | str | MockServer | None = None,
    mock_text: str | None = None,
    base_url: str | None = None,
    api_key_env: str | None = None,
    auth: AuthMode | None = None,
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
    capture_db: Path | str | None = None,
    transport: str | None = None,
    sandbox: str | None = None,
    network: Network | None = None,
    image: str | None = None,
    writable: tuple[Path, ...] = (),
    binds: Mapping[str, Path] | None = None,
) -> Result:
    """Run ``adapter`` once on ``prompt`` and return its :class:`Result`; or run a :class:`RunSpec`.

    ``arun(spec)`` runs the value; ``arun(adapter, prompt, **fields)`` is the same run with the spec
    made from the keywords (a bad value is a :class:`~tackroom.errors.RunSpecError` before anything
    starts). What is not part of the value comes beside it either way: ``on_event``, ``adapters``,
    ``runs_dir``, ``environ``, ``executable``, ``mock_log``, ``capture_db``, and an ``Adapter``,
    ``Profile`` or serving ``MockServer`` object.

    >>> import asyncio, tackroom
    >>> asyncio.run(tackroom.arun("codex"))
    Traceback (most recent call last):
    ...
    tackroom.errors.RunSpecError: a run needs its prompt: arun(adapter, prompt, ...) or arun(spec)
    >>> spec = tackroom.RunSpec(prompt="fix the bug", adapter="codex", timeout_s=60)
    >>> asyncio.run(tackroom.arun(spec, home="real"))  # the spec says it all: nothing beside it
    Traceback (most recent call last):
    ...
    tackroom.errors.RunSpecError: a run spec says what the run is: home cannot be given beside it

    Runs go on side by side with ``asyncio.gather(arun(...), arun(...))``; :func:`run` shows one
    whole run, of a stand-in harness.

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
    the wire's usual one (``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``, ...), or, with no key set,
    a subscription sign-in (``auth="oauth"`` asks for one, ``"api-key"`` for a key): the token
    variable the adapter's ``[model_endpoint.oauth]`` names (``CLAUDE_CODE_OAUTH_TOKEN``), or,
    with ``credentials=True``, the harness's own sign-in copied in (Codex's ChatGPT login). With
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
    it saw with its usage (stored in the state database, or in ``capture_db``: a SQLite file or a
    ``postgresql://`` URL).
    Either way the harness's base URL is set through its adapter's
    ``model_endpoint`` data, as for any endpoint.

    ``sandbox`` runs the harness in a registered sandbox (``none``, on the host, by default;
    ``bwrap``: the host read-only, the user's homes hidden, only its places writable), and
    ``network="none"`` keeps it from everything but its model endpoint where the sandbox can
    (either, when not given, as the project file says, else ``none`` and ``host``); ``image`` is
    the container image a ``docker`` or ``podman`` sandbox runs the harness in;
    ``writable`` names more host paths the sandbox lets it write (a probe's scratch); ``binds``
    shows host directories at other paths inside too (``{"/app": cell / "app"}``: an evaluation
    task's paths), which needs a sandbox that builds its own root (``bwrap``, ``docker``).

    A run that fails before its harness starts (an unknown adapter, a missing
    or too old harness, a bad profile, a plan error) leaves no run directory.
    """
    environ = os.environ if environ is None else environ
    local = Local(
        environ=environ,
        adapters=adapters,
        runs_dir=runs_dir,
        executable=executable,
        mock_log=mock_log,
        capture_db=capture_db,
        writable=tuple(writable),
        binds=tuple(sorted((binds or {}).items())),
    )
    if isinstance(adapter, RunSpec):
        given = {
            "prompt": prompt,
            "options": options,
            "workdir": workdir,
            "mock": mock,
            "mock_text": mock_text,
            "base_url": base_url,
            "api_key_env": api_key_env,
            "auth": auth,
            "harness_version": harness_version,
            "gateway": gateway,
            "transport": transport,
        }
        set_too = sorted(name for name, value in given.items() if value is not None)
        set_too += [n for n, v in (("capture", capture), ("credentials", credentials)) if v]
        set_too += ["timeout_s"] * (timeout_s != 600.0) + ["home"] * (home != "isolated")
        set_too += ["sandbox"] * (sandbox is not None) + ["network"] * (network is not None)
        set_too += ["image"] * (image is not None)
        set_too += ["profile"] * (profile != "default" and _given(profile) is None)
        if set_too:
            raise RunSpecError(
                f"a run spec says what the run is: {', '.join(set_too)} cannot be given beside it"
            )
        if _given(profile) is not None and adapter.profile != "given":
            raise RunSpecError(
                f"a Profile object was given beside a run spec whose profile is {adapter.profile!r}: "
                "make the spec with profile='given'"
            )
        spec = adapter
        local = replace(local, profile=_given(profile))
    else:
        if prompt is None:
            raise RunSpecError("a run needs its prompt: arun(adapter, prompt, ...) or arun(spec)")
        try:
            spec, local = _spec_of(
                local,
                adapter,
                prompt,
                options=options,
                workdir=workdir,
                mock=mock,
                mock_text=mock_text,
                base_url=base_url,
                api_key_env=api_key_env,
                auth=auth,
                timeout_s=timeout_s,
                home=home,
                credentials=credentials,
                profile=profile,
                harness_version=harness_version,
                gateway=gateway,
                capture=capture,
                transport=transport,
                sandbox=sandbox,
                network=network,
                image=image,
            )
        except TackroomError as exc:
            exc.adapter = exc.adapter or (
                adapter if isinstance(adapter, str) else getattr(adapter, "name", None)
            )
            raise
    return await _run_spec(spec, local, on_event)


WARM = (
    "tackroom.run.prepare",
    "tackroom.run.services",
    "tackroom.run.process",
    "tackroom.run.session",
    "tackroom.mock.server",
    "tackroom.mock._http",
    "tackroom.sandboxes.bwrap",
    "tackroom.trace.attribute",
    "tackroom.trace.index",
)
"""The modules a run loads on its way (each imported lazily, where it is needed)."""


def warm(families: Iterable[str] = (), *, capture: bool = False) -> None:
    """Load what runs will use, ahead of the first: the run path, the mock, the sandboxes, the
    transcript readers, the gateway when the runs are captured, and each named family. A process
    that starts many runs (an evaluation) pays this once at its start, not inside its first run."""
    from importlib import import_module

    from tackroom.families import get_family

    for name in WARM:
        import_module(name)
    if capture:
        import_module("tackroom.gateway.server")
        import_module("tackroom.gateway.reconcile")
    for family in families:
        get_family(family)


def _spec_of(
    local: Local,
    adapter: str | Adapter | None,
    prompt: str,
    *,
    mock: Script | Path | str | MockServer | None,
    mock_text: str | None,
    profile: Profile | Literal["default"] | None,
    harness_version: str | None,
    options: Mapping[str, Any] | None,
    workdir: Path | None,
    **fields: Any,
) -> tuple[RunSpec, Local]:
    """The spec the keyword form describes, and what of it stays local (objects of this process)."""
    if mock is not None and mock_text is not None:
        raise RunSpecError("choose one mock: a script (mock=...) or a text answer (mock_text=...)")
    script: Script | None = None
    if mock is not None or mock_text is not None:
        from tackroom.mock import MockServer, Script, load_script

        if isinstance(mock, MockServer):
            local = replace(local, serving=mock)
            script = mock.script or Script()
        elif isinstance(mock, Script):
            script = mock
        elif mock is not None:
            script = load_script(Path(str(mock)))
        else:
            script = Script.text(str(mock_text))
    if adapter is not None and not isinstance(adapter, str):
        local = replace(local, adapter=adapter)
        adapter = adapter.name
    given = _given(profile)
    local = replace(local, profile=given)
    if fields.get("sandbox") is None or fields.get("network") is None:
        # not asked for: the project file's choice, else no sandbox and the host's network
        project = load_project(checked_workdir(workdir))
        if fields.get("sandbox") is None:
            fields["sandbox"] = project.sandbox if project is not None and project.sandbox else "none"
        if fields.get("network") is None:
            fields["network"] = project.network if project is not None and project.network else "host"
    # a name the spec does not know ("mine") is its error, not a silent "none"
    ref = cast(ProfileRef, "given" if given is not None else "none" if profile is None else profile)
    spec = RunSpec(
        prompt=prompt,
        adapter=adapter,
        version=harness_version,
        options=options or {},
        workdir=Path(workdir) if workdir is not None else Path.cwd(),
        mock=script,
        profile=ref,
        **fields,
    )
    return spec, local


def _given(profile: Profile | Literal["default"] | None) -> Profile | None:
    """The Profile object handed in, if one was (not ``"default"``, not None)."""
    return None if profile is None or isinstance(profile, str) else profile


async def _run_spec(spec: RunSpec, local: Local, on_event: EventCallback | None) -> Result:
    """Prepare, start the services, stage, launch, fold: the run ``spec`` says, on this machine."""
    stack = ExitStack()
    try:
        # Everything before the spawn reads files, runs `--version`, copies credentials and renders
        # the profile: off the loop, so a caller's other tasks (other runs) keep going meanwhile.
        ready = await off_loop(partial(_set_up, spec, local, stack))
        try:
            return await _launch(ready, spec.timeout_s, on_event, spec.home, spec.gateway, local.environ)
        except TackroomError as exc:  # the harness started: its run directory is kept
            exc.adapter = exc.adapter or ready.adapter.name
            exc.run_dir = exc.run_dir or ready.run_dir
            raise
    finally:
        await off_loop(stack.close)


def _set_up(spec: RunSpec, local: Local, stack: ExitStack) -> Ready:
    """Prepare the run, start its services and stage its home; whatever is started is entered into
    ``stack``. A run whose harness never started leaves no run directory."""
    prepared = prepare(spec, local, stack)
    with removed_on_failure(prepared.run_dir, prepared.made):
        try:
            services = start_services(
                spec,
                prepared.adapter,
                prepared.run_dir.name,
                stack,
                environ=local.environ,
                serving=local.serving,
                mock_log=local.mock_log,
                capture_db=local.capture_db,
                bind="127.0.0.1" if get_sandbox(spec.sandbox).reaches_host_loopback else "0.0.0.0",
            )
        except TackroomError as exc:
            exc.adapter = exc.adapter or prepared.adapter.name
            raise
        return stage(spec, prepared, services.endpoint, services.captor, local, stack)


async def _launch(
    ready: Ready,
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
        sandbox=ready.sandbox,
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
        auth=plan.auth,
    )
    traces = await off_loop(partial(_traces, ready.adapter, result, started, ready.env, environ, ready.root))
    result = replace(result, trace=traces)
    if ready.captor is not None:
        calls = await off_loop(partial(captured, ready.captor, ready.run_dir.name, result.usage))
        result = replace(result, capture=calls)
    elif gateway is not None:
        asked = await off_loop(partial(fetched, gateway, ready.run_dir.name, result.usage))
        result = replace(result, capture=asked)
    await off_loop(partial(save, result))
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


def _explained(result: Result, untrusted: str | None) -> str | None:
    """A failed run's error, with the trust flag tackroom withheld when that may be why."""
    if result.ok or untrusted is None:
        return result.error
    return f"{result.error} ({untrusted})" if result.error else untrusted
