"""Prepare a run: everything it needs decided and made before its harness can start.

:func:`prepare` resolves a :class:`~tackroom.run.spec.RunSpec` on this machine:
the adapter (named, the project's, or the detected one; another transport's
when asked), the harness install and its version (the adapter's data is then
the one for that version, and ``min_version`` is held), the profile and the
run directory. :func:`stage` then plans the run against the endpoint its
services give, and makes its home: credentials, staged files, the rendered
profile. Nothing here starts a process but the harness's ``--version``.
"""

from __future__ import annotations

import os
import secrets
import shutil
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tackroom.adapters.plan import Endpoint, Plan, plan_run
from tackroom.adapters.versions import at_least
from tackroom.errors import (
    HarnessNotFoundError,
    HarnessVersionError,
    LaunchError,
    ProfileError,
    RunSpecError,
    TackroomError,
)
from tackroom.harnesses import Located, data_dir, locate, probe_version
from tackroom.paths import check_name, inside
from tackroom.project import Project, load_project
from tackroom.run.home import prepare_home, remove_copies
from tackroom.run.sandbox import Places, Sandbox, check_capabilities, get_sandbox
from tackroom.run.spec import RunSpec
from tackroom.run.store import holding

if TYPE_CHECKING:
    from tackroom.adapters.adapter import Adapter
    from tackroom.adapters.resolve import AdapterSet
    from tackroom.gateway import Gateway
    from tackroom.profile.model import Profile


@dataclass(frozen=True)
class Local:
    """What a run takes from the process it is started in, beside its spec: never part of the value."""

    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)
    """The caller's environment: the allowlist, ``env.pass`` and the adapter's locations read it."""
    adapter: Adapter | None = None
    """The adapter object the caller handed in (the spec holds its name)."""
    adapters: AdapterSet | None = None
    """The adapters to resolve names in (default: loaded for the workdir)."""
    runs_dir: Path | None = None
    """Where run directories go (default ``$XDG_DATA_HOME/tackroom/runs``)."""
    executable: Located | None = None
    """Run this install of the harness (a probe of one version of several installed)."""
    serving: Any = None
    """A :class:`~tackroom.mock.MockServer` the caller already serves (the spec's mock is its script)."""
    mock_log: Path | None = None
    capture_db: Path | str | None = None
    profile: Profile | None = None
    """The profile object of a spec whose ``profile`` is ``given``."""
    writable: tuple[Path, ...] = ()
    """More host paths a sandbox lets the harness write (a probe's scratch directory)."""
    binds: tuple[tuple[str, Path], ...] = ()
    """Host directories the sandbox shows at other paths too (an evaluation cell's ``/app``)."""


@dataclass(frozen=True)
class Prepared:
    """A run resolved on this machine: its adapter at the version that runs, and its run directory."""

    adapter: Adapter
    version: str | None
    located: Located
    options: Mapping[str, Any]
    profile: Profile | None
    workdir: Path
    run_dir: Path
    root: Path
    """The directory of run directories this run's is in."""
    made: list[Path]
    """The directories above ``run_dir`` this run created (removed again if setting it up fails)."""


@dataclass(frozen=True)
class Ready:
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
    sandbox: Sandbox


def prepare(spec: RunSpec, local: Local, stack: ExitStack) -> Prepared:
    """Resolve the adapter, transport and version, locate the harness, load the profile, make the run
    directory (held against ``tackroom runs prune`` until ``stack`` closes)."""
    named = spec.adapter
    environ = local.environ
    try:
        workdir = spec.workdir
        project = load_project(workdir)
        resolved = resolve_adapter(local.adapter or spec.adapter, local.adapters, workdir, project)
        named = resolved.name
        if spec.transport is not None:
            resolved = by_transport(resolved, spec.transport, local.adapters, workdir)
            named = resolved.name
        options = project.options_with(spec.options) if project is not None else spec.options
        located = local.executable or locate(resolved, environ, version=spec.version)
        if located is None:
            raise HarnessNotFoundError(not_found(resolved, spec.version))
        # The version question is bounded by the run's own time (it is asked once per binary, then cached).
        version = located.version or probe_version(resolved, located, min(15.0, spec.timeout_s))
        # From here on everything reads the adapter as it applies to the version that runs.
        resolved = resolved.at(version)
        check_min_version(resolved, version, located.path)
        check_capabilities(
            get_sandbox(spec.sandbox), spec.network, spec.image, spec.capture, bool(local.binds)
        )
        loaded = _profile(spec, local)
        root = local.runs_dir or data_dir(environ) / "runs"
        made = [d for d in (root, *root.parents) if not d.exists()]
        try:
            run_dir = new_run_dir(root, resolved.name)
        except OSError as exc:  # $XDG_DATA_HOME is a file, read-only, full
            raise LaunchError(
                f"cannot create a run directory in {str(root)!r}: {exc.strerror or exc}"
            ) from exc
        stack.enter_context(holding(run_dir))  # `tackroom runs prune` leaves a running run alone
    except TackroomError as exc:
        exc.adapter = exc.adapter or named
        raise
    return Prepared(resolved, version, located, options, loaded, workdir, run_dir, root, made)


