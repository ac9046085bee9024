"""Spawn one planned harness process, parse its stream through its family, and fold a Result.

Everything here treats the harness as hostile, so that a run always ends and
always leaves its result:

* **One boundary around family code.** Whatever a family raises while it
  reads a line, closes its parser, reads its files after exit or looks at
  stderr becomes a non-fatal :class:`ErrorEvent` naming the family and keeping
  the raw text; so does an event that will not serialise. The run goes on.
* **Bounded memory and disk**, whatever the harness prints: ``stdout.log``
  and ``events.jsonl`` keep their first and last parts with a line saying
  what was left out between, ``Result.events`` keeps the first and last
  events, and the result is folded event by event (:class:`Summarizer`), so
  it is exact even when events were left out. ``Result.truncated`` says what
  was cut.
* **The caller's callback cannot lose the run**: an exception from
  ``on_event`` is recorded as an error event and the callback is not called
  again.
* **A result on every path**: if the run is cancelled (a signal to the CLI,
  ``arun`` cancelled) or fails after the harness started, ``result.json`` is
  still written, saying so, before the exception goes on.
* **Escapes are traced**: the harness runs with ``TACKROOM_RUN_MARKER`` in
  its environment, so a descendant that leaves the process group is found
  after the run, stopped, and listed in ``Result.escaped``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any

from tackroom.families import get_family
from tackroom.families.base import ClientParser, Family, StreamParser
from tackroom.run.process import Conversation, ProcessResult, off_loop
from tackroom.run.result import Result, Summarizer, save
from tackroom.run.sandbox import LocalSandbox, Places, Sandbox
from tackroom.trace.events import ErrorEvent, Event

if TYPE_CHECKING:
    from tackroom.adapters.adapter import Adapter

EventCallback = Callable[[Event], None]

MARKER = "TACKROOM_RUN_MARKER"
"""The variable every process of a run carries (``<run id>:<random>``), to find the ones that escape."""

MiB = 1024 * 1024
STDOUT_LOG = (32 * MiB, 4 * MiB)
"""``stdout.log``: the first and the last this many characters of the harness's stdout."""
EVENTS_FILE = (32 * MiB, 4 * MiB)
"""``events.jsonl``: the first and the last this many characters of serialised (ASCII) events."""
EVENTS_KEPT = (16 * MiB, 4 * MiB)
"""``Result.events``: the first and the last events, this many bytes' worth (serialised, plus overhead)."""
# What one kept item costs beyond its text: a str or an event object is far larger than its bytes.
_LINE_OVERHEAD = 64
_EVENT_OVERHEAD = 512


async def execute(
    adapter: Adapter,
    argv: list[str],
    env: dict[str, str],
    workdir: Path,
    stdin: str | None,
    timeout_s: float,
    run_dir: Path,
    on_event: EventCallback | None,
    options: Mapping[str, Any] | None = None,
    sandbox: Sandbox | None = None,
) -> Result:
    """Run the planned harness once; on any exception ``result.json`` is still written, then it propagates.

    For a family that talks back (a :class:`ClientParser`, e.g. ACP) ``stdin``
    is the prompt it sends in its protocol, with the run's ``options``. The
    harness is spawned by ``sandbox`` (default: on the host, :class:`LocalSandbox`).
    """
    family = get_family(adapter.family)
    started = time.monotonic()
    marker = f"{run_dir.name}:{secrets.token_hex(8)}"
    stdout_log = _Spool(run_dir / "stdout.log", STDOUT_LOG, _text_gap)
    events = _Events(run_dir / "events.jsonl", on_event)
    files = (stdout_log, events.file)
    stderr: str | None = None
    # The files are opened, written at the end and closed in a worker thread: each open, write and
    # close on the loop's thread gave the interpreter lock away for milliseconds, with many runs at once.
    try:
        await off_loop(partial(_open_all, files))
        boundary = _Boundary(family, events.add)
        conversation = boundary.converse(
            stdin or "", workdir, options or {}, env, lambda: _profile_places(adapter, env, workdir)
        )

        def on_line(line: str) -> None:
            stdout_log.add(line)
            boundary.feed(line)

        try:
            done = await (sandbox or LocalSandbox(Places(run_dir, workdir, None))).spawn(
                argv,
                env=env,
                cwd=workdir,
                timeout_s=timeout_s,
                stdin=conversation or (stdin.encode() if stdin is not None else None),
                on_stdout_line=on_line,
                escape_marker=f"{MARKER}={marker}",
            )
        except BaseException as exc:
            with contextlib.suppress(OSError):  # a full disk must not hide why the run stopped
                save(_stopped(adapter, argv, run_dir, time.monotonic() - started, events, exc))
            raise
        stderr = done.stderr_tail.decode("utf-8", errors="replace")
        boundary.close(done.exit_code)
        boundary.after_exit(env, events.kept())
        boundary.stderr(stderr)
    finally:
        await off_loop(partial(_close_all, files, run_dir / "stderr.log", stderr))
    # After the files are closed: closing writes their tails, and may fail.
    truncated = _truncated(done, stdout_log, events)
    return _fold(adapter, argv, run_dir, timeout_s, done, stderr, events, family, truncated)


