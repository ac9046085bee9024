"""The proxy itself: one aiohttp handler that forwards a call, streams its answer back, and captures it.

The answer passes through as it arrives, chunk by chunk and byte for byte
(the upstream is asked for an uncompressed answer, and its length, status and
headers are kept); a :class:`~tackroom.gateway.capture.Capture` reads a copy.
Every request ends in exactly one :class:`~tackroom.gateway.store.Call`, put
on the writer's queue in a ``finally``: complete, or incomplete with the
reason (upstream unreachable, reset mid-stream, a malformed stream, a client
that hung up, a gateway stopping).

An error the gateway answers itself (a malformed body, an unknown path, an
unreachable upstream) is in the shape of the wire API the path belongs to, so
each client's SDK reports it as it would report the provider's own.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
import re
import time
import uuid
import zlib
from collections.abc import Iterable, Mapping
from typing import Any

import aiohttp
import orjson
from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from multidict import CIMultiDict

from tackroom.errors import TackroomError
from tackroom.gateway.capture import Capture
from tackroom.gateway.routes import (
    RUN_HEADER,
    TRACE_HEADER,
    TRACE_ID,
    BadTarget,
    Provider,
    Target,
    model_in_path,
    place,
    wire_of_path,
)
from tackroom.gateway.store import Call
from tackroom.gateway.writer import Writer
from tackroom.mock.wires import WIRES
from tackroom.redact import is_secret_header, is_secret_name, redact_text

CALLS_PATH = "/_tackroom/calls"
CALLS_WAIT_S = 10.0
"""How long ``/_tackroom/calls`` waits for a run's calls still in flight (a harness may leave one open)."""
_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
        "accept-encoding",
    }
)
_ANSWER_DROP = _HOP | {"date", "server"}
_CREDENTIAL_HEADERS = ("authorization", "x-api-key", "x-goog-api-key", "api-key")
_QUERY_KEY = re.compile(r"([?&]key=)[^&]*")
_WIRE_ERRORS = {wire.name: wire for wire in WIRES}
_BEARER = re.compile(r"^(?:Bearer|Basic|Token)\s+", re.IGNORECASE)