TRACE_ID_VAR = "TACKROOM_TRACE_ID"
"""The run's trace id in its harness's environment (seed 002's ``HARNESS_EVALUATOR_TRACE_ID``): the
run id, which is also the trace id its calls carry through a gateway (``/t/<run id>``), so a hook,
an MCP server or a wrapper the harness starts can tag what it does with the same id."""


def stage(
    spec: RunSpec,
    prepared: Prepared,
    endpoint: Endpoint | None,
    captor: Gateway | None,
    local: Local,
    stack: ExitStack,
) -> Ready:
    """Plan the run against ``endpoint`` and make its home: credentials (taken out again when ``stack``
    closes), the plan's files, the rendered profile."""
    adapter, workdir, environ = prepared.adapter, prepared.workdir, local.environ
    try:
        run_home = prepared.run_dir / "home" if spec.home == "isolated" else None
        sandbox = get_sandbox(spec.sandbox)(_places(prepared, run_home, local), spec.network, spec.image)
        stack.callback(sandbox.stop)
        if endpoint is not None:  # the harness reaches the mock or the gateway as the sandbox shows it
            endpoint = replace(
                endpoint,
                base_url=sandbox.visible_url(endpoint.base_url),
                auth=spec.auth,
                credentials=spec.credentials,
            )
        planned = partial(
            plan_run,
            adapter,
            spec.prompt,
            options=prepared.options,
            workdir=workdir,
            home=run_home,
            endpoint=endpoint,
            environ=environ,
        )
        plan = planned()
        copied: list[Path] = []
        stack.callback(remove_copies, copied)
        prepare_home(adapter, prepared.run_dir, run_home, spec.credentials, environ, copied)
        sandbox.stage(plan.files, run_home)
        # The spec's own variables first: tackroom's (home, endpoint, key, trace id) win over them.
        env = {**spec.env, **plan.environ(), TRACE_ID_VAR: prepared.run_dir.name}
        dropped, withheld, told = render_profile(
            prepared.profile, adapter, run_home, workdir, environ, env, endpoint, sandbox.visible_path
        )
        if told:  # the harness reads what the profile wrote only when its argv names it
            plan = planned(profile_argv=told)
        located = prepared.located
        if located.bin_dir is not None:
            # A managed install's runtime (node, bun) comes first, as it was installed with.
            env["PATH"] = f"{located.bin_dir}{os.pathsep}{env.get('PATH', '')}"
        argv = [str(located.path), *plan.argv[1:]]
    except TackroomError as exc:
        exc.adapter = exc.adapter or adapter.name
        raise
    return Ready(
        adapter,
        prepared.version,
        plan,
        argv,
        env,
        workdir,
        prepared.run_dir,
        prepared.root,
        captor,
        dropped,
        withheld,
        sandbox,
    )


def _places(prepared: Prepared, home: Path | None, local: Local) -> Places:
    """The run's places on the host, and what its harness must read wherever it is installed."""
    located = prepared.located
    readable = [located.path, *([located.bin_dir] if located.bin_dir is not None else [])]
    environ = local.environ
    installs = data_dir(environ) / "harnesses"
    if installs in located.path.parents:  # a managed install: the whole version's directory
        name, version = located.path.relative_to(installs).parts[:2]
        readable.append(installs / name / version)
    real_home = environ.get("HOME")
    return Places(
        prepared.run_dir,
        prepared.workdir,
        home,
        real_home=Path(real_home) if real_home else None,
        read_only=tuple(readable),
        writable=local.writable,
        binds=local.binds,
    )


def _profile(spec: RunSpec, local: Local) -> Profile | None:
    """The profile to render: the one given, or the default layers (global, then the project's).

    The project's hooks and MCP servers are in the default only once the user
    trusted the project; what was left out is in ``Profile.withheld``.
    """
    if spec.profile == "given":
        if local.profile is None:
            raise RunSpecError(
                "this run spec's profile is 'given': pass the Profile object beside it (profile=...)"
            )
        return local.profile
    if spec.profile == "none" or spec.home != "isolated":
        # the default profile is for isolated homes; a real one is the user's own
        return None
    from tackroom.adapters.resolve import config_dir, resolve_builtins
    from tackroom.profile.places import profile_dirs

    environ, config = local.environ, config_dir(local.environ)
    dirs = profile_dirs(spec.workdir, config)
    if not dirs:
        return None  # no profile to read: nothing of the loader, the model or trust is needed
    from tackroom.trust import default_profile

    loaded = default_profile(
        spec.workdir, config=config, harnesses=resolve_builtins(), environ=environ, dirs=dirs
    )
    # An empty profile renders nothing, but what it withheld is still said.
    return loaded if loaded or loaded.withheld else None