def _profile_places(adapter: Adapter, env: Mapping[str, str], workdir: Path) -> dict[str, Path]:
    """Where each profile capability the adapter declares lives for this run: its ``path`` in the
    harness's home (``HOME`` and the relocation variables as the run sets them)."""
    from tackroom.adapters.templates import expand_path
    from tackroom.errors import TackroomError

    home = env.get("HOME")
    if not home:
        return {}
    places: dict[str, Path] = {}
    capabilities = adapter.effective.get("capabilities") or {}  # the data, not the typed spec: no pydantic
    for kind, capability in capabilities.items():
        path = capability.get("path") if isinstance(capability, dict) else None
        if not isinstance(path, str):
            continue
        try:
            places[kind] = expand_path(path, env=env, home=home, workdir=str(workdir))
        except TackroomError:
            continue  # a path this run cannot spell is one the render did not write either
    return places


def _fold(
    adapter: Adapter,
    argv: list[str],
    run_dir: Path,
    timeout_s: float,
    done: ProcessResult,
    stderr: str,
    events: _Events,
    family: Family,
    truncated: tuple[str, ...],
) -> Result:
    summary = events.summarizer.summary()
    error = summary.error
    if done.sandbox_failure is not None:
        error = done.sandbox_failure + (f" ({error})" if error else "")
    elif done.timed_out:
        error = f"timed out after {timeout_s:g}s" + (f" ({error})" if error else "")
    elif error is None and done.exit_code != 0 and not done.released:
        last = stderr.strip().splitlines()[-1:] or [""]
        error = f"exit code {done.exit_code}: {last[0][:300]}"
    elif error is None and not summary.finished:
        missing = family.terminal or "a terminal event"
        error = f"incomplete stream: {family.name} ended without {missing}"
    return _result(
        adapter,
        argv,
        run_dir,
        events,
        exit_code=done.exit_code,
        timed_out=done.timed_out,
        duration_s=done.duration_s,
        error=error,
        stderr_tail=stderr,
        truncated=truncated,
        escaped=done.escaped,
        released=done.released,
    )


def _stopped(
    adapter: Adapter, argv: list[str], run_dir: Path, duration_s: float, events: _Events, exc: BaseException
) -> Result:
    """The result of a run that did not come to its end: what was seen, and why it stopped."""
    if isinstance(exc, asyncio.CancelledError | KeyboardInterrupt):
        why = "the run was stopped (cancelled or interrupted) before the harness finished"
    else:
        why = f"the run failed: {type(exc).__name__}: {exc}"
    return _result(
        adapter,
        argv,
        run_dir,
        events,
        exit_code=None,
        timed_out=False,
        duration_s=duration_s,
        error=why,
        finished=False,
    )


def _result(adapter: Adapter, argv: list[str], run_dir: Path, events: _Events, **rest: Any) -> Result:
    """A Result of what the events say, with how the process ended in ``rest``."""
    summary = events.summarizer.summary()
    folded = {
        "session_id": summary.session_id,
        "final_text": summary.final_text,
        "usage": summary.usage,
        "model_failed": summary.model_failed,
        "finished": summary.finished,
    }
    return Result(
        adapter=adapter.name,
        harness=adapter.harness,
        adapter_hash=adapter.hash,
        argv=tuple(argv),
        run_dir=run_dir,
        harness_version=None,
        events=events.kept(),
        **(folded | rest),
    )


def _truncated(done: ProcessResult, stdout_log: _Spool, events: _Events) -> tuple[str, ...]:
    notes = [stdout_log.note(f"stdout ({done.stdout_size} bytes)"), events.file.note("events")]
    if events.left_out:
        notes.append(f"Result.events: {events.left_out} events in the middle were left out")
    if done.stderr_truncated:
        notes.append(f"stderr.log: the last {len(done.stderr_tail)} of {done.stderr_size} bytes were kept")
    return tuple(note for note in notes if note)


# --- the family boundary -----------------------------------------------------------------


