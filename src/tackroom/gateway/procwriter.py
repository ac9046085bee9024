"""The capture writer in a process of its own, for a gateway that serves many calls (``gateway serve``).

The thread writer shares the interpreter lock with the proxy's event loop: while
it reads, redacts, prices and stores a batch, the loop waits for the lock at
each step of every stream. Here the loop only hands the finished calls to a
queue, those of one turn of the loop together (pickled by the queue's
feeder thread, a copy of bytes, once per message), and a child
process does the rest, with its own connection to the store (a SQLite file or
PostgreSQL). The interface is the thread writer's: ``put``, ``flush`` (every
call queued so far is stored, or has failed to be), ``stop``, ``failures``.

The child ignores the terminating signals a terminal, ``timeout`` or a service
manager sends to the whole process group (SIGINT, SIGTERM, SIGHUP): the
gateway decides when to stop, and its stop drains the child. A child that
dies anyway is not waited for: ``flush`` and ``stop`` return, and ``failures``
names the calls it had not confirmed stored (it confirms each batch). A stop
is bounded whatever the child does. A child whose parent died exits.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import multiprocessing
import multiprocessing.util
import os
import queue
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

from tackroom.errors import GatewayError
from tackroom.gateway.store import Call, CaptureStore, held_open
from tackroom.gateway.stores import open_store
from tackroom.gateway.writer import BATCH, GATHER_S, call_ids, store_batch

START_S = 60.0
"""How long the child may take to import and open its store."""
STOP_QUIET_S = 10.0
"""How long a stop waits without a word from the child (a batch stored) before it kills the child."""
SHIELDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""What a terminal, ``timeout`` or systemd sends to the whole group: the child ignores them."""
_POLL_S = 0.5
_BEFORE_QUEUES = 20
"""Above a queue's own exit finalizer (10), which closes it."""
_TRACES = 20
"""The most traces a failure names."""
_DRAIN_S = 2.0
_SUSPECT = 4 * BATCH
"""Calls sent and not yet confirmed past which each send checks that the child lives."""


