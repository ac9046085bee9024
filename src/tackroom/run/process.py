"""Run one harness process to completion, and leave nothing behind.

The discipline follows inspect_ai's ``util/_subprocess.py`` and goes further
where a coding agent needs it:

* ``argv`` is executed directly, never through a shell, with exactly the
  environment given (nothing is inherited; ``PATH`` for finding ``argv[0]`` is
  the given one too).
* The child leads its own process group, so the harness and everything it
  spawned (MCP servers, language servers, shells) can be signalled as one.
* stdout and stderr are read concurrently in chunks and split into lines
  here, so a multi-megabyte JSON line never trips a reader limit; each line
  reaches its callback as soon as it is complete. Only the last
  ``output_cap`` bytes of each stream are kept. The reader yields to the
  event loop after every chunk, so a harness that floods its pipe (a
  harness that is ``yes``) can never starve the timeout or a cancellation.
* On timeout or cancellation: SIGTERM to the group, ``grace_s``, SIGKILL.
  After a normal exit, whatever is still in the group is a leftover and is
  stopped the same way (with a shorter grace) and counted.
* A descendant can leave the group (``setsid``, a double fork). With an
  ``escape_marker`` (``NAME=VALUE``, added to the child's environment and
  inherited by everything it starts), whatever of the user's processes still
  carries it once the group is gone is stopped the same way and reported; and
  where the machine lets tackroom make a cgroup (:mod:`tackroom.run.cgroup`),
  the harness is put in one of its own as it starts, so one that also clears
  its environment is found there all the same.
* Draining the pipes after the group is gone is bounded: a process that left
  the group (and scrubbed its environment) may still hold them open.

The parent's ends of the pipes are our own ``os.pipe()`` descriptors rather
than asyncio's subprocess pipes: on Python 3.11 ``Process.wait()`` does not
return until every pipe is closed, so a leftover holding stdout would hide
the leader's exit until the timeout.

Linux first: group membership is read from ``/proc``. Zombies count as gone:
the leader is reaped here, and orphans are the job of PID 1 (run containers
with an init such as ``tini`` or ``docker run --init``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from tackroom.errors import RunError
from tackroom.run.cgroup import Cage, cage

__all__ = [
    "Conversation",
    "Escaped",
    "ProcessResult",
    "group_alive",
    "off_loop",
    "run_process",
    "run_process_sync",
]

LineCallback = Callable[[str], None]
T = TypeVar("T")

_CHUNK = 64 * 1024
_MIN_CHUNK = 512
# How long one chunk's callbacks may hold the event loop before chunks shrink.
_TURN_S = 0.02
# A process outside the group (it called setsid) may hold our pipes forever.
_DRAIN_S = 2.0
# Leftovers (an MCP server, a daemon) have no transcript to flush; do not make
# every clean run wait the full grace for them.
_LEFTOVER_GRACE_S = 1.0
# SIGKILL cannot be caught, but the kernel needs a moment to tear a process down.
_KILL_SETTLE_S = 1.0
# A leader stuck in uninterruptible sleep cannot be reaped; do not hang on it.
_REAP_S = 5.0
_POLL_S = 0.02
_PROC = Path("/proc")
_DEAD_STATES = frozenset({"Z", "X", "x"})
# Escaped processes may fork while they are being stopped: look again, a few times.
_ESCAPE_ROUNDS = 3


@dataclass(frozen=True)
class Escaped:
    """A descendant that left the process group and was found, and stopped (by its marker or cgroup)."""

    pid: int
    command: str
    """Its command line, as ``/proc`` showed it (the harness's text: print it escaped)."""

    def to_json(self) -> dict[str, int | str]:
        return {"pid": self.pid, "command": self.command}


class Conversation:
    """A child's stdin written while it runs, for a harness driven over a protocol (ACP).

    :meth:`write` queues bytes; :meth:`finish` closes stdin once they are
    written. A child that is still running ``linger_s`` after that is stopped
    as its caller is done with it (``ProcessResult.released``): an agent
    server need not exit when its client hangs up.
    """

    def __init__(self, linger_s: float = 2.0, cancel_s: float = 3.0) -> None:
        self.linger_s = linger_s
        self.cancel_s = cancel_s
        """How long a timed-out child may take to end its turn once :attr:`on_timeout` has spoken."""
        self.on_timeout: Callable[[], None] | None = None
        """Called once at the timeout, to queue what asks the child to stop (ACP's ``session/cancel``)."""
        self._queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._finished = False
        self.closed = asyncio.Event()

    def write(self, data: bytes) -> None:
        # Once stdin is closed (finished, or the child closed it) nothing more can reach the child.
        if not self._finished and not self.closed.is_set():
            self._queue.put_nowait(data)

    def finish(self) -> None:
        if not self._finished:
            self._finished = True
            self._queue.put_nowait(None)

    async def next(self) -> bytes | None:
        return await self._queue.get()


@dataclass(frozen=True)
class ProcessResult:
    """How a process run ended, and the tail of what it printed."""

    exit_code: int | None
    """The leader's exit status; ``-N`` if signal N ended it; None only if it could not be reaped."""
    timed_out: bool
    """The leader was still running at ``timeout_s``."""
    duration_s: float
    """Wall time from spawn until the group was gone and the pipes drained."""
    stdout_tail: bytes
    """The last ``output_cap`` bytes of stdout."""
    stderr_tail: bytes
    """The last ``output_cap`` bytes of stderr."""
    stdout_truncated: bool
    """stdout was longer than ``output_cap``."""
    stderr_truncated: bool
    """stderr was longer than ``output_cap``."""
    signalled: str | None
    """The strongest signal sent to end the run (``"SIGTERM"`` or ``"SIGKILL"``), else None."""
    leftover_killed: int
    """Processes still in the group after the leader exited on its own, which were then killed."""
    stdout_size: int = 0
    """How many bytes the child wrote to stdout in all."""
    stderr_size: int = 0
    """How many bytes the child wrote to stderr in all."""
    escaped: tuple[Escaped, ...] = ()
    """Descendants that left the group, found by ``escape_marker`` after it was gone, and stopped."""
    released: bool = False
    """A :class:`Conversation` was finished and the child, still running after its linger, was stopped."""
    sandbox_failure: str | None = None
    """Why the sandbox around the harness ended the run (it died mid-run), else None."""


async def run_process(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    timeout_s: float,
    stdin: bytes | Conversation | None = None,
    on_stdout_line: LineCallback | None = None,
    on_stderr_line: LineCallback | None = None,
    grace_s: float = 3.0,
    output_cap: int = 4 * 1024 * 1024,
    escape_marker: str | None = None,
) -> ProcessResult:
    """Run ``argv`` in its own process group and return once it and its group are gone.

    ``env`` is the whole environment (plus ``escape_marker``, a ``NAME=VALUE``
    entry that marks every descendant: those that leave the group are found
    by it once the group is gone, stopped, and listed in ``escaped``; the
    caller makes it unique to this run). ``stdin`` None means ``/dev/null``;
    bytes are written concurrently with reading, then stdin is closed; a
    :class:`Conversation` is written as its caller writes to it.
    Callbacks run on the event loop, once per line, newline stripped, decoded
    as UTF-8 with replacement; a line longer than ``output_cap`` bytes arrives
    in ``output_cap``-byte pieces so memory stays bounded. An exception from a
    callback stops the group and propagates, as does cancellation.

    Raises:
        RunError: the executable or the working directory cannot be used.
        ValueError: an argument is out of range.
    """
    marker = _check_arguments(argv, timeout_s, grace_s, output_cap, escape_marker)
    if marker is not None:
        env = {**env, marker[0]: marker[1]}
    started = time.monotonic()
    out, err = _Capture(on_stdout_line, output_cap), _Capture(on_stderr_line, output_cap)
    proc, pipes, caged = await _spawn(
        argv, env, cwd, with_stdin=stdin is not None, cage_name=None if marker is None else marker[1]
    )
    escapes = None if marker is None else _Escapes(_entry(marker), caged)
    pgid = proc.pid  # start_new_session: the leader's pid names its group
    pumps = [
        asyncio.create_task(_pump(pipes, "stdout", out)),
        asyncio.create_task(_pump(pipes, "stderr", err)),
    ]
    tasks = list(pumps)
    linger: asyncio.Task[None] | None = None
    if isinstance(stdin, Conversation):
        tasks.append(asyncio.create_task(_converse(pipes, stdin)))
        linger = asyncio.create_task(_linger(stdin))
        tasks.append(linger)
    elif stdin is not None:
        tasks.append(asyncio.create_task(_feed(pipes, stdin)))
    timed_out, signalled, leftovers, released = False, None, 0, False
    escaped: tuple[Escaped, ...] = ()
    unswept = escapes  # escapes still to look for, if this is cut short
    try:
        timed_out = not await _wait_leader(proc, pumps, timeout_s, linger)
        if timed_out and isinstance(stdin, Conversation) and stdin.on_timeout is not None:
            # Asked to stop, a protocol agent ends its turn (and says what it had done) before
            # the signals; the run still timed out.
            stdin.on_timeout()
            await _wait_leader(proc, pumps, min(stdin.cancel_s, grace_s), linger)
        released = proc.returncode is None and linger is not None and linger.done() and not timed_out
        if timed_out or released:
            signalled = await _end_group(pgid, grace_s)
        else:
            leftovers = await _kill_leftovers(pgid, min(grace_s, _LEFTOVER_GRACE_S))
        if escapes is not None:
            # Before the drain: an escaped process may be what holds the pipes open.
            escaped = await _stop_escaped(escapes, pgid, min(grace_s, _LEFTOVER_GRACE_S))
            unswept = None
        await _drain(pumps)
    finally:
        try:
            await _settle(proc, pgid, tasks, pipes, grace_s, unswept)
        finally:
            if escapes is not None:
                escapes.close()
    return ProcessResult(
        exit_code=proc.returncode,
        timed_out=timed_out,
        duration_s=time.monotonic() - started,
        stdout_tail=out.tail(),
        stderr_tail=err.tail(),
        stdout_truncated=out.truncated,
        stderr_truncated=err.truncated,
        signalled=signalled,
        leftover_killed=leftovers,
        stdout_size=out.size,
        stderr_size=err.size,
        escaped=escaped,
        released=released,
    )


def run_process_sync(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    timeout_s: float,
    stdin: bytes | None = None,
    on_stdout_line: LineCallback | None = None,
    on_stderr_line: LineCallback | None = None,
    grace_s: float = 3.0,
    output_cap: int = 4 * 1024 * 1024,
    escape_marker: str | None = None,
) -> ProcessResult:
    """:func:`run_process` for callers without an event loop (it starts one)."""
    return asyncio.run(
        run_process(
            argv,
            env=env,
            cwd=cwd,
            timeout_s=timeout_s,
            stdin=stdin,
            on_stdout_line=on_stdout_line,
            on_stderr_line=on_stderr_line,
            grace_s=grace_s,
            output_cap=output_cap,
            escape_marker=escape_marker,
        )
    )


def group_alive(pgid: int) -> bool:
    """True while any process of group ``pgid`` is alive (zombies count as dead)."""
    return bool(_group_members(pgid))


async def off_loop(work: Callable[[], T]) -> T:
    """``work()`` in a worker thread. If the caller is cancelled meanwhile, the work still ends
    before the cancellation goes on, so nothing it holds is closed under it."""
    future = asyncio.get_running_loop().run_in_executor(None, work)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        await asyncio.wait([future])
        raise


# --- starting -----------------------------------------------------------------


def _check_arguments(
    argv: Sequence[str], timeout_s: float, grace_s: float, output_cap: int, marker: str | None
) -> tuple[str, str] | None:
    """Refuse arguments out of range; return the marker split into name and value."""
    if isinstance(argv, str) or not argv:
        raise ValueError("argv must be a non-empty sequence of strings, never a shell command line")
    if not timeout_s > 0:  # also refuses NaN, which compares false with everything
        raise ValueError(f"timeout_s must be positive, got {timeout_s}")
    if grace_s < 0:
        raise ValueError(f"grace_s must not be negative, got {grace_s}")
    if output_cap <= 0:
        raise ValueError(f"output_cap must be positive, got {output_cap}")
    if marker is None:
        return None
    name, sep, value = marker.partition("=")
    if not sep or not name or not value or "\0" in marker:
        raise ValueError(f"escape_marker must be NAME=VALUE, got {marker!r}")
    return name, value


class _Pipes:
    """The parent's ends of the child's pipes, each closed exactly once."""

    def __init__(self) -> None:
        self._fds: dict[str, int] = {}

    def add(self, name: str, fd: int) -> None:
        os.set_blocking(fd, False)
        self._fds[name] = fd

    def fd(self, name: str) -> int:
        return self._fds[name]

    def close(self, name: str) -> None:
        fd = self._fds.pop(name, None)
        if fd is not None:
            os.close(fd)

    def close_all(self) -> None:
        for name in list(self._fds):
            self.close(name)


class _Leader:
    """The spawned group leader: its pid, and its exit status, waited for on the loop.

    Linux says a process has exited through a pidfd the loop watches like a socket (no thread per
    run, as asyncio's child watcher starts); elsewhere a daemon thread waits for it. Its status is
    negative for a signal, as asyncio's processes say.
    """

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self._popen = popen
        self.pid = popen.pid
        self._loop = asyncio.get_running_loop()
        self._exited: asyncio.Future[None] = self._loop.create_future()
        self._pidfd: int | None = None
        try:
            self._pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):  # no pidfd (macOS, an old kernel)
            threading.Thread(target=self._wait_in_thread, name="tackroom-leader", daemon=True).start()
        else:
            self._loop.add_reader(self._pidfd, self._readable)

    @property
    def returncode(self) -> int | None:
        return self._popen.returncode

    async def wait(self) -> int | None:
        await asyncio.shield(self._exited)
        return self._popen.returncode

    def forget(self) -> None:
        """Stop watching (the loop is done with it); a leader not yet reaped is reaped by Python."""
        if self._pidfd is not None:
            self._loop.remove_reader(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None

    def _readable(self) -> None:
        # A readable pidfd means the process has exited: this reaps it without blocking.
        self._popen.poll()
        if self._popen.returncode is not None:
            self.forget()
            if not self._exited.done():
                self._exited.set_result(None)

    def _wait_in_thread(self) -> None:
        self._popen.wait()
        with contextlib.suppress(RuntimeError):  # the loop closed first
            self._loop.call_soon_threadsafe(self._set_exited)

    def _set_exited(self) -> None:
        if not self._exited.done():
            self._exited.set_result(None)


async def _spawn(
    argv: Sequence[str],
    env: Mapping[str, str],
    cwd: Path,
    *,
    with_stdin: bool,
    cage_name: str | None = None,
) -> tuple[_Leader, _Pipes, Cage | None]:
    """Start ``argv`` in a session of its own, in the cgroup made for it (named ``cage_name``, where
    one can be made), all from one worker thread: each system call on the loop's thread (a fork and
    exec, a cgroup's mkdir, a pipe) gave the interpreter lock away to whatever else was running, for
    milliseconds each, and sixteen runs starting at once stalled the loop for tens of them."""

    def start() -> tuple[subprocess.Popen[bytes], _Pipes, Cage | None]:
        ours = _Pipes()
        theirs: dict[str, int] = {}
        made = None
        try:
            for name in ("stdin", "stdout", "stderr") if with_stdin else ("stdout", "stderr"):
                # os.pipe() descriptors are close-on-exec: the child keeps only its dup2'ed copies.
                read_end, write_end = os.pipe()
                ours.add(name, write_end if name == "stdin" else read_end)
                theirs[name] = read_end if name == "stdin" else write_end
            made = cage(cage_name) if cage_name is not None else None
            popen = subprocess.Popen(
                list(argv),
                stdin=theirs.get("stdin", subprocess.DEVNULL),
                stdout=theirs["stdout"],
                stderr=theirs["stderr"],
                env=dict(env),
                cwd=cwd,
                start_new_session=True,
            )
        except BaseException:
            ours.close_all()
            if made is not None:
                made.remove()
            raise
        finally:
            for fd in theirs.values():
                os.close(fd)
        if made is not None:
            made.adopt(popen.pid)  # into the run's cgroup at once (run.cgroup.Cage.adopt)
        return popen, ours, made

    starting = asyncio.get_running_loop().run_in_executor(None, start)
    try:
        popen, pipes, made = await asyncio.shield(starting)
    except asyncio.CancelledError:
        await asyncio.wait([starting])  # a process started meanwhile is not left running
        if not starting.cancelled() and starting.exception() is None:
            started, pipes, made = starting.result()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(started.pid, signal.SIGKILL)
            started.wait()
            pipes.close_all()
            if made is not None:
                made.remove()
        raise
    except OSError as exc:
        raise _start_error(argv[0], cwd, env, exc) from exc
    return _Leader(popen), pipes, made


def _start_error(executable: str, cwd: Path, env: Mapping[str, str], exc: OSError) -> RunError:
    if exc.filename is not None and os.fspath(exc.filename) == os.fspath(cwd):
        return RunError(f"cannot start {executable!r}: working directory {str(cwd)!r}: {exc.strerror}")
    if not isinstance(exc, FileNotFoundError):
        return RunError(f"cannot start {executable!r}: {exc.strerror or exc}")
    # The lookup uses the run's PATH, not tackroom's own: say which one was searched.
    search = os.pathsep.join(os.get_exec_path(env))
    found = executable if os.sep in executable else shutil.which(executable, path=search)
    if found is not None and Path(found).is_file():
        return RunError(f"cannot start {executable!r}: {found} exists but its #! interpreter was not found")
    if os.sep in executable:
        return RunError(f"executable not found: {executable!r}")
    return RunError(f"executable {executable!r} not found on the run's PATH={search!r}")


# --- reading and writing --------------------------------------------------------


class _Capture:
    """One output stream: its bounded tail, and complete lines for the live callback."""

    def __init__(self, on_line: LineCallback | None, cap: int) -> None:
        self._on_line = on_line
        self._cap = cap
        self._tail = bytearray()
        self._line = bytearray()
        self.truncated = False
        self.size = 0

    def feed(self, chunk: bytes) -> None:
        self.size += len(chunk)
        self._tail += chunk
        excess = len(self._tail) - self._cap
        if excess > 0:
            del self._tail[:excess]
            self.truncated = True
        if self._on_line is not None:
            self._split(chunk)

    def finish(self) -> None:
        """Deliver a last line that had no newline."""
        if self._line:
            self._emit()

    def tail(self) -> bytes:
        return bytes(self._tail)

    def _split(self, chunk: bytes) -> None:
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            self._take(chunk[start:end])
            self._emit()
            start = end + 1
        self._take(chunk[start:])

    def _take(self, data: bytes) -> None:
        self._line += data
        # One line must not grow without bound: hand an overlong one over in
        # cap-sized pieces, the same pieces however the chunks fell.
        while len(self._line) > self._cap:
            piece = bytes(self._line[: self._cap])
            del self._line[: self._cap]
            self._deliver(piece)

    def _emit(self) -> None:
        line = bytes(self._line)
        self._line.clear()  # before the callback, which may raise
        self._deliver(line)

    def _deliver(self, data: bytes) -> None:
        assert self._on_line is not None
        self._on_line(data.decode("utf-8", errors="replace"))


async def _ready(fd: int, *, write: bool) -> None:
    """Wait until ``fd`` can be read (or written) without blocking."""
    loop = asyncio.get_running_loop()
    waiter: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not waiter.done():
            waiter.set_result(None)

    if write:
        loop.add_writer(fd, wake)
    else:
        loop.add_reader(fd, wake)
    try:
        await waiter
    finally:
        if write:
            loop.remove_writer(fd)
        else:
            loop.remove_reader(fd)


async def _pump(pipes: _Pipes, name: str, capture: _Capture) -> None:
    """Read one output pipe to EOF, handing each chunk over as it arrives.

    A pipe that is never empty would keep this loop from ever awaiting, so it
    yields after every chunk; and since the callbacks decide how long a chunk
    takes (thousands of short lines each), chunks shrink while they are slow.
    The timeout, a cancellation and the other pipe all get their turn within
    about ``_TURN_S``, whatever the harness prints.
    """
    fd = pipes.fd(name)
    size = _CHUNK
    while True:
        try:
            chunk = os.read(fd, size)
        except BlockingIOError:
            await _ready(fd, write=False)
            continue
        if not chunk:
            break
        started = time.monotonic()
        capture.feed(chunk)
        took = time.monotonic() - started
        if took > _TURN_S:
            size = max(_MIN_CHUNK, size // 2)
        elif took < _TURN_S / 4:
            size = min(_CHUNK, size * 2)
        await asyncio.sleep(0)
    capture.finish()


async def _feed(pipes: _Pipes, data: bytes) -> None:
    """Write ``data`` to the child's stdin, then close it so the child sees EOF."""
    fd = pipes.fd("stdin")
    view = memoryview(data)
    try:
        while view:
            try:
                view = view[os.write(fd, view) :]
            except BlockingIOError:
                await _ready(fd, write=True)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the child closed stdin without reading it all: its choice, not our error
    finally:
        pipes.close("stdin")


async def _converse(pipes: _Pipes, conversation: Conversation) -> None:
    """Write what the caller queues to the child's stdin until it finishes; then close stdin."""
    fd = pipes.fd("stdin")
    try:
        while (data := await conversation.next()) is not None:
            view = memoryview(data)
            while view:
                try:
                    view = view[os.write(fd, view) :]
                except BlockingIOError:
                    await _ready(fd, write=True)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the child closed stdin: what is left to say cannot reach it
    finally:
        pipes.close("stdin")
        conversation.closed.set()


async def _linger(conversation: Conversation) -> None:
    """Done ``linger_s`` after the conversation's stdin was closed."""
    await conversation.closed.wait()
    await asyncio.sleep(conversation.linger_s)


# --- waiting and stopping -------------------------------------------------------


async def _wait_leader(
    proc: _Leader,
    pumps: Sequence[asyncio.Task[None]],
    timeout_s: float,
    linger: asyncio.Task[None] | None = None,
) -> bool:
    """Wait for the leader to exit, or ``linger`` to end; False on timeout.

    A pump that fails (a callback raised) ends the wait.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    leader = asyncio.ensure_future(proc.wait())
    watched: set[asyncio.Future[int | None] | asyncio.Future[None]] = {leader, *pumps}
    if linger is not None:
        watched.add(linger)
    try:
        while not leader.done():
            remaining = deadline - loop.time()
            if remaining <= 0:
                return False
            done, _ = await asyncio.wait(watched, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
            for task in done - {leader}:
                task.result()
            if linger is not None and linger in done:
                return True
            watched -= done
        return True
    finally:
        leader.cancel()


async def _drain(pumps: Sequence[asyncio.Task[None]]) -> None:
    """Let the pumps read what is left, but not forever; a pump still waiting is cancelled later."""
    done, _ = await asyncio.wait(pumps, timeout=_DRAIN_S)
    for task in done:
        task.result()


async def _kill_leftovers(pgid: int, grace_s: float) -> int:
    """Stop whatever the leader left running in its group; return how many there were."""
    seen = set(await _members(pgid))
    if seen:
        await _end_group(pgid, grace_s, seen)
    return len(seen)


async def _end_group(pgid: int, grace_s: float, seen: set[int] | None = None) -> str | None:
    """SIGTERM the group, SIGKILL it if anything outlives ``grace_s``; return the last signal sent."""
    if not _signal_group(pgid, signal.SIGTERM):
        return None
    if await _wait_group_gone(pgid, grace_s, seen):
        return "SIGTERM"
    _signal_group(pgid, signal.SIGKILL)
    await _wait_group_gone(pgid, _KILL_SETTLE_S, seen)
    return "SIGKILL"


async def _wait_group_gone(pgid: int, within_s: float, seen: set[int] | None = None) -> bool:
    """Poll until no live process is left in the group; False if some remain after ``within_s``."""
    deadline = time.monotonic() + within_s
    while members := await _members(pgid):
        if seen is not None:
            seen.update(members)  # a leftover may fork while it dies
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(_POLL_S)
    return True


async def _settle(
    proc: _Leader,
    pgid: int,
    tasks: Sequence[asyncio.Task[None]],
    pipes: _Pipes,
    grace_s: float,
    escapes: _Escapes | None,
) -> None:
    """Whatever happened before (success, error, cancellation), leave no process, task or descriptor."""
    try:
        if await _members(pgid):
            await _end_group(pgid, grace_s)
        if escapes is not None:
            await _stop_escaped(escapes, pgid, min(grace_s, _LEFTOVER_GRACE_S))
    finally:
        await _release(proc, pgid, tasks, pipes, escapes)


async def _release(
    proc: _Leader,
    pgid: int,
    tasks: Sequence[asyncio.Task[None]],
    pipes: _Pipes,
    escapes: _Escapes | None,
) -> None:
    """The part of settling that no cancellation may skip."""
    # The graceful stop may have been cancelled: kill whatever is left, with no scan of /proc on
    # the loop first (a group of zombies or of no one takes the signal harmlessly).
    _signal_group(pgid, signal.SIGKILL)
    if escapes is not None:
        for pid in escapes.find(pgid):
            _kill(pid, signal.SIGKILL)
    for task in tasks:
        task.cancel()
    try:
        # Signals are delivered asynchronously: killpg returns before the processes are gone.
        await _wait_group_gone(pgid, _KILL_SETTLE_S)
        await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        pipes.close_all()
        await _reap(proc)


async def _reap(proc: _Leader) -> None:
    if proc.returncode is None:
        # If even this times out, exit_code stays None; Python reaps it once the Popen is collected.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), _REAP_S)
    proc.forget()


def _signal_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to the group; False if the group no longer exists."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    return True


async def _stop_escaped(escapes: _Escapes, pgid: int, grace_s: float) -> tuple[Escaped, ...]:
    """SIGTERM, then SIGKILL, every process of the run outside its group; return them."""
    found: dict[int, Escaped] = {}
    for _ in range(_ESCAPE_ROUNDS):
        pids = await asyncio.to_thread(escapes.find, pgid)
        if not pids:
            break
        for pid in pids:
            found.setdefault(pid, Escaped(pid, _command(pid)))
            _kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while (alive := await asyncio.to_thread(escapes.find, pgid)) and time.monotonic() < deadline:
            await asyncio.sleep(_POLL_S)
        for pid in alive:
            found.setdefault(pid, Escaped(pid, _command(pid)))
            _kill(pid, signal.SIGKILL)
        await _wait_unmarked(escapes, pgid, _KILL_SETTLE_S)
    return tuple(sorted(found.values(), key=lambda e: e.pid))


async def _wait_unmarked(escapes: _Escapes, pgid: int, within_s: float) -> None:
    deadline = time.monotonic() + within_s
    while await asyncio.to_thread(escapes.find, pgid) and time.monotonic() < deadline:
        await asyncio.sleep(_POLL_S)


def _entry(marker: tuple[str, str]) -> bytes:
    return f"{marker[0]}={marker[1]}".encode()


@dataclass
class _Escapes:
    """How a run's descendants are found once they left its process group: the marker in their
    environment (cleared by a process that wants to hide), and the cgroup they were started in (which
    they cannot leave), where tackroom could make one (:mod:`tackroom.run.cgroup`)."""

    entry: bytes
    cage: Cage | None

    def find(self, pgid: int) -> list[int]:
        """Pids of the run's live processes outside group ``pgid``."""
        found = set(_marked(self.entry, pgid))
        if self.cage is not None:
            found.update(pid for pid in self.cage.members() if _live_outside(str(pid), pgid))
        return sorted(found)

    def close(self) -> None:
        if self.cage is not None:
            self.cage.remove()


def _kill(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


# --- /proc ----------------------------------------------------------------------


async def _members(pgid: int) -> list[int]:
    """:func:`_group_members` off the loop: a scan reads a file of every process on the machine."""
    return await asyncio.to_thread(_group_members, pgid)


def _group_members(pgid: int) -> list[int]:
    """Pids of the live (not zombie) processes in group ``pgid``."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return []  # no process at all, not even a zombie, is in the group: no need to look
    except PermissionError:
        pass  # someone else's now: look who
    try:
        names = os.listdir(_PROC)  # noqa: PTH208 - bare calls: a scan makes hundreds
    except FileNotFoundError:
        # Without /proc (macOS) only the group's existence can be probed, not who is in it.
        return [pgid]
    return [int(name) for name in names if name.isdigit() and _live_in_group(name, pgid)]


def _read(path: str, limit: int) -> bytes | None:
    """Up to ``limit`` bytes of a /proc file by bare system calls (a scan reads hundreds of them:
    a Python file object each cost about eight times as much); None once it is gone."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        chunks = [os.read(fd, limit)]
        while chunks[-1] and (got := sum(map(len, chunks))) < limit:
            chunks.append(os.read(fd, limit - got))  # a /proc file may come in pieces
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def _live_outside(pid: str, pgid: int) -> bool:
    """Whether ``pid`` is alive (not a zombie) and not in group ``pgid``."""
    stat = _read(f"{_PROC}/{pid}/stat", 4096)
    if not stat:
        return False
    state, _ppid, pgrp = stat[stat.rindex(b")") + 2 :].split(maxsplit=3)[:3]
    return int(pgrp) != pgid and state.decode("ascii", "replace") not in _DEAD_STATES


def _live_in_group(pid: str, pgid: int) -> bool:
    stat = _read(f"{_PROC}/{pid}/stat", 4096)
    if not stat:
        return False  # it exited between the listing and the read
    # Fields after the command name, which may itself contain spaces and ")".
    state, _ppid, pgrp = stat[stat.rindex(b")") + 2 :].split(maxsplit=3)[:3]
    return int(pgrp) == pgid and state.decode("ascii", "replace") not in _DEAD_STATES


_ENVIRON_MAX = 1 << 20
"""The most of a process's environment read when looking for the run's marker (Linux caps the
initial environment far below this)."""


def _marked(entry: bytes, pgid: int) -> list[int]:
    """Pids of this user's live processes outside group ``pgid`` whose environment holds ``entry``.

    A process's initial environment is readable in ``/proc/<pid>/environ`` by
    its own user; a zombie's reads as empty, so the dead are never counted.
    """
    uid, me = os.getuid(), str(os.getpid())
    try:
        names = os.listdir(_PROC)  # noqa: PTH208 - bare calls: a scan makes hundreds
    except FileNotFoundError:
        return []  # without /proc (macOS) escapes cannot be traced
    found = []
    for name in names:
        if not name.isdigit() or name == me:
            continue
        try:
            if os.stat(f"{_PROC}/{name}").st_uid != uid:  # noqa: PTH116 - as _read
                continue
        except OSError:
            continue  # gone
        environ = _read(f"{_PROC}/{name}/environ", _ENVIRON_MAX)
        if environ and entry in environ.split(b"\0") and not _live_in_group(name, pgid):
            found.append(int(name))
    return found


def _command(pid: int) -> str:
    """A process's command line, for a report (empty once it is gone)."""
    try:
        raw = (_PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return ""
    return raw.rstrip(b"\0").replace(b"\0", b" ").decode("utf-8", errors="replace")[:500]