class _Boundary:
    """Calls family code; turns anything it raises into an error event that keeps the raw text."""

    def __init__(self, family: Family, emit: Callable[[Event], None]) -> None:
        self._family = family
        self._emit = emit
        self._parser: StreamParser | None = None
        self._conversation: Conversation | None = None
        try:
            self._parser = family.parser()
        except Exception as exc:
            self._failed("could not make its parser", "", exc)

    def converse(
        self,
        prompt: str,
        workdir: Path,
        options: Mapping[str, Any],
        env: Mapping[str, str],
        profile: Callable[[], Mapping[str, Path]],
    ) -> Conversation | None:
        """The harness's stdin, for a parser that talks back (None for any other): its opening said."""
        parser = self._parser
        if not isinstance(parser, ClientParser):
            return None
        self._conversation = Conversation()

        def begin() -> list[Event]:
            parser.begin(prompt, workdir, options, env, profile())
            return []

        self._run("could not start its conversation", "", begin)
        self._talk()
        self._conversation.on_timeout = self._cancel
        return self._conversation

    def _cancel(self) -> None:
        """The run is out of time: let the client ask the harness to stop its turn."""
        parser = self._parser
        if isinstance(parser, ClientParser) and not parser.over:
            self._run("could not cancel its turn", "", parser.cancel)
            self._talk()

    def feed(self, line: str) -> None:
        # Once per line of output: the general _run, inlined.
        if self._parser is None:
            return
        try:
            produced = self._parser.feed(line)
        except Exception as exc:
            self._failed("could not parse a line", line, exc)
            return
        self._emit_all("could not parse a line", line, produced)
        if self._conversation is not None:
            self._talk()

    def _talk(self) -> None:
        """Write what the client has to say; close stdin once it is done (or broken)."""
        conversation, parser = self._conversation, self._parser
        if conversation is None or not isinstance(parser, ClientParser):
            return
        try:
            lines, over = parser.outgoing(), parser.over
            for line in lines:
                conversation.write(line.encode("utf-8", errors="replace") + b"\n")
        except Exception as exc:
            self._failed("could not answer the harness", "", exc)
            over = True
        if over:
            conversation.finish()

    def close(self, exit_code: int | None) -> None:
        parser = self._parser
        if parser is not None:
            self._run("failed at the end of the stream", "", lambda: parser.close(exit_code))

    def after_exit(self, env: dict[str, str], seen: tuple[Event, ...]) -> None:
        home = Path(env["HOME"]) if "HOME" in env else None
        self._run("could not read its files after exit", "", lambda: self._family.after_exit(home, env, seen))

    def stderr(self, stderr: str) -> None:
        def found() -> list[Event]:
            event = self._family.stderr_error(stderr)
            return [event] if event is not None else []

        self._run("could not read stderr", stderr[-4096:], found)

    def _run(self, doing: str, raw: str, call: Callable[[], Iterable[Event]]) -> None:
        try:
            produced = call()
        except Exception as exc:
            self._failed(doing, raw, exc)
            return
        self._emit_all(doing, raw, produced)

    def _emit_all(self, doing: str, raw: str, produced: Iterable[Event]) -> None:
        try:
            events = list(produced)
        except Exception as exc:  # not a list, or a generator that fails half-way
            self._failed(doing, raw, exc)
            return
        for event in events:
            if isinstance(event, Event):
                self._emit(event)
            else:
                self._failed(doing, raw, TypeError(f"returned {type(event).__name__}, not an event"))

    def _failed(self, doing: str, raw: str, exc: Exception) -> None:
        message = f"{self._family.name} family {doing}: {type(exc).__name__}: {exc}"
        self._emit(ErrorEvent(raw, message=message[:2000], fatal=False))


# --- events: kept, written, folded, shown -------------------------------------------------


class _Events:
    """Every event of a run goes through here once: checked, folded, written, kept and shown."""

    def __init__(self, path: Path, on_event: EventCallback | None) -> None:
        self.file = _Spool(path, EVENTS_FILE, _events_gap)
        self.summarizer = Summarizer()
        self._callback = on_event
        head, tail = EVENTS_KEPT
        self._head: list[Event] = []
        self._head_room = head
        self._tail: deque[tuple[Event, int]] = deque()
        self._tail_room = tail
        self.left_out = 0

    def __enter__(self) -> _Events:
        self.file.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.file.close()

    def add(self, event: Event) -> None:
        event, line = _serialisable(event)
        self.summarizer.add(event)
        self.file.add(line)
        self._keep(event, len(line) + _EVENT_OVERHEAD)
        self._show(event)

    def kept(self) -> tuple[Event, ...]:
        return (*self._head, *(event for event, _ in self._tail))

    def _keep(self, event: Event, cost: int) -> None:
        if not self._tail and cost <= self._head_room:
            self._head.append(event)
            self._head_room -= cost
            return
        self._tail.append((event, cost))
        self._tail_room -= cost
        while self._tail_room < 0 and len(self._tail) > 1:
            self._tail_room += self._tail.popleft()[1]
            self.left_out += 1

    def _show(self, event: Event) -> None:
        if self._callback is None:
            return
        try:
            self._callback(event)
        except Exception as exc:
            # The caller's bug must not cost the run: record it, and stop calling.
            self._callback = None
            message = f"the on_event callback raised {type(exc).__name__}: {exc}; it was not called again"
            self.add(ErrorEvent(message=message[:2000], fatal=False))


