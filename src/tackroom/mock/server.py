"""The mock model server: stdlib HTTP on loopback, in a background thread.

Responses always carry ``Content-Length`` (SSE included): every client in the facts
accepted that, and a connection dropped before the announced length is an error to
every client, which is what a mid-stream disconnect has to look like.
"""

from __future__ import annotations

import contextlib
import json
import math
import selectors
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, Self, cast

from tackroom.errors import MockError
from tackroom.mock.auth import AuthMode, Credential, credential
from tackroom.mock.dispatch import Outcome, Setup, dispatch, rejection
from tackroom.mock.framing import Rejected, parse_json, read_body
from tackroom.mock.record import RecordedRequest, Recorder, all_strings, conversation_texts, redact
from tackroom.mock.script import Script
from tackroom.mock.vocabulary import ToolVocabulary
from tackroom.mock.wires import route
from tackroom.mock.wires.base import OfferedTool

_STOP_GRACE_S = 5.0
_READ_TIMEOUT_S = 30.0
"""Seconds a client may take to send a request body before it is answered 408."""


_BACKLOG = 1024
"""Pending connections the kernel queues (socketserver's default of 5 reset 38 % of 200 clients)."""


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = _BACKLOG

    def __init__(
        self,
        address: tuple[str, int],
        setup: Setup,
        recorder: Recorder,
        read_timeout_s: float,
        idle_timeout_s: float | None = None,
    ) -> None:
        self._wake_r, self._wake_w = socket.socketpair()  # before the bind, whose failure closes them
        super().__init__(address, _Handler)
        self.setup = setup
        self.recorder = recorder
        self.read_timeout_s = read_timeout_s
        self.idle_timeout_s = idle_timeout_s
        self.stopping = threading.Event()
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()

    def serve(self) -> None:
        """Serve until :meth:`wake` (socketserver's ``serve_forever`` polls for its shutdown flag, so
        a stop waits out its poll interval: each run's end paid it). One selector waits on the
        listening socket and a wake-up socket, so a stop is answered at once."""
        with selectors.DefaultSelector() as selector:
            selector.register(self, selectors.EVENT_READ)
            selector.register(self._wake_r, selectors.EVENT_READ)
            while not self.stopping.is_set():
                for key, _ in selector.select():
                    if key.fileobj is self and not self.stopping.is_set():
                        self._handle_request_noblock()  # type: ignore[attr-defined]  # (what serve_forever calls)

    def wake(self) -> None:
        """Make :meth:`serve` return (``stopping`` is set first)."""
        with contextlib.suppress(OSError):
            self._wake_w.send(b"x")

    def server_close(self) -> None:
        super().server_close()
        self._wake_r.close()
        self._wake_w.close()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._open_lock:
            self._open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._open_lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay quiet: clients hang up mid-answer on purpose (aborts, our own disconnects)."""

    def close_connections(self) -> None:
        """Close kept-alive client connections so their handler threads end."""
        with self._open_lock:
            connections, self._open = list(self._open), set()
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
            connection.close()


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.1 keep-alive: the Node clients pool connections.
    protocol_version = "HTTP/1.1"
    server_version = "tackroom-mock"

    @property
    def _server(self) -> _HTTPServer:
        return cast(_HTTPServer, self.server)

    def handle(self) -> None:
        self._kept = False
        super().handle()

    def handle_one_request(self) -> None:
        # A kept-alive connection idle this long before its next request is closed, as providers and
        # their front ends close theirs (the stdlib handler closes on the read's timeout); a new one
        # waits for its first request as before.
        if self._kept:
            self.connection.settimeout(self._server.idle_timeout_s)
        self._kept = True
        super().handle_one_request()

    def do_GET(self) -> None:
        self._serve()

    # Every common method is read, answered (404 where the mock has no route) and recorded;
    # anything more exotic gets the stdlib's 501, recorded through send_error.
    do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_HEAD = do_GET

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default stderr access log: the library never prints."""

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """A request the stdlib refused (bad request line or headers, unknown method) is recorded too."""
        answer = {"kind": "rejected", "status": code, "message": message}
        self._record(Outcome(code, (), answer=answer), None, time.time())
        super().send_error(code, message, explain)

    def _serve(self) -> None:
        started, received_at = time.perf_counter(), time.time()
        try:
            body = parse_json(self._read_body())
        except Rejected as rejected:
            # The stream can no longer be trusted to be at a request boundary.
            self.close_connection = True
            outcome, body = rejection(rejected.status, rejected.message), None
        else:
            outcome = self._dispatch(body)
        record = self._record(outcome, body, received_at, self._credential())
        self._send(outcome, lambda: setattr(record, "latency_s", time.perf_counter() - started))

    def _dispatch(self, body: Any) -> Outcome:
        method = "GET" if self.command == "HEAD" else self.command  # HEAD: GET's answer, headers only
        try:
            found = route(method, self.path)
            return dispatch(found, method, self.path, body, self._server.setup, self._credential())
        except Exception as exc:  # a mock bug must reach the test as an answer, not a hang
            crash = json.dumps({"error": {"message": f"MOCK crashed: {exc!r}"}}).encode()
            return Outcome(500, (crash,), answer={"kind": "crash", "error": repr(exc)})

    def _credential(self) -> Credential | None:
        """The credential a model call carries, in its wire's form (None for any other request)."""
        found = route("GET" if self.command == "HEAD" else self.command, self.path)
        if found is None or found.wire is None:
            return None
        headers = {name.lower(): value for name, value in self.headers.items()}
        return credential(found.wire.name, headers, self.path)

    def _record(
        self, outcome: Outcome, body: Any, received_at: float, seen: Credential | None = None
    ) -> RecordedRequest:
        headers = getattr(self, "headers", None)
        record = RecordedRequest(
            seq=0,
            method=self.command or "",
            path=getattr(self, "path", ""),
            headers=redact(headers.items()) if headers is not None else {},
            body=body,
            wire=outcome.wire,
            turn=outcome.turn,
            answer=outcome.answer,
            streamed=outcome.streamed,
            received_at=received_at,
            auth=seen.form if seen is not None else None,
        )
        self._server.recorder.add(record)
        return record

    def _read_body(self) -> bytes:
        """The body, read with a deadline: a client that stops sending mid-body gets a 408."""
        self.connection.settimeout(self._server.read_timeout_s)
        try:
            return read_body(self.rfile, self.headers, self.command)
        except TimeoutError as exc:
            raise Rejected(408, f"body not received within {self._server.read_timeout_s:g}s") from exc
        finally:
            self.connection.settimeout(None)

    def _send(self, outcome: Outcome, last_byte: Callable[[], None]) -> None:
        """Write the answer; ``last_byte`` runs just before the final write, so a client that
        has the whole answer always finds its latency recorded."""
        if outcome.delay_s and self._server.stopping.wait(outcome.delay_s):
            return
        self.send_response(outcome.status)
        self.send_header("Content-Type", outcome.content_type)
        self.send_header("Content-Length", str(sum(len(c) for c in outcome.chunks)))
        if outcome.streamed:
            self.send_header("Cache-Control", "no-cache")
        chunks = _sent_chunks(outcome) if self.command != "HEAD" else ()
        if not chunks:
            last_byte()
        self.end_headers()
        for n, chunk in enumerate(chunks, 1):
            if n == len(chunks):
                last_byte()
            self.wfile.write(chunk)
        if outcome.disconnect_after is not None:
            self._drop()

    def _drop(self) -> None:
        """Close the connection short of the announced length: the client sees a broken stream."""
        self.wfile.flush()
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)


