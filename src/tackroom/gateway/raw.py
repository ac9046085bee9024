"""The gateway's raw HTTP/1.1 engine: asyncio protocols (uvloop's where installed), parsed by httptools.

aiohttp's server and client cost about a millisecond per call and more per
streamed chunk; this engine does the same work with llhttp (the parser
uvicorn uses) and no framework between the sockets. A client's request is
parsed by an :class:`httptools.HttpRequestParser`, admitted by the
:class:`~tackroom.gateway.proxy.Proxy` (trace, provider, body, limits), sent on
a kept-alive connection from a per-upstream pool, and the answer goes back as
it arrives: the upstream's head with its hop-by-hop headers dropped, then each
read's body bytes at once (re-framed as chunks when the upstream chunks), while
a :class:`~tackroom.gateway.capture.Capture` keeps a copy. Every request ends
in exactly one :class:`~tackroom.gateway.store.Call`, as with aiohttp.

What a client sends that is not HTTP/1.1 (garbage, a header or URL over the
limits, an upgrade, an ``Expect`` other than ``100-continue``) gets a clear
HTTP error, is recorded as a call, and only its own connection is closed.
Pipelined requests are answered in order.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import http
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httptools

from tackroom.gateway.capture import Capture
from tackroom.gateway.proxy import (
    _ANSWER_DROP,
    CALLS_PATH,
    INTERRUPTED,
    Proxy,
    _read_request,
    _settle,
    error_body,
    failed,
    interrupted,
    stalled,
)
from tackroom.gateway.routes import RUN_HEADER, TRACE_HEADER, Provider, Target, wire_of_path
from tackroom.gateway.store import Call

MAX_URL_BYTES = 16 * 1024
"""The longest request target accepted (414 past it)."""
MAX_HEADER_BYTES = 64 * 1024
"""The largest header field (name or value) accepted, and the most header bytes in all (431 past)."""
MAX_HEADERS = 256
"""The most header fields accepted in one request (431 past it)."""
MAX_PIPELINED = 8
"""Requests read ahead on one connection before it stops reading until they are answered."""
LINGER_S = 2.0
"""How long a connection the gateway ends waits for its client to close first."""
IDLE_UPSTREAMS = 64
"""Idle kept-alive connections kept per upstream."""
_CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
_NOT_IN_TIME = "tackroom gateway: the upstream did not answer in time"
_NO_UPGRADE = "tackroom gateway: protocol upgrades and CONNECT are not supported"
_NO_BODY = frozenset({204, 304})
_SERVER_HEADERS = (("content-type", "application/json"),)


@dataclass
class RawRequest:
    """One request as read from a client connection (or what was wrong with it)."""

    method: str = ""
    url: str = ""
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytearray = field(default_factory=bytearray)
    keep_alive: bool = True
    http11: bool = True
    problem: tuple[int, str] | None = None
    """A status and message the gateway answers with instead of forwarding."""
    too_large: bool = False

    def header(self, name: str) -> str | None:
        for key, value in self.headers:
            if key.lower() == name:
                return value
        return None


def _reason(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


def _head(status: int, reason: str, headers: list[tuple[str, str]]) -> bytes:
    lines = [f"HTTP/1.1 {status} {reason}"]
    lines += [f"{name}: {value}" for name, value in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


class Upstream:
    """Where one provider's calls go: its address, and a pool of idle kept-alive connections."""

    def __init__(self, base_url: str, connect_timeout_s: float) -> None:
        parts = urlsplit(base_url)
        self.tls = parts.scheme == "https"
        self.host = parts.hostname or ""
        self.port = parts.port or (443 if self.tls else 80)
        default = (self.tls and self.port == 443) or (not self.tls and self.port == 80)
        self.host_header = self.host if default else f"{self.host}:{self.port}"
        if ":" in self.host and not default:
            self.host_header = f"[{self.host}]:{self.port}"
        self.prefix = parts.path.rstrip("/")
        self.connect_timeout_s = connect_timeout_s
        self.idle: list[UpstreamConnection] = []
        self._ssl: ssl.SSLContext | None = None

    async def connect(self) -> UpstreamConnection:
        loop = asyncio.get_running_loop()
        if self.tls and self._ssl is None:
            self._ssl = ssl.create_default_context()
        _, connection = await asyncio.wait_for(
            loop.create_connection(
                lambda: UpstreamConnection(self),
                self.host,
                self.port,
                ssl=self._ssl if self.tls else None,
                server_hostname=self.host if self.tls else None,
            ),
            self.connect_timeout_s,
        )
        return connection

    def close(self) -> None:
        for connection in self.idle:
            connection.abort()
        self.idle.clear()


