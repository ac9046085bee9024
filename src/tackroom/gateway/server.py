"""The gateway in-process: its own event loop in a background thread, like the mock.

::

    with Gateway(upstream=mock.base_url, db=tmp_path / "state.db") as gw:
        client = anthropic.Anthropic(base_url=f"{gw.url}/t/my-trace", api_key="...")
        ...
        gw.flush()                      # every call so far is stored
        gw.store.calls(trace="my-trace")
"""

from __future__ import annotations

import asyncio
import math
import os
import threading
import time
from collections.abc import Mapping
from concurrent.futures import Future
from pathlib import Path
from types import TracebackType
from typing import Literal, Self
from urllib.parse import urlsplit

from aiohttp import web

from tackroom.errors import GatewayError
from tackroom.gateway.proxy import Proxy, quiet_logger
from tackroom.gateway.raw import RawEngine
from tackroom.gateway.routes import DEFAULT_UPSTREAMS, KEY_ENV, Provider
from tackroom.gateway.store import CaptureStore
from tackroom.gateway.stores import open_store
from tackroom.gateway.writer import CaptureWriter, Writer
from tackroom.prices import PriceBook
from tackroom.redact import redact_text
from tackroom.state.db import StateDB

MAX_BODY_BYTES = 32 * 1024 * 1024
"""The largest request body accepted (413 past it): far above any real conversation."""
KEEP_BYTES = 8 * 1024 * 1024
"""The most of one answer kept in the store (the client always gets all of it)."""
HEADER_TIMEOUT_S = 30.0
"""How long a client has to send a request's head whole, from its connection or its last answer."""
BODY_TIMEOUT_S = 60.0
"""How long a request's body may go silent (408 past it)."""
_START_S = 10.0
_STOP_GRACE_S = 5.0
Engine = Literal["aiohttp", "raw"]
"""What serves HTTP: aiohttp's server and client, or asyncio protocols parsed by httptools (faster)."""


def upstream_map(upstream: str | Mapping[Provider, str] | None) -> dict[Provider, str]:
    """Each provider's upstream base URL: one URL for all (a mock, a local relay), or per provider."""
    chosen: dict[Provider, str] = dict(DEFAULT_UPSTREAMS)
    if isinstance(upstream, str):
        chosen = dict.fromkeys(DEFAULT_UPSTREAMS, upstream)
    elif upstream is not None:
        unknown = sorted(set(upstream) - set(DEFAULT_UPSTREAMS))
        if unknown:
            raise GatewayError(
                f"unknown provider(s) {', '.join(unknown)}: known are {', '.join(DEFAULT_UPSTREAMS)}"
            )
        chosen.update(upstream)
    for provider, url in chosen.items():
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
            raise GatewayError(
                f"upstream for {provider} must be an http(s) base URL without a query, "
                f"got {redact_text(url)!r}"
            )
    return chosen


def keys_from_env(env: Mapping[str, str] | None = None) -> dict[Provider, str]:
    """The providers' keys found in the gateway's own environment (for ``--inject-keys``)."""
    env = os.environ if env is None else env
    found: dict[Provider, str] = {}
    for provider, names in KEY_ENV.items():
        for name in names:
            if env.get(name):
                found[provider] = env[name]
                break
    return found


