"""Spawn one planned harness process, parse its stream through its family, and fold a Result."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from tackroom.families import get_family
from tackroom.run.process import run_process
from tackroom.run.result import Result, summarize
from tackroom.trace.events import Event

if TYPE_CHECKING:
    from tackroom.adapters.resolve import Adapter

EventCallback = Callable[[Event], None]


async def execute(
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
