"""The mock model server: stdlib HTTP on loopback, in a background thread.

:meth:`MockServer.start` binds and listens at once; the HTTP server itself (``http.server``, the
wires and the dispatch: a few tens of milliseconds of imports) is loaded in the server's thread
when the first client connects (:mod:`tackroom.mock._http`). A run never waits for it: its harness
starts while the mock is ready to accept, and one that never calls the model costs nothing more.
"""

from __future__ import annotations

import contextlib
import math
import selectors
import socket
import threading
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Self

from tackroom.errors import MockError
from tackroom.mock.record import RecordedRequest, Recorder, all_strings, conversation_texts

if TYPE_CHECKING:
    from tackroom.mock._http import _HTTPServer
    from tackroom.mock.auth import AuthMode
    from tackroom.mock.script import Script
    from tackroom.mock.vocabulary import ToolVocabulary
    from tackroom.mock.wires.base import OfferedTool

_STOP_GRACE_S = 5.0
_READ_TIMEOUT_S = 30.0
"""Seconds a client may take to send a request body before it is answered 408."""


_BACKLOG = 1024
"""Pending connections the kernel queues (socketserver's default of 5 reset 38 % of 200 clients)."""


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
        self._script, self._tools, self._auth = script, tools, auth
        self._log_path = Path(log_path) if log_path is not None else None
        self._recorder = Recorder(self._log_path)
        self._address = (host, port)
        self._read_timeout_s = read_timeout_s
        self._idle_timeout_s = idle_timeout_s
        self._listening: socket.socket | None = None
        self._wake: tuple[socket.socket, socket.socket] | None = None
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> Self:
        """Bind the socket and serve in a background thread (:class:`MockError` when it cannot)."""
        if self._listening is not None:
            return self
        try:
            self._recorder.open()
        except OSError as exc:
            raise MockError(
                f"cannot open the mock log {str(self._log_path)!r}: {exc.strerror or exc}"
            ) from exc
        host, port = self._address
        try:
            listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as socketserver does
                listening.bind(self._address)
                listening.listen(_BACKLOG)
            except BaseException:
                listening.close()
                raise
        except (OSError, OverflowError, ValueError) as exc:  # taken, not local, not an address
            self._recorder.close()
            raise MockError(f"cannot listen on {host}:{port}: {exc}") from exc
        self._listening, self._wake = listening, socket.socketpair()
        self._stopping.clear()
        self._thread = threading.Thread(target=self._serve, name="tackroom-mock", daemon=True)
        self._thread.start()
        return self

    def _serve(self) -> None:
        """In the server's thread: wait for the first client (or a stop), then load the HTTP server
        and serve until :meth:`stop`."""
        listening, wake = self._listening, self._wake
        assert listening is not None and wake is not None
        with selectors.DefaultSelector() as selector:
            selector.register(listening, selectors.EVENT_READ)
            selector.register(wake[0], selectors.EVENT_READ)
            while not self._stopping.is_set():
                if any(key.fileobj is listening for key, _ in selector.select()):
                    break
        if self._stopping.is_set():
            return
        from tackroom.mock._http import _HTTPServer
        from tackroom.mock.dispatch import Setup
        from tackroom.mock.vocabulary import ToolVocabulary

        setup = Setup(self._script, self._tools or ToolVocabulary(), self._auth)
        self._httpd = _HTTPServer(
            listening, wake, self._stopping, setup, self._recorder, self._read_timeout_s, self._idle_timeout_s
        )
        self._httpd.serve()

    def stop(self) -> None:
        """Stop serving, close the listening socket and the log, and join the thread."""
        if self._listening is None or self._wake is None:
            return
        self._stopping.set()  # wakes handlers sleeping in a scripted delay
        with contextlib.suppress(OSError):
            self._wake[1].send(b"x")
        if self._thread is not None:
            self._thread.join(_STOP_GRACE_S)
        if self._httpd is not None:
            self._httpd.server_close()  # the listening socket and the wake-up pair with it
            self._httpd.close_connections()
        else:
            for each in (self._listening, *self._wake):
                each.close()
        self._recorder.close()
        self._httpd = self._thread = self._listening = self._wake = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port."""
        if self._listening is None:
            raise RuntimeError("MockServer is not started")
        return int(self._listening.getsockname()[1])

    @property
    def base_url(self) -> str:
        """``http://host:port``, without ``/v1``."""
        host = self._address[0]
        return f"http://{f'[{host}]' if ':' in host else host}:{self.port}"

    @property
    def script(self) -> Script | None:
        """The script being played."""
        return self._script

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
    from tackroom.mock.wires import route

    wire = route(request.method, request.path)
    if wire is None or wire.wire is None or not isinstance(request.body, dict):
        return []
    return wire.wire.offered_tools(request.body)