class Gateway:
    """The capturing proxy on ``host:port`` (port 0 picks a free one), serving in a background thread.

    ``writer="process"`` stores the captures from a child process (``gateway serve`` does): the
    proxy's loop then never waits for the interpreter lock while a batch is read and stored.

    >>> import json, tempfile, urllib.request, tackroom
    >>> store = tempfile.mkdtemp() + "/state.db"
    >>> with tackroom.MockServer(tackroom.Script.text("Hello")) as mock:
    ...     with tackroom.Gateway(upstream=mock.base_url, db=store) as gateway:
    ...         asked = [{"role": "user", "content": "hi"}]
    ...         body = {"model": "claude-sonnet-4-5", "max_tokens": 64, "messages": asked}
    ...         url = gateway.trace_url("my-run") + "/v1/messages"
    ...         _ = urllib.request.urlopen(urllib.request.Request(url, json.dumps(body).encode()))
    ...         gateway.flush()
    ...         [call] = gateway.store.calls(trace="my-run")
    >>> call["status"], call["model_served"]
    (200, 'claude-sonnet-4-5')
    """

    def __init__(
        self,
        upstream: str | Mapping[Provider, str] | None = None,
        *,
        db: Path | str | StateDB | CaptureStore | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        keys: Mapping[Provider, str] | None = None,
        prices: PriceBook | None = None,
        writer: Literal["thread", "process"] = "thread",
        max_body_bytes: int = MAX_BODY_BYTES,
        keep_bytes: int = KEEP_BYTES,
        connect_timeout_s: float = 10.0,
        read_timeout_s: float = 600.0,
        header_timeout_s: float = HEADER_TIMEOUT_S,
        body_timeout_s: float = BODY_TIMEOUT_S,
        engine: Engine = "raw",
    ) -> None:
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise GatewayError(f"port must be 0-65535 (0 picks a free one), got {port!r}")
        for name, value in (
            ("connect_timeout_s", connect_timeout_s),
            ("read_timeout_s", read_timeout_s),
            ("header_timeout_s", header_timeout_s),
            ("body_timeout_s", body_timeout_s),
        ):
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
                or value <= 0
            ):
                raise GatewayError(f"{name} must be a positive number of seconds, got {value!r}")
        if max_body_bytes < 1 or keep_bytes < 0:
            raise GatewayError("max_body_bytes must be positive and keep_bytes not negative")
        self.store: CaptureStore = _store(db)
        self._writer: Writer
        if writer == "process":
            if prices is not None or not (db is None or isinstance(db, str | Path)):
                raise GatewayError("a capture writer process opens its own store: give db as a path or URL")
            from tackroom.gateway.procwriter import ProcessWriter

            self._writer = ProcessWriter(None if db is None else str(db), self.store)
        else:
            self._writer = CaptureWriter(self.store, prices or PriceBook.default())
        self._proxy = Proxy(
            upstreams=upstream_map(upstream),
            keys=dict(keys or {}),
            writer=self._writer,
            max_body_bytes=max_body_bytes,
            keep_bytes=keep_bytes,
            connect_timeout_s=connect_timeout_s,
            read_timeout_s=read_timeout_s,
            body_timeout_s=body_timeout_s,
        )
        self._header_timeout_s = header_timeout_s
        if engine not in ("aiohttp", "raw"):
            raise GatewayError(f"engine must be 'aiohttp' or 'raw', got {engine!r}")
        self._raw: RawEngine | None = None
        if engine == "raw":
            self._raw = RawEngine(
                self._proxy,
                max_body_bytes=max_body_bytes,
                keep_bytes=keep_bytes,
                connect_timeout_s=connect_timeout_s,
                read_timeout_s=read_timeout_s,
                header_timeout_s=header_timeout_s,
                body_timeout_s=body_timeout_s,
            )
        self._address = (host, port)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._port = 0

    def start(self) -> Self:
        """Bind and serve in a background thread (:class:`GatewayError` when it cannot)."""
        if self._thread is not None:
            return self
        self._writer.start()
        loop = _new_loop()
        ready: Future[int] = Future()
        thread = threading.Thread(
            target=self._serve, args=(loop, ready), name="tackroom-gateway", daemon=True
        )
        thread.start()
        try:
            self._port = ready.result(_START_S)
        except (OSError, OverflowError, ValueError) as exc:
            thread.join(_STOP_GRACE_S)
            self._writer.stop()
            host, port = self._address
            raise GatewayError(f"cannot listen on {host}:{port}: {exc}") from exc
        self._loop, self._thread = loop, thread
        return self

    def _serve(self, loop: asyncio.AbstractEventLoop, ready: Future[int]) -> None:
        asyncio.set_event_loop(loop)
        try:
            port = loop.run_until_complete(self._bind())
        except BaseException as exc:
            ready.set_exception(exc)
            loop.close()
            return
        ready.set_result(port)
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(self._unbind())
            loop.close()

    async def _bind(self) -> int:
        if self._raw is not None:
            return await self._raw.start(*self._address)
        runner = web.AppRunner(
            self._proxy.app(),
            access_log=None,
            handle_signals=False,
            shutdown_timeout=1.0,
            # aiohttp closes a connection that has no whole request this long after it opened or after
            # its last answer: the head's deadline (its default is an hour).
            keepalive_timeout=self._header_timeout_s,
            auto_decompress=False,  # the proxy decodes a body itself, and refuses what it cannot
            logger=quiet_logger(),
        )
        await runner.setup()
        host, port = self._address
        site = web.TCPSite(runner, host, port, backlog=1024, reuse_address=True)
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        server = site._server
        sockets = getattr(server, "sockets", None) or ()
        return int(sockets[0].getsockname()[1]) if sockets else port

    async def _unbind(self) -> None:
        if self._raw is not None:
            await self._raw.stop()
        if self._runner is not None:
            await self._runner.cleanup()  # in-flight calls are cancelled and recorded as incomplete
            self._runner = None

    def stop(self) -> None:
        """Stop serving, record every call still in flight, and store everything queued."""
        if self._thread is None or self._loop is None:
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(_STOP_GRACE_S + 5)
        self._writer.stop()
        self._thread = self._loop = None
        close = getattr(self.store, "close", None)
        if callable(close):
            close()  # a PostgreSQL store's connection (it opens again if the store is read later)

    def flush(self, timeout_s: float = 30.0) -> None:
        """Wait until no call is in flight (up to ``timeout_s``) and every finished call is in the store.

        A client can hold the whole answer a moment before its handler has ended: the wait
        covers that moment.
        """
        deadline = time.monotonic() + timeout_s
        while self._proxy.in_flight and time.monotonic() < deadline:
            time.sleep(0.002)
        self._writer.flush()

    @property
    def failures(self) -> list[str]:
        """Batches of calls the store refused (none, normally)."""
        return list(self._writer.failures)

    def task_count(self) -> int:
        """How many asyncio tasks the gateway's loop holds (for leak checks)."""
        if self._loop is None:
            return 0

        async def count() -> int:
            return len(asyncio.all_tasks()) - 1  # not this one

        return asyncio.run_coroutine_threadsafe(count(), self._loop).result(_STOP_GRACE_S)

    @property
    def in_flight(self) -> int:
        return self._proxy.in_flight

    @property
    def port(self) -> int:
        if self._thread is None:
            raise GatewayError("the gateway is not started")
        return self._port

    @property
    def url(self) -> str:
        """``http://host:port``: clients add ``/t/<trace-id>`` and the provider's own path."""
        host = self._address[0]
        return f"http://{f'[{host}]' if ':' in host else host}:{self.port}"

    def trace_url(self, trace_id: str) -> str:
        return f"{self.url}/t/{trace_id}"

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def _new_loop() -> asyncio.AbstractEventLoop:
    """uvloop's loop where it is installed (a call costs about half the CPU), else asyncio's."""
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


def _store(db: Path | str | StateDB | CaptureStore | None) -> CaptureStore:
    return open_store(db)