class Proxy:
    """Forwards calls to the upstream of their provider and hands each finished call to the writer."""

    def __init__(
        self,
        *,
        upstreams: Mapping[Provider, str],
        keys: Mapping[Provider, str],
        writer: Writer,
        max_body_bytes: int,
        keep_bytes: int,
        connect_timeout_s: float,
        read_timeout_s: float,
        body_timeout_s: float = 60.0,
    ) -> None:
        self.upstreams = {name: url.rstrip("/") for name, url in upstreams.items()}
        self.keys = dict(keys)
        self.writer = writer
        self.max_body_bytes = max_body_bytes
        self.keep_bytes = keep_bytes
        self.body_timeout_s = body_timeout_s
        self.too_large = f"tackroom gateway: the request body is over {max_body_bytes} bytes"
        self.timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=connect_timeout_s, sock_read=read_timeout_s
        )
        self.session: aiohttp.ClientSession | None = None
        self.fresh: aiohttp.ClientSession | None = None
        """Never reuses a connection: a call that failed on a pooled one the upstream had closed goes
        once more through it."""
        self.in_flight = 0
        self.tracing: dict[str, int] = {}
        """Calls in flight per trace id (``/_tackroom/calls`` waits for a run's own to end)."""
        self._ids = uuid.uuid4().hex  # this gateway's; a call's id adds its number (uuid4 each is a syscall)
        self._count = itertools.count(1)

    def app(self) -> web.Application:
        app = web.Application(client_max_size=self.max_body_bytes, handler_args={"max_field_size": 65536})
        app.router.add_route("*", "/{tail:.*}", self.handle)
        app.on_startup.append(self._open)
        app.on_cleanup.append(self._close)
        return app

    async def _open(self, app: web.Application) -> None:
        reuse = aiohttp.TraceConfig()
        reuse.on_connection_reuseconn.append(_reused)
        self.session = self._session(
            aiohttp.TCPConnector(limit=0, ttl_dns_cache=300, enable_cleanup_closed=False), reuse
        )
        self.fresh = self._session(aiohttp.TCPConnector(limit=0, ttl_dns_cache=300, force_close=True))

    def _session(
        self, connector: aiohttp.BaseConnector, *traces: aiohttp.TraceConfig
    ) -> aiohttp.ClientSession:
        return aiohttp.ClientSession(
            connector=connector,
            timeout=self.timeout,
            auto_decompress=False,
            skip_auto_headers=("User-Agent",),
            trace_configs=list(traces) or None,
        )

    async def _close(self, app: web.Application) -> None:
        for session in (self.session, self.fresh):
            if session is not None:
                await session.close()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        if (
            request.method == "GET"
            and request.path in ("/", "/health")
            and TRACE_HEADER not in request.headers
        ):
            return web.json_response({"gateway": "tackroom", "ok": True})
        if request.path == CALLS_PATH and TRACE_HEADER not in request.headers:
            return await self._calls(request)
        call = self.open_call(request.method, request.path_qs, request.headers.items(), request.query.items())
        began = time.perf_counter()
        try:
            return await self._serve(request, call, began)
        except asyncio.CancelledError:
            interrupted(call)
            raise
        except Exception as exc:  # a gateway bug must reach the client as an answer, and be recorded
            failed(call, exc)
            return _error(
                500, call.wire_api or wire_of_path(request.path), f"tackroom gateway failed: {exc!r}"
            )
        finally:
            self.close_call(call, began)

    def open_call(
        self,
        method: str,
        path_qs: str,
        headers: Iterable[tuple[str, str]],
        query: Iterable[tuple[str, str]],
    ) -> Call:
        """A new call in flight (:meth:`close_call` ends it, always, in a ``finally``)."""
        secrets = _client_secrets(headers, query) | set(self.keys.values())
        self.in_flight += 1
        return Call(
            call_id=f"{self._ids}-{next(self._count)}",
            method=method,
            path=redact_text(path_qs, secrets),
            started_at=time.time(),
            duration_ms=0.0,
            secrets=frozenset(secrets),
        )

    def close_call(self, call: Call, began: float) -> None:
        """The call is over, however it ended: timed, redacted and handed to the writer."""
        self.in_flight -= 1
        if call.trace_id is not None:
            self._untrace(call.trace_id)
        call.duration_ms = (time.perf_counter() - began) * 1000
        call.reason = None if call.reason is None else redact_text(call.reason, call.secrets)
        self.writer.put(call)

    def admit(
        self, call: Call, method: str, path_qs: str, trace_header: str | None, run_header: str | None
    ) -> Target | tuple[int, str]:
        """Where the call goes, or the status and message refusing it (the call is attributed either way)."""
        try:
            target = place(method, path_qs, trace_header)
            if run_header is not None and not TRACE_ID.fullmatch(run_header):
                raise BadTarget(f"the {RUN_HEADER} header must match {TRACE_ID.pattern}")
        except BadTarget as exc:
            return 400, str(exc)
        call.trace_id, call.run_id = target.trace_id, run_header
        if call.trace_id is not None:
            self.tracing[call.trace_id] = self.tracing.get(call.trace_id, 0) + 1
        call.path = redact_text(target.path, call.secrets)
        call.wire_api, call.provider = target.wire, target.provider
        if target.kind is None or target.provider is None:
            return 404, f"tackroom gateway: no provider API at {method} {call.path}"
        return target

    async def stored_calls(self, method: str, run: str) -> tuple[int, bytes]:
        """``GET /_tackroom/calls?run=ID``: a run's stored calls, once those in flight are stored too.

        This is how ``tackroom run --gateway URL`` fills ``Result.capture`` from a gateway
        running elsewhere (its store may be another host's PostgreSQL). Rows carry no bodies.
        """
        if method != "GET":
            return 405, orjson.dumps({"error": f"{CALLS_PATH} answers GET only"})
        if not TRACE_ID.fullmatch(run):
            return 400, orjson.dumps({"error": f"?run= must match {TRACE_ID.pattern}"})
        deadline = time.monotonic() + CALLS_WAIT_S
        while run in self.tracing and time.monotonic() < deadline:
            await asyncio.sleep(0.005)
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, self.writer.flush)
        try:
            calls = await loop.run_in_executor(None, lambda: self.writer.store.calls(run=run))
        except TackroomError as exc:
            return 503, orjson.dumps({"error": f"the capture store failed: {exc}"})
        return 200, orjson.dumps({"calls": calls, "failures": self.writer.failures}, default=str)

    def _untrace(self, trace: str) -> None:
        left = self.tracing[trace] - 1
        if left:
            self.tracing[trace] = left
        else:
            del self.tracing[trace]

    async def _calls(self, request: web.Request) -> web.Response:
        status, body = await self.stored_calls(request.method, request.query.get("run", ""))
        return web.Response(status=status, body=body, content_type="application/json")

    async def _serve(self, request: web.Request, call: Call, began: float) -> web.StreamResponse:
        wire_shape = wire_of_path(request.path)
        target = self.admit(
            call,
            request.method,
            request.path_qs,
            request.headers.get(TRACE_HEADER),
            request.headers.get(RUN_HEADER),
        )
        if isinstance(target, tuple):
            return _refuse(call, target[0], wire_shape, target[1])
        sent = await self._read_body(request)
        body = sent if isinstance(sent, bytes) else b""
        call.request_bytes = len(body)
        decoded = (
            sent if isinstance(sent, tuple) else self.decode(request.headers.get("Content-Encoding"), body)
        )
        if isinstance(decoded, tuple):
            answer = _refuse(call, decoded[0], wire_shape, decoded[1])
            answer.force_close()  # what is left of the body is not read
            return answer
        body = decoded
        call.request_body = body or None
        if request.method == "POST":
            problem = _read_request(call, body, target)
            if problem:
                return _refuse(call, 400, wire_shape, f"tackroom gateway: {problem}")
        return await self._forward(request, call, target, body, began)

    async def _read_body(self, request: web.Request) -> bytes | tuple[int, str]:
        """The body as sent, or why not: over the size limit (413), silent ``body_timeout_s`` (408),
        malformed framing (400)."""
        if (request.content_length or 0) > self.max_body_bytes:
            return 413, self.too_large
        parts: list[bytes] = []
        size = 0
        while True:
            try:
                async with asyncio.timeout(self.body_timeout_s):
                    chunk = await request.content.readany()
            except TimeoutError:
                return 408, stalled(self.body_timeout_s)
            except HttpProcessingError as exc:
                return 400, f"tackroom gateway: the request body is malformed ({exc.message})"
            if not chunk:
                return b"".join(parts)
            size += len(chunk)
            if size > self.max_body_bytes:
                return 413, self.too_large
            parts.append(chunk)

    def decode(self, encoding: str | None, body: bytes) -> bytes | tuple[int, str]:
        """The body as its ``Content-Encoding`` says to read it (it goes upstream so, without one), or
        the status and message refusing it: an unknown coding (415), a broken stream (400), or one that
        decodes past the size limit (413)."""
        if encoding is None:
            return body
        codings = [coding.strip().lower() for coding in encoding.split(",") if coding.strip()]
        unknown = [c for c in codings if c not in ("identity", "zstd") and c not in _WBITS]
        if unknown:
            return 415, (
                f"tackroom gateway: Content-Encoding {', '.join(unknown)} is not supported "
                "(identity, gzip, deflate and zstd are)"
            )
        for coding in reversed(codings):
            if coding != "identity" and body:
                try:
                    decode = _unzstd if coding == "zstd" else _inflate
                    body = decode(body, coding, self.max_body_bytes)
                except _Undecodable as exc:
                    return exc.status, f"tackroom gateway: {exc}"
        return body

    async def _forward(
        self, request: web.Request, call: Call, target: Target, body: bytes, began: float
    ) -> web.StreamResponse:
        assert self.session is not None and self.fresh is not None and target.provider is not None
        provider = target.provider
        upstream_url = self.upstreams[provider] + self.upstream_path(target)
        shape = call.wire_api or wire_of_path(target.path)
        headers = CIMultiDict(self.upstream_headers(request.headers.items(), provider))
        attempt = _Attempt()
        for session in (self.session, self.fresh):
            try:
                upstream = await session.request(
                    request.method,
                    upstream_url,
                    headers=headers,
                    data=body if body else None,
                    allow_redirects=False,
                    trace_request_ctx=attempt,
                )
            except TimeoutError:
                return _refuse(call, 504, shape, "tackroom gateway: the upstream did not answer in time")
            except aiohttp.ClientConnectorError as exc:
                return _refuse(
                    call, 502, shape, f"tackroom gateway: the upstream is unreachable ({exc.os_error})"
                )
            except aiohttp.ClientError as exc:
                if attempt.reused and session is self.session and _before_answer(exc):
                    # A pooled connection the upstream had closed (it closes idle ones), and nothing
                    # of an answer came: once more, on a new connection.
                    attempt.reused = False
                    continue
                return _refuse(
                    call, 502, shape, f"tackroom gateway: the upstream failed before answering ({exc})"
                )
            break
        async with upstream:
            return await self._relay(request, call, upstream, began)

    async def _relay(
        self, request: web.Request, call: Call, upstream: aiohttp.ClientResponse, began: float
    ) -> web.StreamResponse:
        call.status = upstream.status
        capture = Capture(call.wire_api, keep_bytes=self.keep_bytes)
        capture.start(upstream.headers.get("Content-Type", ""))
        call.streamed = capture.sse
        answer = web.StreamResponse(status=upstream.status, reason=upstream.reason)
        for name, value in upstream.headers.items():
            if name.lower() not in _ANSWER_DROP:
                answer.headers.add(name, value)
        if upstream.content_length is not None and request.method != "HEAD":
            answer.content_length = upstream.content_length
        failure = None
        try:
            await answer.prepare(request)
        except (ConnectionError, aiohttp.ClientConnectionResetError) as exc:
            failure = f"the client went away before the answer ({exc})"
        while failure is None:
            try:
                chunk = await upstream.content.readany()
            except TimeoutError:
                failure = f"the upstream stalled after {capture.total} bytes of the answer"
                break
            except aiohttp.ClientError as exc:
                failure = f"the upstream broke off after {capture.total} bytes of the answer ({exc})"
                break
            if not chunk:
                break
            if call.first_byte_ms is None:
                call.first_byte_ms = (time.perf_counter() - began) * 1000
            capture.feed(chunk)
            try:
                await answer.write(chunk)
            except (ConnectionError, aiohttp.ClientConnectionResetError) as exc:
                failure = f"the client went away after {capture.total} bytes of the answer ({exc})"
        if failure is None:
            # Every byte was written: a client that hangs up before the closing chunk had it all.
            with contextlib.suppress(ConnectionError, aiohttp.ClientConnectionResetError):
                await answer.write_eof()
        else:
            _hang_up(request)  # the client must see a broken answer, as it would from the provider
        call.response_bytes = capture.total
        call.response_truncated = capture.truncated
        call.settle = functools.partial(_settle, capture, upstream.status, failure)
        return answer

    def upstream_path(self, target: Target) -> str:
        if target.provider == "gemini" and target.provider in self.keys:
            return _QUERY_KEY.sub("", target.path).replace("?&", "?").rstrip("?")
        return target.path

    def upstream_headers(
        self, headers: Iterable[tuple[str, str]], provider: Provider
    ) -> list[tuple[str, str]]:
        """The client's headers as sent upstream: no hop-by-hop or tackroom header, a key injected."""
        inject = self.keys.get(provider)
        kept = []
        for name, value in headers:
            low = name.lower()
            if low in _HOP or low == "content-encoding" or low.startswith("x-tackroom-"):
                continue
            if inject is not None and low in _CREDENTIAL_HEADERS:
                continue
            kept.append((name, value))
        kept.append(("Accept-Encoding", "identity"))  # the capture reads the answer as it passes
        # (the body goes decoded, so without the client's Content-Encoding: see ``decode``)
        if inject is not None:
            if provider == "anthropic":
                kept.append(("x-api-key", inject))
            elif provider == "gemini":
                kept.append(("x-goog-api-key", inject))
            else:
                kept.append(("Authorization", f"Bearer {inject}"))
        return kept