class ProcessWriter:
    """Stores calls in a child process, in order, in batches; reads go to ``store`` in this process."""

    def __init__(self, db: str | None, store: CaptureStore) -> None:
        self.store = store
        self.written = 0
        context = multiprocessing.get_context("spawn")  # never fork a process that runs threads
        with _shielded():  # the first queue starts multiprocessing's resource tracker process
            self._calls: Any = context.Queue()
            self._acks: Any = context.Queue()
        self._process = context.Process(
            target=_child,
            args=(db, self._calls, self._acks, os.getpid()),
            name="tackroom-gateway-writer",
            daemon=True,
        )
        self._lock = threading.Lock()
        self._tokens = itertools.count(1)
        self._dead = False
        self._outbox: list[Call] = []
        """Calls put from an event loop in its current turn: sent to the child together."""
        self._outbox_lock = threading.Lock()
        self._unconfirmed: collections.deque[tuple[str, str | None]] = collections.deque()
        """(call id, trace id) of each call sent, until the child says its batch is done."""
        self._confirmed = 0
        self._child_failures: list[str] = []
        """The batches the child's store refused, as the child last said."""
        self._own_failures: list[str] = []
        """What this side saw go wrong with the child."""

    @property
    def failures(self) -> list[str]:
        found = [*self._own_failures, *self._child_failures]
        if self._dead:
            with self._outbox_lock:
                lost = list(self._unconfirmed)
            if lost:
                ended = "the capture writer process ended first"
                found.append(f"{len(lost)} call(s) not stored ({ended}): {unstored(lost)}")
        return found

    def start(self) -> None:
        with _shielded():
            self._process.start()
        # The child ignores SIGTERM, so multiprocessing's exit, which terminates a daemon child and then
        # joins it, would wait for ever: a process that ends without ``stop`` ends the child first.
        multiprocessing.util.Finalize(
            self, _end_child, args=(self._process, self._calls), exitpriority=_BEFORE_QUEUES
        )
        ack = self._await("ready", None, START_S)
        if ack is None or ack[0] != "ready":
            self._process.kill()
            self._process.join(5)
            why = ack[1] if ack is not None and len(ack) > 1 else "it did not start"
            raise GatewayError(f"the capture writer process cannot store calls: {why}")

    def put(self, call: Call) -> None:
        """Queue ``call``; from an event loop, the calls put in one turn of the loop go as one message
        (each message wakes the queue's feeder thread, which then takes the interpreter lock from the
        loop to pickle it). They go at once, in the next turn: sent later, they would be pickled in
        the middle of another call rather than while the client reads its answer."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            with self._outbox_lock:
                self._ship([call])
            return
        with self._outbox_lock:
            self._outbox.append(call)
            first = len(self._outbox) == 1
        if first:
            loop.call_soon(self._send)

    def _send(self) -> None:
        """What the outbox holds, to the child (in order: the queue is put to under the outbox's lock),
        and the child's answers so far taken in (a flush or a stop, holding the lock, reads them)."""
        with self._outbox_lock:
            calls, self._outbox = self._outbox, []
            if calls:
                self._ship(calls)
        if self._lock.acquire(blocking=False):
            try:
                self._take_answers()
                if len(self._unconfirmed) > _SUSPECT and not self._process.is_alive():
                    self._died()
            finally:
                self._lock.release()

    def _ship(self, calls: list[Call]) -> None:
        """To the child, under the outbox's lock; kept by id until the child confirms them."""
        self._unconfirmed.extend((call.call_id, call.trace_id) for call in calls)
        if not self._dead:  # a dead child's queue is read by nobody: what is put there stays in memory
            self._calls.put(calls)

    def flush(self) -> None:
        with self._lock:
            self._send()
            if self._dead:
                return
            token = next(self._tokens)
            self._calls.put(("flush", token))
            self._await("flushed", token)

    def stop(self) -> None:
        """Store what is queued and end the child: bounded whatever the child does (see ``failures``)."""
        with self._lock:
            self._send()
            stopped = False
            if not self._dead and self._process.is_alive():
                self._calls.put(None)
                stopped = self._await("stopped", None, quiet_s=STOP_QUIET_S) is not None
            self._process.join(10 if stopped else 0)
            if self._process.is_alive():
                self._process.kill()
                self._process.join(5)
                self._own_failures.append(
                    f"the capture writer process said nothing for {STOP_QUIET_S:g} s: it was killed"
                )
            if not stopped:
                self._died()
                self._drain()
        for channel in (self._calls, self._acks):
            channel.close()
            channel.join_thread()

    def _drain(self) -> None:
        """The child is gone: read back what the queue's feeder thread still writes, so that it ends
        (blocked on a full pipe that nobody reads, it would hold the stop forever)."""
        self._calls.cancel_join_thread()
        deadline = time.monotonic() + _DRAIN_S
        with contextlib.suppress(queue.Empty, OSError, EOFError, ValueError):
            while time.monotonic() < deadline:
                self._calls.get(timeout=0.1)

    def _take_answers(self) -> None:
        """The child's answers already here, without waiting for one."""
        while True:
            try:
                self._note(self._acks.get_nowait())
            except queue.Empty:
                return

    def _note(self, ack: tuple[Any, ...]) -> None:
        """Take in an answer's counts: calls done (stored, or named in the child's failures)."""
        if ack[0] not in ("stored", "flushed", "stopped"):
            return
        done = ack[-1]
        with self._outbox_lock:
            for _ in range(min(done - self._confirmed, len(self._unconfirmed))):
                self._unconfirmed.popleft()
        self._confirmed = max(self._confirmed, done)
        self.written, self._child_failures = ack[1], list(ack[2])

    def _await(
        self, kind: str, token: int | None, timeout_s: float | None = None, quiet_s: float | None = None
    ) -> tuple[Any, ...] | None:
        """The child's answer of ``kind`` (for ``token``), taking in the counts it reports on the way;
        None once the child is dead, ``timeout_s`` has passed, or it has said nothing for ``quiet_s``."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        heard = time.monotonic()
        while deadline is None or time.monotonic() < deadline:
            try:
                ack = self._acks.get(timeout=_POLL_S)
            except queue.Empty:
                if not self._process.is_alive():
                    self._died()
                    return None
                if quiet_s is not None and time.monotonic() - heard > quiet_s:
                    return None
                continue
            heard = time.monotonic()
            self._note(ack)
            if ack[0] == "failed" or (ack[0] == kind and (token is None or ack[-2] == token)):
                return tuple(ack)
        return None

    def _died(self) -> None:
        if not self._dead:
            self._dead = True
            with contextlib.suppress(OSError, ValueError):
                self._take_answers()  # what it confirmed before it went
            code = self._process.exitcode
            self._own_failures.append(f"the capture writer process ended (exit code {code})")


def _end_child(process: Any, calls: Any) -> None:
    """At exit (or when the writer is collected) without a stop: the child stores what it holds and
    ends, or is killed (bounded: an exit must never wait for ever)."""
    if process.is_alive():
        with contextlib.suppress(ValueError, OSError):
            calls.put(None)
        process.join(STOP_QUIET_S)
        if process.is_alive():
            process.kill()
            process.join(5)


@contextlib.contextmanager
def _shielded() -> Iterator[None]:
    """Processes started here begin with the group's terminating signals blocked (a child inherits
    the mask): the writer from its first instruction on, and multiprocessing's resource tracker, which
    ignores SIGINT and SIGTERM but not SIGHUP. Blocked here too meanwhile: delivered on leaving."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, SHIELDED)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def unstored(calls: list[tuple[str, str | None]]) -> str:
    """Calls named for a person: how many of each trace (a run's id), and their ids (the first few)."""
    traces = collections.Counter(trace or "(none)" for _, trace in calls)
    named = [f"{count} of trace {trace}" for trace, count in sorted(traces.items())[:_TRACES]]
    if len(traces) > _TRACES:
        named.append(f"{len(traces) - _TRACES} more trace(s)")
    return f"{', '.join(named)} ({call_ids([call_id for call_id, _ in calls])})"