def _serialisable(event: Event) -> tuple[Event, str]:
    """The event and its JSON line; an event that cannot be written becomes an error event saying so.

    The line is ASCII (``\\u`` escapes), so even a lone surrogate from family
    code that did not go through ``json_line`` is written losslessly.
    """
    try:
        return event, json.dumps(event.to_json())
    except (TypeError, ValueError, RecursionError) as exc:
        message = f"a {event.kind} event could not be serialised: {type(exc).__name__}: {exc}"
        event = ErrorEvent(event.raw, message=message[:2000], fatal=False)
    return event, json.dumps(event.to_json())


# --- bounded files ------------------------------------------------------------------------------


def _text_gap(lines: int, size: int) -> str:
    return f"[tackroom: {lines} lines ({size} bytes) left out here to keep this log bounded]"


def _events_gap(lines: int, size: int) -> str:
    return json.dumps({"type": "truncated", "left_out_events": lines, "left_out_bytes": size})


class _Spool:
    """A log file holding the first and the last part of what was added, one line per item.

    The head is written as it comes; past it, the latest items wait in a
    bounded tail and are written at close, after a line saying how many items
    (and bytes) were left out between. A write that fails (a full disk) stops
    the file rather than the run, and is reported in :meth:`note`.
    """

    def __init__(self, path: Path, budget: tuple[int, int], gap: Callable[[int, int], str]) -> None:
        self.path = path
        self._head_room, self._tail_room = budget
        self._gap = gap
        self._out: IO[str] | None = None
        self._tail: deque[str] = deque()
        self.left_out = 0
        self._left_out_bytes = 0
        self.error: str | None = None

    def __enter__(self) -> _Spool:
        self.open()
        return self

    def open(self) -> None:
        try:
            self._out = self.path.open("w", encoding="utf-8", errors="replace")
        except OSError as exc:
            self.error = str(exc)

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def add(self, line: str) -> None:
        size = len(line) + 1
        if not self._tail and size <= self._head_room:
            self._head_room -= size
            self._write(line)
            return
        self._tail.append(line)
        self._tail_room -= size + _LINE_OVERHEAD
        while self._tail_room < 0 and len(self._tail) > 1:
            dropped = self._tail.popleft()
            self._tail_room += len(dropped) + 1 + _LINE_OVERHEAD
            self.left_out += 1
            self._left_out_bytes += len(dropped) + 1

    def close(self) -> None:
        if self.left_out:
            self._write(self._gap(self.left_out, self._left_out_bytes))
        for line in _drain(self._tail):
            self._write(line)
        if self._out is not None:
            try:
                self._out.close()
            except OSError as exc:
                self.error = self.error or str(exc)
            self._out = None

    def note(self, what: str) -> str:
        """One line for ``Result.truncated``, or "" when the file holds everything."""
        name = self.path.name
        if self.error is not None:
            return f"{name}: could not be written in full: {self.error}"
        if self.left_out:
            return f"{name}: {self.left_out} lines of {what} in the middle were left out"
        return ""

    def _write(self, line: str) -> None:
        if self._out is None:
            return
        try:
            self._out.write(line + "\n")
        except OSError as exc:
            self.error = str(exc)
            self._out = None


def _drain(items: deque[str]) -> Iterator[str]:
    while items:
        yield items.popleft()


def _open_all(files: Iterable[_Spool]) -> None:
    for spool in files:
        spool.open()


def _close_all(files: Iterable[_Spool], stderr_log: Path, stderr: str | None) -> None:
    """Close the run's files (writing their tails), with ``stderr`` in ``stderr_log`` if the run got
    that far."""
    if stderr is not None:
        _write_text(stderr_log, stderr)
    for spool in files:
        spool.close()


def _write_text(path: Path, text: str) -> None:
    with contextlib.suppress(OSError):  # the tail is also in the Result; a full disk must not cost the run
        path.write_text(text, encoding="utf-8", errors="replace")