class UpstreamConnection(asyncio.Protocol):
    """One connection to an upstream: relays one answer at a time to the exchange that sent its request."""

    def __init__(self, upstream: Upstream) -> None:
        self.upstream = upstream
        self.transport: Any = None  # uvloop's transports are no asyncio.Transport subclasses
        self._parts: list[bytes] = []
        self.on_body: Callable[[bytes], None] = self._parts.append
        """httptools' body callback: each chunk is kept without a Python call, and handed on once per read."""
        self.parser = httptools.HttpResponseParser(self)
        self.exchange: Exchange | None = None
        self.received = 0
        self.last_read = 0.0
        self.closed = False
        self.held = False
        """Not read while the client catches up."""
        self._headers: list[tuple[str, str]] = []
        self._reason = ""
        self._informational = False
        self._until_close = False

    # --- the exchange's side ----------------------------------------------------------------

    def send(self, exchange: Exchange, request: bytes) -> None:
        self.exchange = exchange
        self.received = 0
        self.last_read = time.monotonic()
        self.transport.write(request)

    def abort(self) -> None:
        self.closed = True
        self.exchange = None
        if self.transport is not None:
            self.transport.abort()

    def release(self) -> None:
        """The answer ended cleanly: back to the pool if the upstream keeps it alive."""
        self.exchange = None
        idle = self.upstream.idle
        if self.closed or not self.parser.should_keep_alive() or len(idle) >= IDLE_UPSTREAMS:
            self.abort()
        else:
            idle.append(self)

    # --- asyncio's side ---------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        exchange = self.exchange
        if exchange is None:  # an idle connection that speaks: not to be trusted again
            self._drop()
            return
        self.received += len(data)
        self.last_read = time.monotonic()
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._broken(exchange, "the upstream switched protocols")
        except httptools.HttpParserError as exc:
            self._broken(exchange, f"the upstream's answer is not HTTP ({exc})")
        else:
            self._deliver()
            exchange.flush()

    def _deliver(self) -> None:
        """The body bytes parsed since the last call, to the exchange in one piece."""
        parts = self._parts
        if parts:
            if self.exchange is not None:
                self.exchange.upstream_body(parts[0] if len(parts) == 1 else b"".join(parts))
            parts.clear()  # the same list: the parser holds its append

    def _broken(self, exchange: Exchange, why: str) -> None:
        self._deliver()
        exchange.flush()
        if exchange.answered:
            why = f"{why} after {exchange.capture.total} bytes of the answer"
        else:
            why = f"tackroom gateway: the upstream failed before answering ({why})"
        exchange.upstream_ended(why)
        self.abort()

    def eof_received(self) -> bool:
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._drop()
        exchange, self.exchange = self.exchange, None
        if exchange is None:
            return
        if self._until_close and exc is None and exchange.answered:
            exchange.flush()
            exchange.upstream_ended(None)  # an answer without a length ends with its connection
        else:
            exchange.upstream_ended(exchange.broke_off(exc), fresh=self.received == 0)

    def pause_writing(self) -> None:
        pass

    def resume_writing(self) -> None:
        pass

    def _drop(self) -> None:
        with contextlib.suppress(ValueError):
            self.upstream.idle.remove(self)
        if not self.closed:
            self.abort()

    # --- httptools' callbacks ---------------------------------------------------------------

    def on_message_begin(self) -> None:
        self._headers = []
        self._reason = ""
        self._parts.clear()

    def on_status(self, reason: bytes) -> None:
        self._reason += reason.decode("latin-1")

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers.append((name.decode("latin-1"), value.decode("latin-1")))

    def on_headers_complete(self) -> None:
        status = self.parser.get_status_code()
        self._informational = status < 200
        if self._informational or self.exchange is None:
            return
        names = {name.lower() for name, _ in self._headers}
        self._until_close = "content-length" not in names and "transfer-encoding" not in names
        self.exchange.upstream_head(status, self._reason, self._headers)
        if self.exchange is not None and self.exchange.head_only:
            self.exchange.upstream_ended(None)
            self.abort()  # httptools cannot skip a HEAD answer's body: the connection is not kept

    def on_message_complete(self) -> None:
        if self._informational:
            return
        self._deliver()
        exchange = self.exchange
        if exchange is not None:
            exchange.flush()
            self._until_close = False
            exchange.upstream_ended(None)
            if exchange.done.done() and exchange.reusable:
                self.release()


