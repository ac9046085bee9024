"""Run a harness headless: plan, isolate, point at a model, spawn, parse, fold into a Result.

The plan comes from the same code path as ``tackroom adapters render``. Each
run gets a run directory (``$XDG_DATA_HOME/tackroom/runs/<id>/``) holding the
harness's own home, a private TMPDIR, the raw stdout, the parsed events and
``result.json``, so a run never touches the caller's real config unless asked.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import time
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tackroom.adapters import templates
from tackroom.errors import HarnessNotFoundError, RunError
from tackroom.families import get_family
from tackroom.harnesses import data_dir, locate, probe_version
from tackroom.plan import Endpoint, StagedFile
from tackroom.run.process import run_process
from tackroom.run.result import Result, summarize
from tackroom.trace.events import Event

if TYPE_CHECKING:
    from tackroom.adapters.resolve import Adapter, AdapterSet
    from tackroom.mock import MockServer, Script, ToolVocabulary
    from tackroom.profile.model import Profile

EventCallback = Callable[[Event], None]
HomeMode = Literal["isolated", "real"]


def run(adapter: str | Adapter, prompt: str, **kwargs: Any) -> Result:
    """Run a harness to completion (see :func:`arun` for the arguments)."""
    return asyncio.run(arun(adapter, prompt, **kwargs))


async def arun(
    adapter: str | Adapter,
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
    profile: Profile | None = None,
) -> Result:
    """Run ``adapter`` once on ``prompt`` and return its :class:`Result`.

    ``mock`` (a script, or a script file) or ``mock_text`` starts the keyless
    mock model and points the harness at it; ``base_url`` points it at any
    endpoint; with neither the harness uses its own defaults and the caller's
    keys (passed by name only). ``home="real"`` runs against the caller's real
    home; ``credentials=True`` copies the harness's real config dirs into the
    isolated home first. ``profile`` is rendered natively into the isolated
    home before the harness starts; what the harness cannot express is dropped
    by name (``Result.dropped``), and the variables its MCP servers and hooks
    reference are passed through by name.
    """
    environ = os.environ if environ is None else environ
    workdir = (workdir or Path.cwd()).resolve()
    resolved = _resolve(adapter, adapters, workdir)
    located = locate(resolved, environ)
    if located is None:
        raise HarnessNotFoundError(
            f"{resolved.executable!r} (adapter {resolved.name!r}) is not installed by tackroom and "
            f"not on PATH: run `tackroom install {resolved.name}`"
        )
    if (mock is not None or mock_text is not None) and base_url is not None:
        raise RunError("choose one model endpoint: a mock script, mock text, or a base URL")
    run_dir = _new_run_dir(runs_dir or data_dir(environ) / "runs", resolved.name)
    with ExitStack() as stack:
        server = _start_mock(resolved, mock, mock_text, mock_log, stack)
        url = server.base_url if server is not None else base_url
        endpoint = Endpoint(url) if url else None
        run_home = run_dir / "home" if home == "isolated" else None
        plan = resolved.plan(
            prompt, options=options, workdir=workdir, home=run_home, endpoint=endpoint, environ=environ
        )
        _prepare_home(resolved, run_dir, run_home, credentials, environ)
        _stage(plan.files)
        env = plan.environ()
        dropped = _render_profile(profile, resolved, run_home, workdir, environ, env)
        if located.bin_dir is not None:
            # A managed install's runtime (node, bun) comes first, as it was installed with.
            env["PATH"] = f"{located.bin_dir}{os.pathsep}{env.get('PATH', '')}"
        argv = [str(located.path), *plan.argv[1:]]
        result = await _spawn(resolved, argv, env, workdir, plan.stdin, timeout_s, run_dir, on_event)
        version = located.version or probe_version(resolved, located)
        result = replace(result, harness_version=version, dropped=dropped)
        (run_dir / "result.json").write_text(json.dumps(result.to_json(), indent=2), encoding="utf-8")
        return result


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
    from tackroom.profile.render import ProfileError, plan_render, referenced_variables, write

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


def _resolve(adapter: str | Adapter, adapters: AdapterSet | None, workdir: Path) -> Adapter:
    if not isinstance(adapter, str):
        return adapter
    if adapters is None:
        from tackroom.adapters.resolve import load_adapters

        adapters = load_adapters(project=workdir)
    return adapters[adapter]


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


def _prepare_home(
    adapter: Adapter, run_dir: Path, home: Path | None, credentials: bool, environ: Mapping[str, str]
) -> None:
    (run_dir / "tmp").mkdir(exist_ok=True)
    if home is None:
        return
    home.mkdir(exist_ok=True)
    _copy_git_identity(environ, home)
    relocations: Mapping[str, str] = adapter.effective.get("home", {})
    for default in relocations.values():
        # Some harnesses refuse a relocation variable naming a directory that does not exist.
        templates.expand_path(default, env={}, home=str(home), workdir=str(run_dir)).mkdir(
            parents=True, exist_ok=True
        )
    if not credentials:
        return
    real = environ.get("HOME", str(Path.home()))
    for default in relocations.values():
        if default.strip() in ("~", "~/"):
            continue  # never copy a whole home
        source = templates.expand_path(default, env={}, home=real, workdir=str(run_dir))
        target = templates.expand_path(default, env={}, home=str(home), workdir=str(run_dir))
        if source.is_dir():
            # Whole directories, so token refresh and SQLite sidecars keep working.
            shutil.copytree(source, target, dirs_exist_ok=True, symlinks=True)


def _copy_git_identity(environ: Mapping[str, str], home: Path) -> None:
    """Copy the caller's git config into the isolated home.

    Without an identity some harnesses write one into the repository's own
    .git/config (aider sets user.name "Your Name"); a copy keeps the user's
    identity without letting the harness write to the real file.
    """
    real = Path(environ.get("HOME", str(Path.home())))
    for rel in (".gitconfig", ".config/git/config"):
        source = real / rel
        if source.is_file() and not (home / rel).exists():
            (home / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, home / rel)


def _stage(files: tuple[StagedFile, ...]) -> None:
    for staged in files:
        staged.path.parent.mkdir(parents=True, exist_ok=True)
        content = staged.content
        if staged.path.exists():
            content = _merge_existing(staged, content)
        # YAML is a superset of JSON: a JSON document is a valid models.yml.
        if staged.format in ("json", "yaml"):
            staged.path.write_text(json.dumps(content, indent=2) + "\n", encoding="utf-8")
        else:
            raise RunError(f"cannot stage {staged.path}: writing {staged.format} is not supported yet")


def _merge_existing(staged: StagedFile, content: dict[str, Any]) -> dict[str, Any]:
    """Merge into a file that is already there, keeping every key tackroom does not set."""
    text = staged.path.read_text(encoding="utf-8")
    if not text.strip():
        return content
    try:
        existing = json.loads(text)
    except ValueError as exc:
        raise RunError(
            f"cannot merge into {staged.path}: it is not JSON ({staged.format}); move it aside or use an "
            "isolated home"
        ) from exc
    return _deep_merge(existing, content) if isinstance(existing, dict) else content


def _deep_merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out


async def _spawn(
    adapter: Adapter,
    argv: list[str],
    env: dict[str, str],
    workdir: Path,
    stdin: str | None,
    timeout_s: float,
    run_dir: Path,
    on_event: EventCallback | None,
) -> Result:
    family = get_family(adapter.family)
    parser = family.parser()
    events: list[Event] = []

    def emit(new: list[Event]) -> None:
        for event in new:
            events.append(event)
            if on_event is not None:
                on_event(event)

    with (run_dir / "stdout.log").open("w", encoding="utf-8") as raw:

        def on_line(line: str) -> None:
            raw.write(line + "\n")
            emit(parser.feed(line))

        done = await run_process(
            argv,
            env=env,
            cwd=workdir,
            timeout_s=timeout_s,
            stdin=stdin.encode() if stdin is not None else None,
            on_stdout_line=on_line,
        )
    stderr = done.stderr_tail.decode("utf-8", errors="replace")
    (run_dir / "stderr.log").write_text(stderr, encoding="utf-8")
    emit(parser.close(done.exit_code))
    emit(family.after_exit(Path(env["HOME"]) if "HOME" in env else None, env, tuple(events)))
    stderr_error = family.stderr_error(stderr)
    if stderr_error is not None:
        emit([stderr_error])
    with (run_dir / "events.jsonl").open("w", encoding="utf-8") as out:
        out.writelines(json.dumps(event.to_json()) + "\n" for event in events)
    summary = summarize(events)
    error = summary.error
    if done.timed_out:
        error = f"timed out after {timeout_s:g}s" + (f" ({error})" if error else "")
    elif error is None and done.exit_code != 0:
        last = stderr.strip().splitlines()[-1:] or [""]
        error = f"exit code {done.exit_code}: {last[0][:300]}"
    return Result(
        adapter=adapter.name,
        harness=adapter.harness,
        adapter_hash=adapter.hash,
        argv=tuple(argv),
        exit_code=done.exit_code,
        timed_out=done.timed_out,
        duration_s=done.duration_s,
        session_id=summary.session_id,
        final_text=summary.final_text,
        usage=summary.usage,
        model_failed=summary.model_failed,
        error=error,
        run_dir=run_dir,
        harness_version=None,
        events=tuple(events),
        stderr_tail=stderr,
    )
