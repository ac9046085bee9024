"""Clients that misbehave at the gateway's door, on both engines, over real sockets: one that trickles
its request (slowloris) or goes silent is answered 408 or dropped; a body in an unknown coding is a 415
and never forwarded; a broken gzip body is a 400 that says so; a malformed request is a 400 and no
traceback in the log."""

from __future__ import annotations

import gzip
import json
import logging
import re
import socket
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import zstandard

from tackroom.gateway import Gateway
from tackroom.mock import MockServer

HANG_GUARD_S = 15.0
"""Far above the deadlines these gateways are given (1 s): only a client held for ever reaches it."""
MESSAGE = json.dumps(
    {"model": "claude-sonnet-4-5", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
).encode()


@pytest.fixture(params=["raw", "aiohttp"])
def gw(
    serve: Callable[..., MockServer], tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[tuple[Gateway, MockServer]]:
    mock = serve()
    with Gateway(
        mock.base_url,
        db=tmp_path / "state.db",
        engine=request.param,
        header_timeout_s=1.0,
        body_timeout_s=1.0,
    ) as gateway:
        yield gateway, mock


def connect(gateway: Gateway) -> socket.socket:
    return socket.create_connection(("127.0.0.1", gateway.port), timeout=HANG_GUARD_S)


def answer_of(sock: socket.socket) -> bytes:
    """All the gateway sends until it closes the connection (b"" when it closes without a word)."""
    got = b""
    while True:
        try:
            data = sock.recv(65536)
        except ConnectionResetError:
            return got
        if not data:
            return got
        got += data


def status_of(answer: bytes) -> int | None:
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.") else None


def head(length: int | None = None, *, encoding: str | None = None, close: bool = True) -> bytes:
    lines = ["POST /t/hostile/v1/messages HTTP/1.1", "Host: gateway", "x-api-key: sk-ant-HOSTILE-0001"]
    lines.append("Content-Type: application/json")
    if length is not None:
        lines.append(f"Content-Length: {length}")
    if encoding is not None:
        lines.append(f"Content-Encoding: {encoding}")
    if close:
        lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def post(gateway: Gateway, body: bytes, encoding: str | None = None) -> tuple[int | None, dict[str, Any]]:
    with connect(gateway) as sock:
        sock.sendall(head(len(body), encoding=encoding) + body)
        answer = answer_of(sock)
    text = answer.partition(b"\r\n\r\n")[2]
    return status_of(answer), json.loads(text) if text.startswith(b"{") else {}


def still_serves(gateway: Gateway) -> None:
    status, _ = post(gateway, MESSAGE)
    assert status == 200


def test_a_client_that_trickles_its_head_is_cut_off(gw: tuple[Gateway, MockServer]) -> None:
    gateway, _ = gw
    started = time.monotonic()
    with connect(gateway) as sock:
        sock.sendall(b"POST /t/hostile/v1/messages HTTP/1.1\r\nHost: gateway\r\n")
        for n in range(60):  # a header byte every 0.1 s: never a whole head, never silent
            try:
                sock.sendall(b"X-Slow-%d: 1\r\n" % n if n % 10 == 0 else b"")
                sock.sendall(b"x")
            except OSError:
                break
            time.sleep(0.1)
        answer = answer_of(sock)
    assert time.monotonic() - started < HANG_GUARD_S
    assert answer == b"" or status_of(answer) == 408, answer[:200]
    still_serves(gateway)


def test_a_connection_that_says_nothing_is_closed(gw: tuple[Gateway, MockServer]) -> None:
    gateway, _ = gw
    with connect(gateway) as sock:
        assert answer_of(sock) == b""  # closed at the head's deadline, nothing asked, nothing answered
    still_serves(gateway)


def test_a_body_that_stalls_is_a_408(gw: tuple[Gateway, MockServer]) -> None:
    gateway, mock = gw
    with connect(gateway) as sock:
        sock.sendall(head(len(MESSAGE)) + MESSAGE[:10])
        answer = answer_of(sock)
    assert status_of(answer) == 408, answer[:300]
    assert b"stalled" in answer
    assert not mock.requests  # nothing of it went upstream
    gateway.flush()
    [call] = gateway.store.calls(trace="hostile")
    assert call["status"] == 408 and "stalled" in call["reason"]
    still_serves(gateway)


def test_a_gzip_body_is_read_and_forwarded_decoded(gw: tuple[Gateway, MockServer]) -> None:
    gateway, mock = gw
    # zstd at level 3, as Codex signed in with ChatGPT sends a large /responses body; two frames too.
    zstd = zstandard.ZstdCompressor(level=3)
    half = len(MESSAGE) // 2
    for coding, encoded in (
        ("gzip", gzip.compress(MESSAGE)),
        ("deflate", zlib.compress(MESSAGE)),
        ("zstd", zstd.compress(MESSAGE)),
        ("zstd", zstd.compress(MESSAGE[:half]) + zstd.compress(MESSAGE[half:])),
    ):
        status, _ = post(gateway, encoded, coding)
        assert status == 200, coding
        sent = mock.requests[-1]
        assert sent.body == json.loads(MESSAGE) and "content-encoding" not in sent.headers
    gateway.flush()
    calls = gateway.store.calls(trace="hostile")
    assert [call["model_requested"] for call in calls] == ["claude-sonnet-4-5"] * 4


@pytest.mark.parametrize(
    ("encoded", "coding"),
    [
        (gzip.compress(MESSAGE)[:-12] + b"not gzip at all", "gzip"),
        (gzip.compress(MESSAGE)[:30], "gzip"),
        (b"\x00\x01not gzip", "gzip"),
        (gzip.compress(MESSAGE) + b"trailing", "gzip"),
        (b"{}", "deflate"),
        (zstandard.ZstdCompressor().compress(MESSAGE)[:-4], "zstd"),
        (b"\x28\xb5\x2f\xfd garbage", "zstd"),
        (zstandard.ZstdCompressor().compress(MESSAGE) + b"trailing", "zstd"),
    ],
    ids=[
        "corrupt",
        "truncated",
        "garbage",
        "trailing",
        "deflate",
        "zstd-truncated",
        "zstd-garbage",
        "zstd-trailing",
    ],
)
def test_a_broken_compressed_body_is_a_400_naming_it(
    gw: tuple[Gateway, MockServer], encoded: bytes, coding: str
) -> None:
    gateway, mock = gw
    status, error = post(gateway, encoded, coding)
    assert status == 400
    said = error["error"]["message"]
    assert re.search(rf"(not valid {coding}|cut short \(its {coding} stream)", said), said
    assert not mock.requests
    still_serves(gateway)


@pytest.mark.parametrize("coding", ["br", "compress", "x-rot13", "gzip, x-rot13"])
def test_an_unknown_content_encoding_is_a_415_and_not_forwarded(
    gw: tuple[Gateway, MockServer], coding: str
) -> None:
    gateway, mock = gw
    status, error = post(gateway, MESSAGE, coding)
    assert status == 415
    assert "Content-Encoding" in json.dumps(error)
    assert not mock.requests
    gateway.flush()
    [call] = gateway.store.calls(trace="hostile")
    assert call["status"] == 415


@pytest.mark.parametrize(
    "raw",
    [
        b"GARBAGE \x00\x01 nonsense\r\n\r\n",
        b"POST /t/hostile/v1/messages HTTP/1.1\r\nHo st: gateway\r\n\r\n",
        b"POST /t/hostile/v1/messages HTTP/1.1\r\nHost: gateway\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"POST /t/hostile/v1/messages HTTP/1.1\r\nHost: gateway\r\nContent-Length: -5\r\n\r\n",
    ],
    ids=["not-http", "bad-header", "bad-chunk", "bad-length"],
)
def test_a_malformed_request_is_a_400_without_a_traceback(
    gw: tuple[Gateway, MockServer], raw: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    gateway, _ = gw
    caplog.set_level(logging.DEBUG)
    with connect(gateway) as sock:
        sock.sendall(raw)
        answer = answer_of(sock)
    assert status_of(answer) == 400, answer[:200]
    assert not [record for record in caplog.records if record.exc_info], caplog.text
    still_serves(gateway)
