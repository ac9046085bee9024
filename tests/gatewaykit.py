"""A fake upstream for the gateway's fault tests: a real aiohttp server, faults chosen per request.

The header ``x-fault`` picks what the upstream does with a request:

* ``ok`` (or none): a whole Anthropic answer, streamed when the body asks for it;
* ``reset``: the stream's first events, then the connection is cut;
* ``slow``: the answer after ``x-delay`` seconds (0.5 by default) of silence;
* ``malformed``: a stream with an event whose data is not JSON;
* ``drip``: a stream whose events come ``x-delay`` seconds apart;
* ``429`` / ``500`` / ``503``: Anthropic's error body with that status (``retry-after`` on 429).
"""

from __future__ import annotations

import asyncio
import json
import socket
import ssl
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from types import TracebackType
from typing import Any, Self

import pytest
from aiohttp import web

MODEL = "claude-sonnet-4-5"
USAGE = {
    "input_tokens": 100,
    "cache_read_input_tokens": 20,
    "cache_creation_input_tokens": 3,
    "output_tokens": 7,
}


def _sse(kind: str, **fields: Any) -> bytes:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **fields})}\n\n".encode()


def anthropic_events(text: str = "hello there") -> list[bytes]:
    start = {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {**USAGE, "output_tokens": 1},
    }
    half = len(text) // 2
    return [
        _sse("message_start", message=start),
        _sse("content_block_start", index=0, content_block={"type": "text", "text": ""}),
        _sse("content_block_delta", index=0, delta={"type": "text_delta", "text": text[:half]}),
        _sse("content_block_delta", index=0, delta={"type": "text_delta", "text": text[half:]}),
        _sse("content_block_stop", index=0),
        _sse(
            "message_delta",
            delta={"stop_reason": "end_turn", "stop_sequence": None},
            usage={"output_tokens": 7},
        ),
        _sse("message_stop"),
    ]


def anthropic_message(text: str = "hello there") -> dict[str, Any]:
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": USAGE,
    }


class FakeUpstream:
    """The fake upstream on a free loopback port, in its own thread and event loop."""

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self._tls = tls
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self.port = 0
        self.served = 0

    @property
    def base_url(self) -> str:
        return f"{'https' if self._tls else 'http'}://127.0.0.1:{self.port}"

    def start(self) -> Self:
        ready: Future[int] = Future()
        self._thread = threading.Thread(target=self._serve, args=(ready,), daemon=True)
        self._thread.start()
        self.port = ready.result(10)
        return self

    def _serve(self, ready: Future[int]) -> None:
        asyncio.set_event_loop(self._loop)
        ready.set_result(self._loop.run_until_complete(self._bind()))
        self._loop.run_forever()
        assert self._runner is not None
        self._loop.run_until_complete(self._runner.cleanup())
        self._loop.close()

    async def _bind(self) -> int:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0, backlog=1024, ssl_context=self._tls)
        await site.start()
        return int(site._server.sockets[0].getsockname()[1])  # type: ignore[union-attr]

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        assert self._thread is not None
        self._thread.join(10)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        self.served += 1
        fault = request.headers.get("x-fault", "ok")
        body = await request.read()
        streamed = b'"stream": true' in body or b'"stream":true' in body
        if fault == "slow" or fault == "drip":
            delay = float(request.headers.get("x-delay", "0.5"))
        if fault == "slow":
            await asyncio.sleep(delay)
        if fault in ("429", "500", "503"):
            status = int(fault)
            kind = {429: "rate_limit_error", 500: "api_error", 503: "overloaded_error"}[status]
            headers = {"retry-after": "1"} if status == 429 else {}
            return web.json_response(
                {"type": "error", "error": {"type": kind, "message": f"fake {status}"}},
                status=status,
                headers=headers,
            )
        if not streamed:
            return web.json_response(anthropic_message())
        events = anthropic_events()
        if fault == "malformed":
            events.insert(2, b"event: content_block_delta\ndata: {not json at all\n\n")
        answer = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await answer.prepare(request)
        for n, event in enumerate(events):
            if fault == "reset" and n == 3:
                assert request.transport is not None
                sock = request.transport.get_extra_info("socket")
                if sock is not None:  # RST, not FIN: the client sees a reset
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                request.transport.close()
                return answer
            await answer.write(event)
            if fault == "drip":
                await asyncio.sleep(delay)
        await answer.write_eof()
        return answer


def free_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


_clients: list[Any] = []


def claude(**options: Any) -> Any:
    """An ``anthropic.Anthropic`` client, closed when the test ends (its pooled sockets with it)."""
    import anthropic

    _clients.append(anthropic.Anthropic(**options))
    return _clients[-1]


def gpt(**options: Any) -> Any:
    """An ``openai.OpenAI`` client, closed when the test ends."""
    import openai

    _clients.append(openai.OpenAI(**options))
    return _clients[-1]


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while _clients:
        _clients.pop().close()