def _child(db: str | None, calls: Any, acks: Any, parent: int) -> None:
    """The writer process: gather calls into batches and store them until told to stop."""
    for shielded in SHIELDED:  # sent to the whole group: the parent decides, and drains this process
        signal.signal(shielded, signal.SIG_IGN)  # (blocked from the start: see _shielded)
    # Storing is background work: where the cores are contended, the proxy's answers go first.
    with contextlib.suppress(OSError):
        os.nice(5)
    try:
        from tackroom.prices import PriceBook

        store = open_store(db)
        prices = PriceBook.default()
    except Exception as exc:
        acks.put(("failed", str(exc)))
        return
    acks.put(("ready",))
    # The price table's first lookup imports it (half a second of CPU): done now, while no call waits,
    # rather than beside the proxy's first answers.
    with contextlib.suppress(Exception):
        import genai_prices  # noqa: F401
    written = done = 0
    failures: list[str] = []
    pending: list[Call] = []
    due = 0.0

    def write() -> None:
        nonlocal written, done
        if pending:
            failure = store_batch(store, prices, pending)
            if failure is None:
                written += len(pending)
                hold()
            else:
                failures.append(failure)
            done += len(pending)
            pending.clear()
            acks.put(("stored", written, list(failures), None, done))  # the parent stops naming these calls

    with held_open(store) as hold:  # one connection for every batch, once one is stored
        while True:
            wait = max(due - time.monotonic(), 0.0) if pending else 1.0
            try:
                item = calls.get(timeout=wait)
            except queue.Empty:
                if pending:
                    write()
                elif os.getppid() != parent:
                    return  # the gateway is gone without a word: nothing is left to store
                continue
            if isinstance(item, Call | list):
                if not pending:
                    due = time.monotonic() + GATHER_S
                pending.extend(item if isinstance(item, list) else [item])
                if len(pending) >= BATCH:
                    write()
                continue
            write()
            if item is None:
                with contextlib.suppress(OSError):
                    prices.save()
                acks.put(("stopped", written, list(failures), None, done))
                return
            acks.put(("flushed", written, list(failures), item[1], done))
