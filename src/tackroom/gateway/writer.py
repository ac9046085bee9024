"""The capture writer: a thread that prices finished calls and stores them in batches.

The proxy's event loop never waits for SQLite: it puts each finished call on
a queue, and this thread writes whatever has gathered in one transaction
(hundreds of rows per commit under load). :meth:`CaptureWriter.flush` waits
until everything queued so far is stored.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from decimal import Decimal
from typing import Protocol

from tackroom.errors import TackroomError
from tackroom.gateway.redaction import redact_body
from tackroom.gateway.store import Call, CaptureStore, held_open
from tackroom.prices import PriceBook

BATCH = 500
GATHER_S = 0.05
"""How long the writer lets calls gather before a write (a call is stored at most this much later)."""
_STOP = None
_NAMED = 20
"""The most call ids a failure names."""


def call_ids(ids: list[str]) -> str:
    """Calls named in a failure: their ids, the first few of them."""
    more = f" and {len(ids) - _NAMED} more" if len(ids) > _NAMED else ""
    return f"call ids {', '.join(ids[:_NAMED])}{more}"


def price(call: Call, book: PriceBook) -> Decimal | None:
    """What the call cost, or None when its model's price or its usage is unknown (never 0 for unknown)."""
    model = call.model_served or call.model_requested
    usage = call.usage
    if model is None or usage.input_uncached is None or usage.output is None:
        return None
    prices = book.lookup(model)
    if prices is None:
        return None
    read, write = usage.cache_read or 0, usage.cache_write or 0  # a cache figure not sent adds nothing
    rates = prices.rates[prices.price_class(usage.input_uncached + read + write)]
    return rates.cost(usage.input_uncached, usage.output, read, write)


def _settle(call: Call) -> None:
    """Finish what the proxy left to the writer; a failure there is the call's reason, never a lost row."""
    settle, call.settle = call.settle, None
    if settle is None:
        return
    try:
        settle(call)
    except Exception as exc:  # a capture bug must not lose the call's row
        call.reason = f"the gateway could not read the answer: {type(exc).__name__}"


def _redact(call: Call) -> None:
    """Hide the call's credentials (and secret-named JSON values) in its bodies, before any write."""
    if call.request_body is not None:
        call.request_body = redact_body(call.request_body, call.secrets)
    if call.response_body is not None:
        call.response_body = redact_body(call.response_body, call.secrets)
    call.secrets = frozenset()


class Writer(Protocol):
    """What the proxy needs of a capture writer (this thread, or :mod:`tackroom.gateway.procwriter`)."""

    store: CaptureStore

    @property
    def failures(self) -> list[str]: ...

    def start(self) -> None: ...

    def put(self, call: Call) -> None: ...

    def flush(self) -> None: ...

    def stop(self) -> None: ...


class CaptureWriter:
    """Stores calls from any thread, in order, in batches."""

    def __init__(self, store: CaptureStore, prices: PriceBook) -> None:
        self.store = store
        self.prices = prices
        self.written = 0
        self.failures: list[str] = []
        self._queue: queue.Queue[Call | None] = queue.Queue()
        self._hold: Callable[[], None] = lambda: None
        """Keeps the store's connection open once a batch is stored (see :func:`held_open`)."""
        self._gather = threading.Event()
        """Set while someone waits for the queue to drain: no more gathering."""
        self._thread = threading.Thread(target=self._run, name="tackroom-gateway-writer", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def put(self, call: Call) -> None:
        self._queue.put(call)

    def flush(self) -> None:
        """Wait until every call queued so far is stored (or has failed to be)."""
        self._gather.set()
        try:
            self._queue.join()
        finally:
            self._gather.clear()

    def stop(self) -> None:
        self._gather.set()
        self._queue.put(_STOP)
        self._thread.join()
        self.prices.save()

    def _run(self) -> None:
        with held_open(self.store) as hold:
            self._hold = hold
            self._serve()

    def _serve(self) -> None:
        while True:
            first = self._queue.get()
            if first is not None and self._queue.qsize() < BATCH:
                # Let a batch gather: one transaction per call would hold the GIL (and the proxy's loop)
                # far more often; a stop or a flush does not wait for it (their sentinel is queued).
                self._gather.wait(GATHER_S)
            batch = [first]
            while len(batch) < BATCH:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            calls = [call for call in batch if call is not None]
            try:
                self._write(calls)
            finally:
                for _ in batch:
                    self._queue.task_done()
            if len(calls) < len(batch):
                return

    def _write(self, calls: list[Call]) -> None:
        failure = store_batch(self.store, self.prices, calls)
        if failure is None:
            self.written += len(calls)
            self._hold()
        else:
            self.failures.append(failure)


def store_batch(store: CaptureStore, prices: PriceBook, calls: list[Call]) -> str | None:
    """Read, redact, price and store ``calls`` in one transaction; why they were not stored, or None."""
    if not calls:
        return None
    for call in calls:
        _settle(call)
    try:
        for call in calls:
            _redact(call)
            call.cost_usd = price(call, prices)
        store.add(calls)
    except (TackroomError, OSError, ValueError, ArithmeticError) as exc:
        return f"{len(calls)} call(s) not stored ({call_ids([call.call_id for call in calls])}): {exc}"
    return None