def _sent_chunks(outcome: Outcome) -> tuple[bytes, ...]:
    """The chunks to write: all, or those before a scripted disconnect (none when not streamed)."""
    cut = outcome.disconnect_after
    if cut is None:
        return outcome.chunks
    return outcome.chunks[:cut] if outcome.streamed else ()


class MockServer:
    """A keyless scripted model server on ``host:port`` (port 0 picks a free one).

    Use as a context manager, or call :meth:`start` and :meth:`stop`. It answers each provider's
    wire (Anthropic's Messages, OpenAI's Chat Completions and Responses, Gemini's) with the script's
    next turn:

    >>> import json, urllib.request, tackroom
    >>> with tackroom.MockServer(tackroom.Script.text("Hello")) as mock:
    ...     asked = [{"role": "user", "content": "hi"}]
    ...     body = {"model": "claude-sonnet-4-5", "max_tokens": 64, "messages": asked}
    ...     call = urllib.request.Request(mock.base_url + "/v1/messages", json.dumps(body).encode())
    ...     answer = json.load(urllib.request.urlopen(call))
    >>> answer["content"][0]["text"], len(mock.requests)
    ('Hello', 1)
    """

    def __init__(
        self,
        script: Script | None = None,
        *,
        tools: ToolVocabulary | None = None,
        log_path: str | Path | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        read_timeout_s: float = _READ_TIMEOUT_S,
        idle_timeout_s: float | None = None,
        auth: AuthMode = "any",
    ) -> None:
        """``idle_timeout_s``: close a kept-alive connection idle that long (None: keep it open).
        ``auth="required"``: a model call without a credential in its provider's form (see
        :mod:`tackroom.mock.auth`) gets that provider's 401; ``"any"`` answers every call."""
        if not isinstance(host, str) or not host.strip():
            raise MockError("host must name an address to bind, e.g. 127.0.0.1 (an empty one means all)")
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise MockError(f"port must be 0-65535 (0 picks a free one), got {port!r}")
        if not math.isfinite(read_timeout_s) or read_timeout_s <= 0:
            raise MockError(f"read_timeout_s must be a positive number of seconds, got {read_timeout_s!r}")
        if idle_timeout_s is not None and (not math.isfinite(idle_timeout_s) or idle_timeout_s <= 0):
            raise MockError(f"idle_timeout_s must be a positive number of seconds, got {idle_timeout_s!r}")
        if auth not in ("any", "required"):
            raise MockError(f"auth must be 'any' or 'required', got {auth!r}")
        self._setup = Setup(script, tools or ToolVocabulary(), auth)
        self._log_path = Path(log_path) if log_path is not None else None
        self._recorder = Recorder(self._log_path)
        self._address = (host, port)
        self._read_timeout_s = read_timeout_s
        self._idle_timeout_s = idle_timeout_s
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> Self:
        """Bind the socket and serve in a background thread (:class:`MockError` when it cannot)."""
        if self._httpd is not None:
            return self
        try:
            self._recorder.open()
        except OSError as exc:
            raise MockError(
                f"cannot open the mock log {str(self._log_path)!r}: {exc.strerror or exc}"
            ) from exc
        host, port = self._address
        try:
            self._httpd = _HTTPServer(
                self._address, self._setup, self._recorder, self._read_timeout_s, self._idle_timeout_s
            )
        except (OSError, OverflowError, ValueError) as exc:  # taken, not local, not an address
            self._recorder.close()
            raise MockError(f"cannot listen on {host}:{port}: {exc}") from exc
        self._thread = threading.Thread(target=self._httpd.serve, name="tackroom-mock", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, close the listening socket and the log, and join the thread."""
        if self._httpd is None:
            return
        self._httpd.stopping.set()  # wakes handlers sleeping in a scripted delay
        self._httpd.wake()
        if self._thread is not None:
            self._thread.join(_STOP_GRACE_S)
        self._httpd.server_close()
        self._httpd.close_connections()
        self._recorder.close()
        self._httpd = self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port."""
        if self._httpd is None:
            raise RuntimeError("MockServer is not started")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://host:port``, without ``/v1``."""
        host = self._address[0]
        return f"http://{f'[{host}]' if ':' in host else host}:{self.port}"

    @property
    def script(self) -> Script | None:
        """The script being played."""
        return self._setup.script

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, oldest first."""
        return self._recorder.snapshot()

    def texts(self) -> list[str]:
        """Every distinct text that reached the model (system prompts, messages, contents), in order."""
        seen: dict[str, None] = {}
        for request in self.requests:
            seen.update(dict.fromkeys(conversation_texts(request.body)))
        return list(seen)

    def offered_tools(self) -> set[str]:
        """Every tool name any request offered, namespace children flattened to ``NS__child``."""
        names: set[str] = set()
        for request in self.requests:
            names.update(t.name for t in _offered(request))
        return names

    def saw(self, marker: str) -> bool:
        """Whether ``marker`` occurs in any string of any request body, tool descriptions included."""
        return any(marker in s for r in self.requests for s in all_strings(r.body))

    def latencies(self) -> list[float]:
        """Seconds from receipt to last byte for each answered request, oldest first."""
        return [r.latency_s for r in self.requests if r.latency_s is not None]


def _offered(request: RecordedRequest) -> list[OfferedTool]:
    wire = route(request.method, request.path)
    if wire is None or wire.wire is None or not isinstance(request.body, dict):
        return []
    return wire.wire.offered_tools(request.body)