class Exchange:
    """One call's trip: its request upstream, its answer back to the client, a copy to the capture."""

    def __init__(
        self, proxy: Proxy, client: ClientConnection, call: Call, began: float, keep_bytes: int
    ) -> None:
        self.proxy = proxy
        self.client = client
        self.call = call
        self.began = began
        self.capture = Capture(call.wire_api, keep_bytes=keep_bytes)
        self.done: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self.upstream: UpstreamConnection | None = None
        self.answered = False
        self.head_only = False
        self.reusable = True
        self.fresh = False
        """The upstream connection died before a byte of the answer (a pooled one the upstream closed)."""
        self.sent = 0
        self._chunked = False
        self._pending: list[bytes] = []
        self._length = 0
        self._head: bytes | None = None

    def broke_off(self, exc: BaseException | None) -> str:
        if not self.answered:
            return f"tackroom gateway: the upstream failed before answering ({exc or 'connection closed'})"
        return f"the upstream broke off after {self.capture.total} bytes of the answer ({exc or 'closed'})"

    def upstream_head(self, status: int, reason: str, headers: list[tuple[str, str]]) -> None:
        if self.done.done():
            return
        call = self.call
        call.status = status
        content_type = ""
        kept = []
        length = None
        for name, value in headers:
            low = name.lower()
            if low == "content-type":
                content_type = value
            elif low == "content-length":
                length = value
            if low not in _ANSWER_DROP:
                kept.append((name, value))
        self.capture.start(content_type)
        call.streamed = self.capture.sse
        client = self.client.request
        if self.head_only or status in _NO_BODY:
            if length is not None and self.head_only:
                kept.append(("Content-Length", length))
        elif length is not None:
            kept.append(("Content-Length", length))
        elif client.http11:
            kept.append(("Transfer-Encoding", "chunked"))
            self._chunked = True
        else:
            client.keep_alive = False  # an HTTP/1.0 client reads to the end of the connection
        if not client.keep_alive:
            kept.append(("Connection", "close"))
        self.answered = True
        self._head = _head(status, reason or _reason(status), kept)  # written with the first body bytes

    def upstream_body(self, body: bytes) -> None:
        if not body or self.done.done():
            return
        call = self.call
        if call.first_byte_ms is None:
            call.first_byte_ms = (time.perf_counter() - self.began) * 1000
        self.capture.feed(body)
        self._pending.append(body)
        self._length += len(body)

    def flush(self, tail: bytes = b"") -> None:
        """What this read brought (after the head, if not yet written) goes to the client in one write."""
        data = b""
        if self._pending:
            pending, length = self._pending, self._length
            self._pending, self._length = [], 0
            data = pending[0] if len(pending) == 1 else b"".join(pending)
            if self._chunked:
                data = b"%x\r\n%b\r\n" % (length, data)
            self.sent += length
        if self._head is not None:
            data, self._head = self._head + data, None
        if data or tail:
            self.client.write(data + tail if tail else data)

    def upstream_ended(self, failure: str | None, *, fresh: bool = False) -> None:
        if self.done.done():
            return
        self.flush(b"0\r\n\r\n" if failure is None and self._chunked else b"")
        if failure is not None:
            self.reusable = False
            self.fresh = fresh and not self.answered
        self.done.set_result(failure)

    def again(self) -> None:
        """Ready to send the request once more (nothing of an answer came)."""
        self.done = asyncio.get_running_loop().create_future()
        self.reusable = True
        self.fresh = False
        self.upstream = None

    def end(self, failure: str) -> None:
        """The exchange ends from outside (client gone, timeout, gateway stopping): the upstream is cut."""
        if self.done.done():
            return
        self.reusable = False
        if self.upstream is not None:
            self.upstream.abort()
        self.done.set_result(failure)