def not_found(adapter: Adapter, version: str | None) -> str:
    if version is not None:
        return (
            f"{adapter.harness} {version} (adapter {adapter.name!r}) is not installed by tackroom: run "
            f"`tackroom install {adapter.name} --version {version}`"
        )
    return (
        f"{adapter.executable!r} (adapter {adapter.name!r}) is not installed by tackroom and "
        f"not on PATH: run `tackroom install {adapter.name}`"
    )


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
def removed_on_failure(run_dir: Path, made: list[Path]) -> Iterator[None]:
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


def render_profile(
    profile: Profile | None,
    adapter: Adapter,
    home: Path | None,
    workdir: Path,
    environ: Mapping[str, str],
    env: Mapping[str, str],
    endpoint: Endpoint | None,
    visible: Callable[[Path], Path] = lambda path: path,
) -> tuple[tuple[str, ...], tuple[str, ...], list[str]]:
    """Render the profile into the run's home: (items dropped, things withheld, each with why; the
    arguments the harness reads what was written by, its paths as ``visible`` shows them)."""
    if profile is None:
        return (), (), []
    from tackroom.profile.render import argv_for, plan_render, referenced_variables, write

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
    told = argv_for(rendered, adapter, workdir=workdir, visible=visible)
    return tuple(str(drop) for drop in rendered.drops), tuple(withheld), told


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


def resolve_adapter(
    adapter: str | Adapter | None, adapters: AdapterSet | None, workdir: Path, project: Project | None
) -> Adapter:
    """The adapter named here, else the project's ``harness``, else the one the repository's markers pick."""
    if adapter is not None and not isinstance(adapter, str):
        return adapter
    if adapters is None:
        from tackroom.adapters.resolve import load_adapters

        adapters = load_adapters(project=workdir)
    if adapter is not None:
        return adapters[adapter]
    from tackroom.detect import choose_harness  # markers are read only when no name was given

    how = "`tackroom run NAME PROMPT`, or run(NAME, ...) in Python"
    return adapters[choose_harness(adapter, workdir, project=project, adapters=adapters, how=how).adapter]


def _protocol(family: str) -> str:
    """The transport a family speaks: its ``protocol`` (the acp families'), else its own name."""
    from tackroom.families import get_family

    spoken = getattr(get_family(family), "protocol", None)
    return spoken if isinstance(spoken, str) and spoken else family


def by_transport(adapter: Adapter, transport: str, adapters: AdapterSet | None, workdir: Path) -> Adapter:
    """The adapter that reaches ``adapter``'s harness over ``transport``, as its ``transports`` table says."""
    if transport in (adapter.family, _protocol(adapter.family)):
        return adapter
    declared: dict[str, str] = dict(adapter.effective.get("transports", {}))
    target = declared.get(transport)
    if target is None:
        ways = ", ".join(sorted({adapter.family, *declared}))
        raise RunSpecError(
            f"adapter {adapter.name!r} declares no {transport!r} transport (it is reached by: {ways}); "
            f'add {transport} = "<adapter>" under [adapter.{adapter.name}.transports] to declare one'
        )
    if adapters is None:
        from tackroom.adapters.resolve import load_adapters

        adapters = load_adapters(project=workdir)
    if target not in adapters:
        raise RunSpecError(
            f"adapter {adapter.name!r} reaches {transport!r} through adapter {target!r}, which does not exist"
        )
    reached = adapters[target]
    if _protocol(reached.family) != transport:
        raise RunSpecError(
            f"adapter {adapter.name!r} reaches {transport!r} through adapter {target!r}, whose family "
            f"{reached.family!r} does not speak {transport!r}"
        )
    return reached


def new_run_dir(root: Path, name: str) -> Path:
    # The adapter name is operator data ("x/../.." is a valid TOML key): one safe name, or no run.
    stamp = time.strftime("%Y%m%d-%H%M%S")
    run_id = check_name(f"{stamp}-{check_name(name, 'adapter name')}-{secrets.token_hex(3)}", "run id")
    root.mkdir(parents=True, exist_ok=True)
    path = inside(root, run_id)
    path.mkdir()
    return path
