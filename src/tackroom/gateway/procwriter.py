"""The capture writer in a process of its own, for a gateway that serves many calls (``gateway serve``).

The thread writer shares the interpreter lock with the proxy's event loop: while
it reads, redacts, prices and stores a batch, the loop waits for the lock at
each step of every stream. Here the loop only hands the finished calls to a
queue, those of one turn of the loop together (pickled by the queue's
feeder thread, a copy of bytes, once per message), and a child
process does the rest, with its own connection to the store (a SQLite file or
PostgreSQL). The interface is the thread writer's: ``put``, ``flush`` (every
call queued so far is stored, or has failed to be), ``stop``, ``failures``.

A child that dies is not waited for: ``flush`` and ``stop`` return, and
``failures`` says that calls may be lost. A child whose parent died exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import multiprocessing
import os
import queue
import signal
import threading
import time
from typing import Any

from tackroom.errors import GatewayError
from tackroom.gateway.store import Call, CaptureStore, held_open
from tackroom.gateway.stores import open_store
from tackroom.gateway.writer import BATCH, GATHER_S, store_batch

START_S = 60.0
"""How long the child may take to import and open its store."""
_POLL_S = 0.5


class ProcessWriter:
    """Stores calls in a child process, in order, in batches; reads go to ``store`` in this process."""

    def __init__(self, db: str | None, store: CaptureStore) -> None:
        self.store = store
        self.written = 0
        self._failures: list[str] = []
        context = multiprocessing.get_context("spawn")  # never fork a process that runs threads
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

    @property
    def failures(self) -> list[str]:
        return list(self._failures)

    def start(self) -> None:
        self._process.start()
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
            self._calls.put(call)
            return
        with self._outbox_lock:
            self._outbox.append(call)
            first = len(self._outbox) == 1
        if first:
            loop.call_soon(self._send)

    def _send(self) -> None:
        """What the outbox holds, to the child (in order: the queue is put to under the outbox's lock)."""
        with self._outbox_lock:
            calls, self._outbox = self._outbox, []
            if calls:
                self._calls.put(calls)

    def flush(self) -> None:
        with self._lock:
            self._send()
            token = next(self._tokens)
            self._calls.put(("flush", token))
            self._await("flushed", token)

    def stop(self) -> None:
        with self._lock:
            self._send()
            if self._process.is_alive():
                self._calls.put(None)
                self._await("stopped", None)
            self._process.join(10)
            if self._process.is_alive():
                self._process.kill()
                self._process.join(5)
        for channel in (self._calls, self._acks):
            channel.close()
            channel.join_thread()

    def _await(self, kind: str, token: int | None, timeout_s: float | None = None) -> tuple[Any, ...] | None:
        """The child's answer of ``kind`` (for ``token``), taking in the counts it reports on the way."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while deadline is None or time.monotonic() < deadline:
            try:
                ack = self._acks.get(timeout=_POLL_S)
            except queue.Empty:
                if not self._process.is_alive():
                    self._died()
                    return None
                continue
            if ack[0] in ("flushed", "stopped"):
                self.written, self._failures = ack[2], list(ack[3])
            if ack[0] == "failed" or (ack[0] == kind and (token is None or ack[1] == token)):
                return tuple(ack)
        return None

    def _died(self) -> None:
        if not self._dead:
            self._dead = True
            self._failures.append(
                f"the capture writer process ended (exit code {self._process.exitcode}): "
                "calls queued since then are not stored"
            )


def _child(db: str | None, calls: Any, acks: Any, parent: int) -> None:
    """The writer process: gather calls into batches and store them until told to stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group: the parent decides
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
    written = 0
    failures: list[str] = []
    pending: list[Call] = []
    due = 0.0

    def write() -> None:
        nonlocal written
        if pending:
            failure = store_batch(store, prices, pending)
            if failure is None:
                written += len(pending)
                hold()
            else:
                failures.append(failure)
            pending.clear()

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
                acks.put(("stopped", None, written, failures))
                return
            acks.put(("flushed", item[1], written, failures))