class ClientConnection(asyncio.Protocol):
    """One client connection: requests parsed as they come, answered one after the other."""

    def __init__(self, engine: RawEngine) -> None:
        self.engine = engine
        self.transport: Any = None
        self.parser = httptools.HttpRequestParser(self)
        self.queue: collections.deque[RawRequest] = collections.deque()
        self.request = RawRequest()
        """The request being answered (the one being read is ``_reading``)."""
        self.exchange: Exchange | None = None
        self.gone = False
        self.gone_why: BaseException | None = None
        self._reading = RawRequest()
        self._header_bytes = 0
        self._broken = False
        self._paused = False
        self._task: asyncio.Task[None] | None = None
        self._loop = asyncio.get_running_loop()
        self._phase: str | None = None
        """What the client owes, by ``_due``: ``head`` (a whole request head) or ``body`` (its next bytes)."""
        self._due = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._began = False
        """A byte of the request being read has come."""

    # --- asyncio's side ---------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self.engine.clients.add(self)
        self._arm("head", self.engine.header_timeout_s)

    def data_received(self, data: bytes) -> None:
        if self._broken:
            return
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            if not self._broken:  # (an upgrade is refused when its request completes)
                self._refuse_rest(501, _NO_UPGRADE)
        except httptools.HttpParserCallbackError:
            pass  # a limit was met: the problem is already queued
        except httptools.HttpParserError as exc:
            self._refuse_rest(400, f"tackroom gateway: the request is not HTTP/1.1 ({exc})")

    def connection_lost(self, exc: Exception | None) -> None:
        self.gone = True
        self.gone_why = exc
        self._phase = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.queue.clear()
        self.engine.clients.discard(self)
        if self.exchange is not None:
            self.exchange.end(self._gone_reason())

    def pause_writing(self) -> None:
        """The client reads slower than the upstream sends: the upstream waits (never buffered whole)."""
        if self.exchange is not None and self.exchange.upstream is not None:
            upstream = self.exchange.upstream
            if upstream.transport is not None and not upstream.closed:
                upstream.held = True
                upstream.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.exchange is not None and self.exchange.upstream is not None:
            upstream = self.exchange.upstream
            upstream.held = False
            upstream.last_read = time.monotonic()  # the read timeout counts the upstream's silence only
            if upstream.transport is not None and not upstream.closed:
                upstream.transport.resume_reading()

    def _gone_reason(self) -> str:
        exchange = self.exchange
        why = f" ({self.gone_why})" if self.gone_why else ""
        if exchange is None or not exchange.answered:
            return f"the client went away before the answer{why}"
        return f"the client went away after {exchange.capture.total} bytes of the answer{why}"

    def write(self, data: bytes) -> None:
        if not self.gone:
            self.transport.write(data)

    def _linger(self) -> None:
        """The last answer is written: half-close, drop what the client still sends, close on its EOF.

        Closing outright while a client still sends would reset the connection, and a reset
        can discard the answer before the client reads it.
        """
        self.gone = True
        self._broken = True
        transport = self.transport
        if not transport.can_write_eof():
            transport.close()
            return
        transport.write_eof()
        if self._paused:
            self._paused = False
            transport.resume_reading()
        asyncio.get_running_loop().call_later(LINGER_S, transport.close)

    def hang_up(self) -> None:
        self.gone = True
        if self.transport is not None:
            self.transport.abort()

    # --- deadlines: a client that trickles its request (slowloris) holds nothing for long ----

    def _arm(self, phase: str, seconds: float) -> None:
        """The client owes ``phase`` within ``seconds`` (one timer, moved only when it must fire sooner)."""
        self._phase = phase
        self._due = self._loop.time() + seconds
        timer = self._timer
        if timer is None or timer.when() > self._due:
            if timer is not None:
                timer.cancel()
            self._timer = self._loop.call_at(self._due, self._expire)

    def _expire(self) -> None:
        self._timer = None
        if self._phase is None or self.gone or self._broken:
            return
        if self._loop.time() < self._due:  # the client got on meanwhile
            self._timer = self._loop.call_at(self._due, self._expire)
            return
        phase, self._phase = self._phase, None
        engine = self.engine
        if phase == "body":
            self._refuse_rest(408, stalled(engine.body_timeout_s))
        elif self._began:
            late = f"the request's head did not come whole within {engine.header_timeout_s:g} s"
            self._refuse_rest(408, f"tackroom gateway: {late}")
        elif self._task is None and not self.queue:
            self.hang_up()  # nothing asked, nothing owed: an idle connection is closed

    # --- httptools' callbacks ---------------------------------------------------------------

    def on_message_begin(self) -> None:
        self._reading = RawRequest()
        self._header_bytes = 0
        self._began = True
        if self._phase != "head":  # (a connection's wait for its next request counts towards it)
            self._arm("head", self.engine.header_timeout_s)

    def on_url(self, url: bytes) -> None:
        reading = self._reading
        reading.url += url.decode("latin-1")
        if len(reading.url) > MAX_URL_BYTES:
            self._limit(414, f"tackroom gateway: the request target is over {MAX_URL_BYTES} bytes")

    def on_header(self, name: bytes, value: bytes) -> None:
        self._header_bytes += len(name) + len(value)
        headers = self._reading.headers
        if self._header_bytes > MAX_HEADER_BYTES * 4 or len(headers) >= MAX_HEADERS:
            self._limit(431, "tackroom gateway: the request's headers are over the limit")
        if len(name) > MAX_HEADER_BYTES or len(value) > MAX_HEADER_BYTES:
            self._limit(431, f"tackroom gateway: a request header is over {MAX_HEADER_BYTES} bytes")
        headers.append((name.decode("latin-1"), value.decode("latin-1")))

    def on_headers_complete(self) -> None:
        reading = self._reading
        reading.method = self.parser.get_method().decode("latin-1")
        reading.http11 = self.parser.get_http_version() != "1.0"
        length = reading.header("content-length")
        too_large = length is not None and length.isdigit() and int(length) > self.engine.max_body_bytes
        expect = reading.header("expect")
        if expect is not None:
            if expect.lower() != "100-continue":
                self._limit(417, f"tackroom gateway: Expect: {expect} is not supported")
            elif too_large:
                reading.keep_alive = False  # the body will not come: the connection ends with the answer
                self._limit(413, self.engine.too_large_message)
            elif self._task is None and not self.queue:
                self.write(_CONTINUE)
        reading.too_large = too_large
        self._arm("body", self.engine.body_timeout_s)

    def on_body(self, body: bytes) -> None:
        self._due = self._loop.time() + self.engine.body_timeout_s
        reading = self._reading
        if reading.too_large:
            return  # read and dropped: the answer is a 413
        reading.body += body
        if len(reading.body) > self.engine.max_body_bytes:
            reading.too_large = True
            reading.body = bytearray()

    def on_message_complete(self) -> None:
        self._phase = None
        self._began = False
        reading = self._reading
        reading.keep_alive = reading.keep_alive and self.parser.should_keep_alive()
        if self.parser.should_upgrade():
            self._broken = True
            reading.problem = (501, _NO_UPGRADE)
            reading.keep_alive = False
        self._queue(reading)

    # --- requests, in order -----------------------------------------------------------------

    def _limit(self, status: int, message: str) -> None:
        self._refuse_rest(status, message)
        raise httptools.HttpParserCallbackError(message)  # stops the parser; data_received swallows it

    def _refuse_rest(self, status: int, message: str) -> None:
        """Answer ``status`` once those before are answered, then close: nothing more is read."""
        self._broken = True
        reading = self._reading
        reading.problem = (status, message)
        reading.keep_alive = False
        if not reading.method:
            with contextlib.suppress(httptools.HttpParserError, AttributeError):
                reading.method = self.parser.get_method().decode("latin-1")
        self._queue(reading)

    def _queue(self, request: RawRequest) -> None:
        self.queue.append(request)
        self._reading = RawRequest()
        if len(self.queue) >= MAX_PIPELINED and not self._paused:
            self._paused = True
            self.transport.pause_reading()
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._answer_all())

    async def _answer_all(self) -> None:
        try:
            while self.queue and not self.gone:
                request = self.request = self.queue.popleft()
                if self._paused and len(self.queue) < MAX_PIPELINED:
                    self._paused = False
                    self.transport.resume_reading()
                await self.engine.answer(self, request)
                if not request.keep_alive and not self.gone:
                    self._linger()
        finally:
            self._task = None
        if self._phase is None and not self.gone and not self._broken:
            self._arm("head", self.engine.header_timeout_s)  # the next request, or the connection closes


