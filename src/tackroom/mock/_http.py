"""The mock's HTTP server, loaded in its thread when the first client connects (see
:mod:`tackroom.mock.server`).

Responses always carry ``Content-Length`` (SSE included): every client in the facts
accepted that, and a connection dropped before the announced length is an error to
every client, which is what a mid-stream disconnect has to look like.
"""

from __future__ import annotations

import contextlib
import json
import selectors
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast

from tackroom.mock.auth import Credential, credential
from tackroom.mock.dispatch import Outcome, Setup, dispatch, rejection
from tackroom.mock.framing import Rejected, parse_json, read_body
from tackroom.mock.record import RecordedRequest, Recorder, redact
from tackroom.mock.wires import route


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self,
        listening: socket.socket,
        wake: tuple[socket.socket, socket.socket],
        stopping: threading.Event,
        setup: Setup,
        recorder: Recorder,
        read_timeout_s: float,
        idle_timeout_s: float | None = None,
    ) -> None:
        """Serve on ``listening``, a socket :class:`~tackroom.mock.MockServer` bound and listens on;
        ``wake`` is its wake-up pair and ``stopping`` its stop flag, shared with this server."""
        self._wake_r, self._wake_w = wake
        super().__init__(listening.getsockname()[:2], _Handler, bind_and_activate=False)
        self.socket.close()  # the one socketserver made: the mock's own, already listening, is used
        self.socket = listening
        self.server_address = listening.getsockname()
        self.setup = setup
        self.recorder = recorder
        self.read_timeout_s = read_timeout_s
        self.idle_timeout_s = idle_timeout_s
        self.stopping = stopping
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