_WBITS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}
"""The request codings the gateway reads, and zlib's window setting for each."""


class _Undecodable(ValueError):
    """A body its coding cannot read, with the status that refuses it."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _inflate(body: bytes, coding: str, limit: int) -> bytes:
    """``body`` decoded (every member of a gzip stream), at most ``limit`` bytes of it."""
    out: list[bytes] = []
    size = 0
    rest = body
    raw = False
    while rest:
        decoder = zlib.decompressobj(-zlib.MAX_WBITS if raw else _WBITS[coding])
        try:
            part = decoder.decompress(rest, limit - size + 1)
        except zlib.error as exc:
            if coding == "deflate" and not raw and not out:
                raw = True  # some clients send deflate without zlib's header
                continue
            raise _Undecodable(400, f"the request body is not valid {coding} ({exc})") from None
        size += len(part)
        if size > limit:
            raise _Undecodable(413, f"the request body decodes to over {limit} bytes")
        if not decoder.eof:
            raise _Undecodable(400, f"the request body is cut short (its {coding} stream does not end)")
        out.append(part)
        rest = decoder.unused_data
        if rest and coding == "deflate":
            raise _Undecodable(400, "the request body has bytes after its deflate stream")
    return b"".join(out)


def _unzstd(body: bytes, coding: str, limit: int) -> bytes:
    """``body`` as zstd (every frame of it), at most ``limit`` bytes: how Codex signed in with ChatGPT,
    and pi's Codex route, send a request body."""
    import io

    import zstandard

    # Read bounded first (a small frame may stand for gigabytes), then check every frame ended:
    # the stream reader takes a cut-short frame for the end of the input.
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(body), read_across_frames=True)
        out = reader.read(limit + 1)
        if len(out) > limit:
            raise _Undecodable(413, f"the request body decodes to over {limit} bytes")
        rest = body
        while rest:
            frame = zstandard.ZstdDecompressor().decompressobj()
            frame.decompress(rest)
            if not frame.eof:
                raise _Undecodable(400, "the request body is cut short (its zstd stream does not end)")
            rest = frame.unused_data
    except zstandard.ZstdError as exc:
        raise _Undecodable(400, f"the request body is not valid {coding} ({exc})") from None
    return out


