"""The mock model server: stdlib HTTP on loopback, in a background thread.

Responses always carry ``Content-Length`` (SSE included): every client in the facts
accepted that, and a connection dropped before the announced length is an error to
every client, which is what a mid-stream disconnect has to look like.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import socket
import threading
import time
import zlib
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, Self, cast

from tackroom.mock.dispatch import Outcome, Setup, dispatch
from tackroom.mock.record import RecordedRequest, Recorder, all_strings, conversation_texts, redact
from tackroom.mock.script import Script
from tackroom.mock.vocabulary import ToolVocabulary
from tackroom.mock.wires import route
from tackroom.mock.wires.base import OfferedTool

_STOP_GRACE_S = 5.0
_POLL_S = 0.02
"""How often serve_forever checks for shutdown: stop() waits up to this long (default 0.5 s)."""


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], setup: Setup, recorder: Recorder) -> None:
        super().__init__(address, _Handler)
        self.setup = setup
        self.recorder = recorder
        self.stopping = threading.Event()
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()

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

    def do_GET(self) -> None:
        self._serve(b"")

    def do_POST(self) -> None:
        self._serve(self._read_body())

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default stderr access log: the library never prints."""

    def _serve(self, raw: bytes) -> None:
        started, received_at = time.perf_counter(), time.time()
        body = _parse(raw)
        try:
            outcome = dispatch(
                route(self.command, self.path), self.command, self.path, body, self._server.setup
            )
        except Exception as exc:  # a mock bug must reach the test as an answer, not a hang
            crash = json.dumps({"error": {"message": f"MOCK crashed: {exc!r}"}}).encode()
            outcome = Outcome(500, (crash,), answer={"kind": "crash", "error": repr(exc)})
        record = RecordedRequest(
            seq=0,
            method=self.command,
            path=self.path,
            headers=redact(self.headers.items()),
            body=body,
            wire=outcome.wire,
            turn=outcome.turn,
            answer=outcome.answer,
            streamed=outcome.streamed,
            received_at=received_at,
        )
        self._server.recorder.add(record)
        self._send(outcome, lambda: setattr(record, "latency_s", time.perf_counter() - started))

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            raw = self._read_chunked()
        else:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        encoding = self.headers.get("Content-Encoding", "").lower()
        if encoding == "gzip":
            return gzip.decompress(raw)
        if encoding == "deflate":
            return zlib.decompress(raw)
        return raw

    def _read_chunked(self) -> bytes:
        parts = []
        while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
            parts.append(self.rfile.read(size))
            self.rfile.readline()
        while self.rfile.readline() not in (b"\r\n", b"\n", b""):  # trailers
            pass
        return b"".join(parts)

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
        chunks = _sent_chunks(outcome)
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


def _parse(raw: bytes) -> Any:
    if not raw:
        return None
    text = raw.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except ValueError:
        return text


class MockServer:
    """A keyless scripted model server on ``host:port`` (port 0 picks a free one).

    Use as a context manager, or call :meth:`start` and :meth:`stop`.
    """

    def __init__(
        self,
        script: Script | None = None,
        *,
        tools: ToolVocabulary | None = None,
        log_path: str | Path | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self._setup = Setup(script, tools or ToolVocabulary())
        self._recorder = Recorder(Path(log_path) if log_path is not None else None)
        self._address = (host, port)
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> Self:
        """Bind the socket and serve in a background thread."""
        if self._httpd is not None:
            return self
        self._recorder.open()
        self._httpd = _HTTPServer(self._address, self._setup, self._recorder)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(_POLL_S,), name="tackroom-mock", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, close the listening socket and the log, and join the thread."""
        if self._httpd is None:
            return
        self._httpd.stopping.set()  # wakes handlers sleeping in a scripted delay
        self._httpd.shutdown()
        self._httpd.server_close()
        self._httpd.close_connections()
        if self._thread is not None:
            self._thread.join(_STOP_GRACE_S)
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
