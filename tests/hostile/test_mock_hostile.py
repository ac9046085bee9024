"""The mock model server against hostile clients, over real sockets.

Bad framing, gzip bombs, lone surrogates, deep JSON, 200 clients at once and
random requests: every request that has a request line gets an HTTP answer (a
4xx when it cannot be served), its record and its log line, with bounded memory.
Mock scripts are fuzzed too: a mutated script is a MockScriptError, never
another exception.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import math
import socket
import tempfile
import threading
import tracemalloc
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
import tomli_w
from hypothesis import given
from hypothesis import strategies as st

from hostile.fuzz import FUZZ
from tackroom.errors import MockError, MockScriptError
from tackroom.mock import MockServer, Script, Turn, load_script
from tackroom.mock.framing import MAX_BODY_BYTES

pytestmark = pytest.mark.timeout(120)

CHAT = "/v1/chat/completions"
BODY = b'{"messages": [{"role": "user", "content": "hi"}]}'


def exchange(mock: MockServer, data: bytes, timeout: float = 10.0) -> bytes:
    """Send raw bytes, close our sending side, and read the whole answer."""
    with socket.create_connection(("127.0.0.1", mock.port), timeout=timeout) as sock:
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def status(answer: bytes) -> int:
    assert answer.startswith(b"HTTP/1.1 "), answer[:200]
    return int(answer.split(b" ", 2)[1])


def post(headers: str, body: bytes = b"", path: str = CHAT) -> bytes:
    return f"POST {path} HTTP/1.1\r\nHost: mock\r\n{headers}\r\n".encode() + body


@pytest.fixture
def logged(tmp_path: Path) -> Iterator[tuple[MockServer, Path]]:
    log = tmp_path / "mock.jsonl"
    with MockServer(log_path=log) as mock:
        yield mock, log


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data)


FRAMING = [
    ("content-length not a number", post("Content-Length: abc\r\n"), 400),
    ("negative content-length", post("Content-Length: -5\r\n", BODY), 400),
    ("content-length in exponent form", post("Content-Length: 1e3\r\n"), 400),
    ("content-length of unicode digits", post("Content-Length: \u00b2\r\n"), 400),
    ("two different content-lengths", post("Content-Length: 10\r\nContent-Length: 20\r\n", BODY), 400),
    ("huge content-length", post("Content-Length: 99999999999999999\r\n"), 413),
    ("a 5,000-digit content-length", post(f"Content-Length: {'9' * 5000}\r\n"), 413),
    ("body shorter than announced", post("Content-Length: 100\r\n", b'{"messages": '), 400),
    ("post without any length", post("", BODY), 411),
    ("bad chunk size", post("Transfer-Encoding: chunked\r\n", b"zz\r\nabc\r\n0\r\n\r\n"), 400),
    ("negative chunk size", post("Transfer-Encoding: chunked\r\n", b"-5\r\n" + BODY), 400),
    ("huge chunk size", post("Transfer-Encoding: chunked\r\n", b"FFFFFFFFFF\r\nab"), 413),
    ("chunk cut short", post("Transfer-Encoding: chunked\r\n", b"64\r\n" + BODY), 400),
    ("chunk longer than its size", post("Transfer-Encoding: chunked\r\n", b"2\r\nabcdef\r\n0\r\n\r\n"), 400),
    ("chunk size line too long", post("Transfer-Encoding: chunked\r\n", b"1" * 3000 + b"\r\n"), 400),
    ("no last chunk", post("Transfer-Encoding: chunked\r\n", b"2\r\n{}\r\n"), 400),
    ("unknown transfer coding", post("Transfer-Encoding: gzip\r\n", BODY), 400),
    ("unknown content coding", post(f"Content-Encoding: br\r\nContent-Length: {len(BODY)}\r\n", BODY), 415),
    ("gzip that is not gzip", post(f"Content-Encoding: gzip\r\nContent-Length: {len(BODY)}\r\n", BODY), 400),
    (
        "truncated gzip",
        post(f"Content-Encoding: gzip\r\nContent-Length: {len(_gzip(BODY)) - 4}\r\n", _gzip(BODY)[:-4]),
        400,
    ),
    (
        "json nested 10,000 deep",
        post(f"Content-Length: {20001}\r\n", b"[" * 10000 + b"1" + b"]" * 10000),
        400,
    ),
    (
        "json nested 500 deep (python parses it, the mock refuses it)",
        post(f"Content-Length: {1001 + 12}\r\n", b'{"messages":' + b"[" * 500 + b"]" * 500 + b"}"),
        400,
    ),
]


@pytest.mark.parametrize(("data", "code"), [(d, c) for _, d, c in FRAMING], ids=[n for n, _, _ in FRAMING])
def test_bad_framing_gets_a_4xx_a_record_and_a_log_line(
    logged: tuple[MockServer, Path], data: bytes, code: int
) -> None:
    mock, log = logged
    answer = exchange(mock, data)
    assert status(answer) == code
    payload = json.loads(answer.split(b"\r\n\r\n", 1)[1])
    assert payload["error"]["message"].startswith("MOCK: ")
    [record] = mock.requests
    assert record.answer["kind"] == "rejected" and record.answer["status"] == code
    [line] = log.read_text(encoding="utf-8").splitlines()
    assert json.loads(line)["answer"]["status"] == code


def test_the_connection_stays_usable_after_a_good_chunked_request() -> None:
    with MockServer() as mock:
        chunked = post("Transfer-Encoding: chunked\r\n", b"%x\r\n%s\r\n0\r\n\r\n" % (len(BODY), BODY))
        answer = exchange(mock, chunked + chunked)
    assert answer.count(b"HTTP/1.1 200 ") == 2
    assert len(mock.requests) == 2


def test_a_gzip_bomb_is_refused_with_bounded_memory() -> None:
    inflated = 256 * 1024 * 1024
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = bytes(1024 * 1024)
    bomb = b"".join(packer.compress(zeros) for _ in range(inflated // len(zeros))) + packer.flush()
    assert len(bomb) < 1024 * 1024  # about 256 KB on the wire
    with MockServer() as mock:
        tracemalloc.start()
        try:
            answer = exchange(mock, post(f"Content-Encoding: gzip\r\nContent-Length: {len(bomb)}\r\n", bomb))
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert status(answer) == 413
    assert b"inflates past" in answer
    assert peak < 3 * MAX_BODY_BYTES < inflated  # the whole bomb was never held


def test_gzip_and_deflate_bodies_within_the_limit_are_read() -> None:
    with MockServer() as mock:
        for coding, packed in (("gzip", gzip.compress(BODY)), ("deflate", zlib.compress(BODY))):
            headers = f"Content-Encoding: {coding}\r\nContent-Length: {len(packed)}\r\n"
            assert status(exchange(mock, post(headers, packed))) == 200
    assert [r.body for r in mock.requests] == [json.loads(BODY)] * 2


def test_a_lone_surrogate_is_answered_recorded_and_logged(logged: tuple[MockServer, Path]) -> None:
    mock, log = logged
    body = rb'{"messages": [{"role": "user", "content": "bad \ud83d pair \udfff"}], "stream": true}'
    answer = exchange(mock, post(f"Content-Length: {len(body)}\r\n", body))
    assert status(answer) == 200
    [record] = mock.requests
    assert record.body["messages"][0]["content"] == "bad \ufffd pair \ufffd"
    [line] = log.read_text(encoding="utf-8").splitlines()
    assert json.loads(line)["body"]["messages"][0]["content"] == "bad \ufffd pair \ufffd"


def test_a_client_that_stops_mid_body_gets_a_408() -> None:
    with (
        MockServer(read_timeout_s=0.5) as mock,
        socket.create_connection(("127.0.0.1", mock.port), timeout=10) as sock,
    ):
        sock.sendall(post("Content-Length: 100\r\n", b'{"mess'))  # and then nothing, connection open
        answer = sock.recv(65536)
    assert status(answer) == 408
    assert mock.requests[0].answer["status"] == 408


@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH", "OPTIONS", "BREW"])
def test_any_method_is_answered_and_recorded(method: str) -> None:
    with MockServer() as mock:
        answer = exchange(
            mock, f"{method} /v1/x HTTP/1.1\r\nHost: m\r\nContent-Length: 2\r\n\r\n{{}}".encode()
        )
    assert status(answer) in (404, 501)
    assert [r.method for r in mock.requests] == [method]


def test_head_gets_headers_only() -> None:
    with MockServer() as mock:
        answer = exchange(mock, b"HEAD /health HTTP/1.1\r\nHost: m\r\n\r\n")
    head, _, rest = answer.partition(b"\r\n\r\n")
    assert status(head) == 200 and b"Content-Length: " in head and rest == b""


def test_200_clients_at_once_all_get_answers() -> None:
    clients = 200
    barrier = threading.Barrier(clients)
    outcomes: list[int | str] = []
    lock = threading.Lock()

    def client(mock: MockServer) -> None:
        barrier.wait()
        try:
            outcome: int | str = status(exchange(mock, post(f"Content-Length: {len(BODY)}\r\n", BODY)))
        except OSError as exc:
            outcome = type(exc).__name__
        with lock:
            outcomes.append(outcome)

    with MockServer() as mock:
        threads = [threading.Thread(target=client, args=(mock,)) for _ in range(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    assert outcomes == [200] * clients
    assert len(mock.requests) == clients


def test_bad_addresses_ports_and_logs_are_mock_errors(tmp_path: Path) -> None:
    for options, message in (
        ({"port": 70000}, "port must be 0-65535"),
        ({"port": -1}, "port must be 0-65535"),
        ({"host": ""}, "host must name an address"),
        ({"read_timeout_s": math.nan}, "read_timeout_s must be a positive number"),
    ):
        with pytest.raises(MockError, match=message):
            MockServer(**options)  # type: ignore[arg-type]
    with pytest.raises(MockError, match="cannot open the mock log"):
        MockServer(log_path=tmp_path / "missing" / "log.jsonl").start()
    with pytest.raises(MockError, match=r"cannot listen on 999\.1\.1\.1"):
        MockServer(host="999.1.1.1").start()
    with MockServer() as taken, pytest.raises(MockError, match="cannot listen on"):
        MockServer(port=taken.port).start()


@pytest.mark.parametrize("delay", [math.nan, math.inf, -1.0, 3601.0, 1e308])
def test_delays_that_would_never_answer_are_refused(delay: float, tmp_path: Path) -> None:
    with pytest.raises(MockScriptError, match="delay_s: must be 0-3600 seconds"):
        Turn.reply("x", delay_s=delay)
    script = tmp_path / "script.toml"
    script.write_text(tomli_w.dumps({"turns": [{"text": "x", "delay_s": delay}]}), encoding="utf-8")
    with pytest.raises(MockScriptError, match="delay_s"):
        load_script(script)


# --- fuzzing ----------------------------------------------------------------------------------

_TOKEN = st.text(
    alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.", min_size=1, max_size=12
)
_PATHS = st.one_of(
    st.sampled_from(
        [
            "/v1/messages",
            "/v1/messages/count_tokens",
            CHAT,
            "/v1/responses",
            "/v1beta/models/m:generateContent",
            "/v1beta/models/m:streamGenerateContent?alt=sse",
            "/v1/models",
            "/health",
        ]
    ),
    st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=40).map(
        lambda p: "/" + p
    ),
)
_HEADER_VALUE = st.text(
    alphabet=st.characters(min_codepoint=32, max_codepoint=255, exclude_characters="\r\n"), max_size=30
)
_HEADERS = st.lists(
    st.tuples(
        st.sampled_from(
            ["Content-Length", "Transfer-Encoding", "Content-Encoding", "Content-Type", "Expect", "X-Api-Key"]
        )
        | _TOKEN,
        _HEADER_VALUE | st.sampled_from(["chunked", "gzip", "deflate", "0", "5", "-1", "100-continue"]),
    ),
    max_size=5,
)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["messages", "role", "content", "tools", "stream", "input", "contents", "type"]),
            inner,
            max_size=4,
        )
    ),
    max_leaves=20,
)
_BODIES = st.one_of(st.binary(max_size=200), _JSON.map(lambda v: json.dumps(v).encode()))


@pytest.fixture(scope="module")
def fuzzed_mock() -> Iterator[MockServer]:
    with MockServer(
        Script([Turn.call("shell", {"command": "ls"}), Turn.reply("done")]), read_timeout_s=2
    ) as mock:
        yield mock


@FUZZ
@given(
    method=st.sampled_from(["GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH"]) | _TOKEN,
    path=_PATHS,
    headers=_HEADERS,
    body=_BODIES,
    length=st.booleans(),
)
def test_random_requests_always_get_an_answer(
    fuzzed_mock: MockServer, method: str, path: str, headers: list[tuple[str, str]], body: bytes, length: bool
) -> None:
    lines = [f"{method} {path} HTTP/1.1", "Host: mock", *(f"{k}: {v}" for k, v in headers)]
    if length:
        lines.append(f"Content-Length: {len(body)}")
    data = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
    answer = exchange(fuzzed_mock, data)
    assert 100 <= status(answer) < 600
    assert b"MOCK crashed" not in answer


_SCRIPT_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(max_size=10)
    | st.sampled_from(["shell", "mcp:s/t", "raw:X", "raw:", "text", "write_file"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                ["text", "tool", "args", "error", "message", "usage", "delay_s", "disconnect_after"]
            )
            | st.sampled_from(["input", "output", "cache_read", "cache_write", "reasoning", "turns"])
            | st.text(max_size=5),
            inner,
            max_size=5,
        )
    ),
    max_leaves=25,
)
_SCRIPTS = st.one_of(
    st.fixed_dictionaries({"turns": st.lists(_SCRIPT_VALUES, max_size=4)}),
    _SCRIPT_VALUES,
)


@FUZZ
@given(data=_SCRIPTS, as_toml=st.booleans())
def test_mutated_scripts_are_mock_script_errors(data: object, as_toml: bool) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "script.json"
        text = json.dumps(data)
        if as_toml and isinstance(data, dict):
            with contextlib.suppress(TypeError, ValueError):  # None has no TOML form: stay JSON
                path, text = path.with_suffix(".toml"), tomli_w.dumps(data)
        path.write_text(text, encoding="utf-8")
        try:
            script = load_script(path)
        except MockScriptError as exc:
            assert str(path) in str(exc)
            return
    assert isinstance(script, Script)


@FUZZ
@given(cut=st.integers(min_value=0), junk=st.binary(min_size=1, max_size=8))
def test_corrupted_script_files_are_mock_script_errors(cut: int, junk: bytes) -> None:
    source = (Path(__file__).parent.parent / "mock_scripts" / "shell_then_text.toml").read_bytes()
    at = cut % (len(source) + 1)
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "script.toml"
        path.write_bytes(source[:at] + junk + source[at:])
        try:
            load_script(path)
        except MockScriptError as exc:
            assert str(path) in str(exc)
