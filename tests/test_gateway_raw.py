"""The raw engine at the socket: keep-alive, pipelining, ``Expect``, limits, garbage (hypothesis).

Every request below is written byte by byte to a plain socket: what a client
that is not an SDK may send. Each gets a clear HTTP answer, each is recorded
as one call, and the gateway keeps serving everyone else.
"""

from __future__ import annotations

import json
import shutil
import socket
import ssl
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.gatewaykit import FakeUpstream

from tackroom.gateway import Gateway
from tackroom.gateway.raw import MAX_HEADER_BYTES, MAX_URL_BYTES

BODY = json.dumps(
    {"model": "claude-sonnet-4-5", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
)
STREAM = BODY[:-1] + ', "stream": true}'


@pytest.fixture(scope="module")
def upstream() -> Iterator[FakeUpstream]:
    with FakeUpstream() as fake:
        yield fake


@pytest.fixture(scope="module")
def gw(upstream: FakeUpstream, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    db = tmp_path_factory.mktemp("raw") / "state.db"
    with Gateway(upstream=upstream.base_url, db=db, engine="raw", max_body_bytes=10_000) as gateway:
        yield gateway


def connect(gw: Gateway) -> socket.socket:
    _readers.clear()
    sock = socket.create_connection(("127.0.0.1", gw.port), timeout=10)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def read_all(sock: socket.socket) -> bytes:
    """Everything until the gateway closes the connection."""
    reader = _readers.get(sock.fileno())
    data = b"" if reader is None else reader.read()
    while chunk := sock.recv(65536):
        data += chunk
    return data


def read_answer(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """One answer with a Content-Length or chunked body, read off a kept-alive connection."""
    reader = _readers.setdefault(sock.fileno(), sock.makefile("rb"))
    status_line = reader.readline().decode("latin-1")
    assert status_line.startswith("HTTP/1.1 "), status_line
    headers = {}
    while (line := reader.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.lower()] = value.strip()
    if "content-length" in headers:
        return int(status_line.split()[1]), headers, reader.read(int(headers["content-length"]))
    assert headers.get("transfer-encoding") == "chunked"
    body = b""
    while size := int(reader.readline(), 16):
        body += reader.read(size)
        reader.readline()
    reader.readline()
    return int(status_line.split()[1]), headers, body


_readers: dict[int, Any] = {}


def request(path: str, body: str = BODY, *, extra: str = "", trace: str = "raw") -> bytes:
    return (
        f"POST /t/{trace}{path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"x-api-key: sk-ant-RAW-TEST-KEY-01\r\n{extra}Content-Length: {len(body)}\r\n\r\n{body}"
    ).encode()


def calls_of(gw: Gateway, trace: str) -> list[dict[str, Any]]:
    gw.flush()
    return gw.store.calls(trace=trace)


def still_up(gw: Gateway) -> None:
    with connect(gw) as sock:
        sock.sendall(request("/v1/messages", trace="alive"))
        status, _, body = read_answer(sock)
    assert status == 200 and json.loads(body)["usage"]["output_tokens"] == 7


def test_keep_alive_serves_many_calls_on_one_connection(gw: Gateway) -> None:
    with connect(gw) as sock:
        for _ in range(3):
            sock.sendall(request("/v1/messages", trace="keep"))
            status, headers, body = read_answer(sock)
            assert status == 200 and "connection" not in headers
            assert json.loads(body)["content"][0]["text"] == "hello there"
        sock.sendall(request("/v1/messages", STREAM, trace="keep"))
        status, headers, body = read_answer(sock)
        assert status == 200 and headers["content-type"].startswith("text/event-stream")
        assert body.count(b"event: ") == 7 and body.endswith(
            b'event: message_stop\ndata: {"type": "message_stop"}\n\n'
        )
    found = calls_of(gw, "keep")
    assert [(c["outcome"], c["streamed"]) for c in found] == [("complete", False)] * 3 + [("complete", True)]
    assert found[-1]["usage"]["output"] == 7


def test_pipelined_requests_are_answered_in_order(gw: Gateway) -> None:
    with connect(gw) as sock:
        sock.sendall(
            request("/v1/messages", STREAM, trace="pipe-1")
            + request("/v1/nowhere", trace="pipe-2")
            + request("/v1/messages", trace="pipe-3")
        )
        answers = [read_answer(sock) for _ in range(3)]
    assert [status for status, _, _ in answers] == [200, 404, 200]
    assert answers[0][2].count(b"event: ") == 7 and b"no provider API" in answers[1][2]
    for n, outcome in ((1, "complete"), (2, "incomplete"), (3, "complete")):
        [call] = calls_of(gw, f"pipe-{n}")
        assert call["outcome"] == outcome


def test_expect_100_continue(gw: Gateway) -> None:
    head, _, body = request("/v1/messages", extra="Expect: 100-continue\r\n", trace="cont").partition(
        b"\r\n\r\n"
    )
    with connect(gw) as sock:
        sock.sendall(head + b"\r\n\r\n")
        assert sock.recv(100) == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(body)
        status, _, answer = read_answer(sock)
    assert status == 200 and b"hello there" in answer
    [call] = calls_of(gw, "cont")
    assert call["outcome"] == "complete"


def test_expect_a_body_over_the_limit_is_a_413_before_it_is_sent(gw: Gateway) -> None:
    head = (
        "POST /t/cont-big/v1/messages HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
        "Content-Length: 20000\r\n\r\n"
    )
    with connect(gw) as sock:
        sock.sendall(head.encode())
        answer = read_all(sock)  # the connection closes: the body will never be read
    assert answer.startswith(b"HTTP/1.1 413 ") and b"over 10000 bytes" in answer
    [call] = calls_of(gw, "cont-big")
    assert (call["status"], call["outcome"]) == (413, "incomplete")


def test_an_unknown_expectation_is_a_417(gw: Gateway) -> None:
    with connect(gw) as sock:
        sock.sendall(request("/v1/messages", extra="Expect: the-unexpected\r\n", trace="exp"))
        answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 417 ")
    [call] = calls_of(gw, "exp")
    assert (call["status"], call["outcome"]) == (417, "incomplete")


def test_a_chunked_request_body_is_read_whole(gw: Gateway) -> None:
    chunked = "".join(f"{len(part):x}\r\n{part}\r\n" for part in (BODY[:10], BODY[10:])) + "0\r\n\r\n"
    raw = (
        "POST /t/chunked-in/v1/messages HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked
    ).encode()
    with connect(gw) as sock:
        sock.sendall(raw)
        status, _, answer = read_answer(sock)
    assert status == 200 and b"hello there" in answer
    [call] = calls_of(gw, "chunked-in")
    assert call["request_bytes"] == len(BODY) and call["model_requested"] == "claude-sonnet-4-5"


def test_a_chunked_body_over_the_limit_is_a_413(gw: Gateway) -> None:
    big = "x" * 6000
    chunked = f"{len(big):x}\r\n{big}\r\n" * 3 + "0\r\n\r\n"
    raw = (
        "POST /t/chunked-big/v1/messages HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked
    ).encode()
    with connect(gw) as sock:
        sock.sendall(raw)
        status, _, answer = read_answer(sock)
    assert status == 413 and b"over 10000 bytes" in answer
    [call] = calls_of(gw, "chunked-big")
    assert (call["status"], call["outcome"]) == (413, "incomplete")
    still_up(gw)


def test_an_http_1_0_client_reads_the_stream_to_the_close(gw: Gateway) -> None:
    raw = request("/v1/messages", STREAM, trace="old").replace(b"HTTP/1.1", b"HTTP/1.0", 1)
    with connect(gw) as sock:
        sock.sendall(raw)
        answer = read_all(sock)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 ") and b"chunked" not in head.lower()
    assert body.count(b"event: ") == 7
    [call] = calls_of(gw, "old")
    assert call["outcome"] == "complete" and call["usage"]["output"] == 7


@pytest.mark.parametrize(
    ("raw", "status", "words"),
    [
        (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(range(40)), 400, b"not HTTP/1.1"),
        (b"GET /health HTTP/1.1\r\nHost x\r\n\r\n", 400, b"not HTTP/1.1"),
        (b"POST /t/x/v1/messages HTTP/1.1\r\nContent-Length: -4\r\n\r\n", 400, b"not HTTP/1.1"),
        (b"GET /" + b"a" * (MAX_URL_BYTES + 10) + b" HTTP/1.1\r\n\r\n", 414, b"request target"),
        (b"GET / HTTP/1.1\r\nX-Big: " + b"a" * (MAX_HEADER_BYTES + 10) + b"\r\n\r\n", 431, b"header"),
        (b"GET / HTTP/1.1\r\n" + b"X-N: 1\r\n" * 300 + b"\r\n", 431, b"headers"),
        (
            b"GET /chat HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n",
            501,
            b"upgrade",
        ),
        (b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", 501, b"CONNECT"),
    ],
    ids=[
        "tls-hello",
        "header-no-colon",
        "negative-length",
        "url-too-long",
        "header-too-big",
        "too-many-headers",
        "upgrade",
        "connect",
    ],
)
def test_what_is_not_http_is_a_clear_error_recorded_and_the_gateway_stays_up(
    gw: Gateway, raw: bytes, status: int, words: bytes
) -> None:
    gw.flush()
    before = len(gw.store.calls())
    with connect(gw) as sock:
        sock.sendall(raw)
        answer = read_all(sock)
    assert answer.startswith(f"HTTP/1.1 {status} ".encode()), answer[:200]
    assert words in answer and b"connection: close" in answer.lower()
    gw.flush()
    found = gw.store.calls()
    assert len(found) == before + 1
    assert (found[-1]["status"], found[-1]["outcome"]) == (status, "incomplete")
    still_up(gw)


def test_a_garbage_request_after_a_good_one_waits_its_turn(gw: Gateway) -> None:
    with connect(gw) as sock:
        sock.sendall(request("/v1/messages", STREAM, trace="then-junk") + b"\x00\x01junk\r\n\r\n")
        status, _, body = read_answer(sock)
        rest = read_all(sock)
    assert status == 200 and body.count(b"event: ") == 7
    assert rest.startswith(b"HTTP/1.1 400 ")


def test_a_client_that_hangs_up_before_the_answer_is_recorded(gw: Gateway) -> None:
    with connect(gw) as sock:
        sock.sendall(request("/v1/messages", extra="x-fault: slow\r\nx-delay: 0.3\r\n", trace="gone"))
    time.sleep(0.6)
    [call] = calls_of(gw, "gone")
    assert call["outcome"] == "incomplete" and "the client went away" in call["reason"]
    still_up(gw)


_METHODS = st.sampled_from([b"GET", b"POST", b"PUT", b"HEAD", b"DELETE", b"OPTIONS", b"PRI", b"\x00", b""])
_PIECES = st.one_of(
    st.binary(max_size=64),
    st.sampled_from(
        [
            b"\r\n",
            b"\r\n\r\n",
            b" HTTP/1.1",
            b" HTTP/1.0",
            b"Content-Length: 5",
            b"Transfer-Encoding: chunked",
            b"Expect: 100-continue",
            b"/t/fz/v1/messages",
            b"/health",
            b"0\r\n\r\n",
            b"ffffffff\r\n",
            b":",
            b"{}",
        ]
    ),
)
_RAW = st.builds(lambda m, parts: m + b" " + b"".join(parts), _METHODS, st.lists(_PIECES, max_size=12))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(chunks=st.lists(_RAW, min_size=1, max_size=3))
def test_random_bytes_at_the_socket_get_http_answers_and_leave_nothing_behind(
    gw: Gateway, chunks: list[bytes]
) -> None:
    with connect(gw) as sock:
        sock.settimeout(3)
        try:
            for chunk in chunks:
                sock.sendall(chunk)
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # the gateway answered an error and closed: what it answered is still read
        try:
            answer = read_all(sock)
        except OSError:
            answer = b""
    # Whatever came back is HTTP answers, never a traceback or half a head.
    while answer:
        assert answer.startswith(b"HTTP/1.1 "), answer[:100]
        head, sep, answer = answer.partition(b"\r\n\r\n")
        assert sep and b"Traceback" not in head
        status = int(head.split()[1])
        assert 100 <= status < 600
        length = [line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")]
        if length:
            answer = answer[int(length[0].split(b":")[1]) :]
        elif status != 100:
            break  # a relayed, chunked answer: its body is the upstream's
    deadline = time.monotonic() + 5
    while gw.in_flight and time.monotonic() < deadline:
        time.sleep(0.01)
    assert gw.in_flight == 0
    assert not gw.failures


def test_after_the_fuzz_the_gateway_holds_no_tasks_and_serves(gw: Gateway) -> None:
    still_up(gw)
    time.sleep(0.1)
    assert gw.task_count() == 0
    assert gw.in_flight == 0


def test_an_unknown_engine_is_refused(tmp_path: Path) -> None:
    from tackroom.errors import GatewayError

    with pytest.raises(GatewayError, match="engine"):
        Gateway("http://127.0.0.1:9", db=tmp_path / "c.db", engine="fast")  # type: ignore[arg-type]


@pytest.mark.skipif(shutil.which("openssl") is None, reason="the openssl command makes the test certificate")
def test_an_https_upstream_is_reached_over_verified_tls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(cert, key)
    with FakeUpstream(tls=tls) as fake:
        assert fake.base_url.startswith("https://")
        # Unknown to the system's CAs: refused, as a provider with a bad certificate must be.
        with Gateway(upstream=fake.base_url, db=tmp_path / "a.db", engine="raw") as gw, connect(gw) as sock:
            sock.sendall(request("/v1/messages", trace="tls-bad"))
            status, _, body = read_answer(sock)
            assert status == 502 and b"CERTIFICATE_VERIFY_FAILED" in body
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # now trusted
        with Gateway(upstream=fake.base_url, db=tmp_path / "b.db", engine="raw") as gw, connect(gw) as sock:
            for _ in range(2):  # the second on the pooled TLS connection
                sock.sendall(request("/v1/messages", STREAM, trace="tls"))
                status, _, body = read_answer(sock)
                assert status == 200 and body.count(b"event: ") == 7
            found = calls_of(gw, "tls")
        assert fake.served == 2  # the refused one never reached it
    assert [(c["outcome"], c["usage"]["output"]) for c in found] == [("complete", 7)] * 2