def stalled(seconds: float) -> str:
    return f"tackroom gateway: the request body stalled (nothing came for {seconds:g} s)"


class _ClientFaults(logging.Filter):
    """aiohttp logs a malformed request at ERROR with its traceback: the client's fault, answered 400
    already, and no news for whoever reads the gateway's log."""

    def filter(self, record: logging.LogRecord) -> bool:
        fault = record.exc_info[1] if record.exc_info else None
        return not (isinstance(fault, HttpProcessingError) and 400 <= (fault.code or 400) < 500)


def quiet_logger() -> logging.Logger:
    """The logger the aiohttp engine's server writes to: its own, without the clients' faults."""
    logger = logging.getLogger("tackroom.gateway.http")
    if not any(isinstance(found, _ClientFaults) for found in logger.filters):
        logger.addFilter(_ClientFaults())
    return logger


class _Attempt:
    """One call's try upstream, as aiohttp's tracing sees it."""

    reused = False


async def _reused(session: aiohttp.ClientSession, context: Any, params: Any) -> None:
    """aiohttp's tracing: the call's connection came from the pool."""
    attempt = context.trace_request_ctx
    if isinstance(attempt, _Attempt):
        attempt.reused = True


def _before_answer(exc: aiohttp.ClientError) -> bool:
    """A connection that died before the answer's head (``request`` returns once it has it)."""
    return isinstance(exc, aiohttp.ServerDisconnectedError | aiohttp.ClientOSError)