class RawEngine:
    """The listening side: one :class:`ClientConnection` per client, one :class:`Upstream` per provider."""

    def __init__(
        self,
        proxy: Proxy,
        *,
        max_body_bytes: int,
        keep_bytes: int,
        connect_timeout_s: float,
        read_timeout_s: float,
        header_timeout_s: float,
        body_timeout_s: float,
    ) -> None:
        self.proxy = proxy
        self.max_body_bytes = max_body_bytes
        self.keep_bytes = keep_bytes
        self.read_timeout_s = read_timeout_s
        self.header_timeout_s = header_timeout_s
        self.body_timeout_s = body_timeout_s
        self.too_large_message = f"tackroom gateway: the request body is over {max_body_bytes} bytes"
        self.upstreams: dict[Provider, Upstream] = {
            name: Upstream(url, connect_timeout_s) for name, url in proxy.upstreams.items()
        }
        self.clients: set[ClientConnection] = set()
        self.server: asyncio.AbstractServer | None = None

    async def start(self, host: str, port: int) -> int:
        loop = asyncio.get_running_loop()
        self.server = await loop.create_server(
            lambda: ClientConnection(self), host, port, backlog=1024, reuse_address=True
        )
        sockets = self.server.sockets or ()
        return int(sockets[0].getsockname()[1]) if sockets else port

    async def stop(self) -> None:
        """Stop listening; calls in flight end as incomplete (the gateway stopped), every socket closes."""
        if self.server is not None:
            self.server.close()
        tasks = []
        for client in list(self.clients):
            if client.exchange is not None:
                client.exchange.end(INTERRUPTED)
            if client._task is not None:
                tasks.append(client._task)
            client.hang_up()
        if tasks:
            _, late = await asyncio.wait(tasks, timeout=1.0)
            for task in late:  # a call waiting on the store (``/_tackroom/calls``), or a bug
                task.cancel()
            if late:
                await asyncio.wait(late, timeout=1.0)
        for upstream in self.upstreams.values():
            upstream.close()
        for _ in range(3):  # an aborted socket is closed by the loop's next turns, not at once
            await asyncio.sleep(0)
        if self.server is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.server.wait_closed(), 1.0)
            self.server = None

    # --- one request --------------------------------------------------------------------------

    async def answer(self, client: ClientConnection, request: RawRequest) -> None:
        proxy = self.proxy
        path, _, query = request.url.partition("?")
        trace_header = request.header(TRACE_HEADER)
        if request.problem is None and trace_header is None:
            if request.method == "GET" and path in ("/", "/health"):
                self._answer(client, 200, b'{"gateway":"tackroom","ok":true}')
                return
            if path == CALLS_PATH:
                run = dict(parse_qsl(query)).get("run", "")
                self._answer(client, *await proxy.stored_calls(request.method, run))
                return
        call = proxy.open_call(request.method, request.url, request.headers, parse_qsl(query))
        began = time.perf_counter()
        try:
            await self._serve(client, request, call, began)
        except asyncio.CancelledError:
            interrupted(call)
            raise
        except Exception as exc:  # a gateway bug must reach the client as an answer, and be recorded
            failed(call, exc)
            exchange = client.exchange
            if exchange is not None and exchange.answered:
                client.hang_up()
            else:
                shape = call.wire_api or wire_of_path(path)
                self._answer(client, 500, error_body(500, shape, f"tackroom gateway failed: {exc!r}"))
        finally:
            client.exchange = None
            proxy.close_call(call, began)

    def _answer(self, client: ClientConnection, status: int, body: bytes) -> None:
        request = client.request
        headers = [*_SERVER_HEADERS, ("Content-Length", str(len(body)))]
        if not request.keep_alive:
            headers.append(("Connection", "close"))
        client.write(_head(status, _reason(status), headers) + body)

    def _refuse(self, client: ClientConnection, call: Call, status: int, wire: str, message: str) -> None:
        call.status = status
        call.reason = message
        self._answer(client, status, error_body(status, wire, message))

    async def _serve(self, client: ClientConnection, request: RawRequest, call: Call, began: float) -> None:
        shape = wire_of_path(request.url.partition("?")[0])
        if request.problem is not None:
            if request.method and request.url.startswith("/"):
                self.proxy.admit(  # attributed as far as it can be
                    call, request.method, request.url, request.header(TRACE_HEADER), None
                )
            self._refuse(client, call, request.problem[0], shape, request.problem[1])
            return
        target = self.proxy.admit(
            call, request.method, request.url, request.header(TRACE_HEADER), request.header(RUN_HEADER)
        )
        if isinstance(target, tuple):
            self._refuse(client, call, target[0], shape, target[1])
            return
        if request.too_large:
            self._refuse(client, call, 413, shape, self.too_large_message)
            return
        body = bytes(request.body)
        call.request_bytes = len(body)
        decoded = self.proxy.decode(request.header("content-encoding"), body)
        if isinstance(decoded, tuple):
            self._refuse(client, call, decoded[0], shape, decoded[1])
            return
        body = decoded
        call.request_body = body or None
        if request.method == "POST":
            problem = _read_request(call, body, target)
            if problem:
                self._refuse(client, call, 400, shape, f"tackroom gateway: {problem}")
                return
        await self._forward(client, request, call, target, body, began)

    def _upstream_request(self, request: RawRequest, target: Target, body: bytes) -> tuple[Upstream, bytes]:
        assert target.provider is not None
        upstream = self.upstreams[target.provider]
        lines = [f"{request.method} {upstream.prefix}{self.proxy.upstream_path(target)} HTTP/1.1"]
        lines.append(f"Host: {upstream.host_header}")
        lines += [
            f"{name}: {value}"
            for name, value in self.proxy.upstream_headers(request.headers, target.provider)
        ]
        if body or request.method in ("POST", "PUT", "PATCH"):
            lines.append(f"Content-Length: {len(body)}")
        return upstream, ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body

    async def _forward(
        self,
        client: ClientConnection,
        request: RawRequest,
        call: Call,
        target: Target,
        body: bytes,
        began: float,
    ) -> None:
        shape = call.wire_api or wire_of_path(target.path)
        upstream, sent = self._upstream_request(request, target, body)
        exchange = Exchange(self.proxy, client, call, began, self.keep_bytes)
        exchange.head_only = request.method == "HEAD"
        client.exchange = exchange
        retried = False
        while True:
            reused = bool(upstream.idle) and not retried
            if reused:
                connection = upstream.idle.pop()
            else:
                try:
                    connection = await upstream.connect()
                except TimeoutError:
                    self._refuse(client, call, 504, shape, _NOT_IN_TIME)
                    return
                except OSError as exc:
                    self._refuse(
                        client, call, 502, shape, f"tackroom gateway: the upstream is unreachable ({exc})"
                    )
                    return
            if exchange.done.done():  # the client went away while connecting
                if not reused:
                    upstream.idle.append(connection)
                call.reason = exchange.done.result()
                return
            exchange.upstream = connection
            connection.send(exchange, sent)
            watch = asyncio.get_running_loop().call_later(
                self.read_timeout_s, self._watch, exchange, connection
            )
            try:
                failure = await exchange.done
            finally:
                watch.cancel()
            if failure is not None and exchange.fresh and reused:
                # A pooled connection the upstream had closed (it closes idle ones) and nothing of an
                # answer came: once more, on a new connection (another pooled one may be as stale).
                retried = True
                exchange.again()
                continue
            break
        call.response_bytes = exchange.capture.total
        call.response_truncated = exchange.capture.truncated
        if failure is not None and not exchange.answered:
            if client.gone:
                call.reason = failure
            elif failure == _NOT_IN_TIME:
                self._refuse(client, call, 504, shape, failure)
            else:
                self._refuse(client, call, 502, shape, failure)
            return
        if failure is not None:
            client.hang_up()  # the client must see a broken answer, as it would from the provider
        call.settle = functools.partial(_settle, exchange.capture, call.status or 0, failure)

    def _watch(self, exchange: Exchange, connection: UpstreamConnection) -> None:
        """The read timeout: the upstream has been silent ``read_timeout_s`` (checked, not reset per read)."""
        if exchange.done.done():
            return
        silent = 0.0 if connection.held else time.monotonic() - connection.last_read
        if silent < self.read_timeout_s:
            loop = asyncio.get_running_loop()
            loop.call_later(self.read_timeout_s - silent, self._watch, exchange, connection)
            return
        if exchange.answered:
            exchange.end(f"the upstream stalled after {exchange.capture.total} bytes of the answer")
        else:
            exchange.end(_NOT_IN_TIME)