INTERRUPTED = "the gateway stopped (or the client went away) during the call"


def interrupted(call: Call) -> None:
    """The call was cut short from outside (the gateway stopping, the client gone): said once."""
    call.reason = call.reason or INTERRUPTED


def failed(call: Call, exc: Exception) -> None:
    """A gateway bug ended the call: recorded as a 500 with what was raised."""
    call.reason = f"gateway error: {exc!r}"
    call.status = 500


def _settle(capture: Capture, status: int, failure: str | None, call: Call) -> None:
    """What the answer said, read from its copy: done by the capture writer, after the client has it all."""
    captured = capture.finish(status, clean=failure is None, failure=failure)
    call.model_served = captured.model_served
    call.usage, call.usage_raw = captured.usage, captured.usage_raw
    call.reason = None if captured.reason is None else redact_text(captured.reason, call.secrets)
    call.response_body = bytes(capture.kept)


def _read_request(call: Call, body: bytes, target: Target) -> str | None:
    """The model asked for; a problem with the body, or None."""
    if target.kind in ("generate", "count_tokens"):
        try:
            value = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            return f"the request body is not JSON ({exc})"
        if not isinstance(value, dict):
            return "the request body is not a JSON object"
        model = value.get("model")
        call.model_requested = model if isinstance(model, str) and model else model_in_path(target.path)
    return None


def _refuse(call: Call, status: int, wire: str, message: str) -> web.Response:
    call.status = status
    call.reason = message
    return _error(status, wire, message)


def _error(status: int, wire: str, message: str) -> web.Response:
    body = error_body(status, wire, message)
    return web.Response(status=status, body=body, content_type="application/json")


def error_body(status: int, wire: str, message: str) -> bytes:
    """An error the gateway answers itself, in the shape of ``wire``'s own errors."""
    return orjson.dumps(_WIRE_ERRORS[wire].error_body(status, message))


def _hang_up(request: web.Request) -> None:
    transport = request.transport
    if transport is not None:
        transport.abort()


def _client_secrets(headers: Iterable[tuple[str, str]], query: Iterable[tuple[str, str]]) -> set[str]:
    """The credentials the client sent (header values, a ``key=`` in the query): never stored."""
    found = set()
    for name, value in headers:
        if is_secret_header(name) and value:
            found.add(value)
            found.add(_BEARER.sub("", value))
    for name, value in query:
        if is_secret_name(name) and value:
            found.add(value)
    return {value for value in found if len(value) >= 6}
