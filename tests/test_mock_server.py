"""The mock server's behaviour over real sockets: turns, faults, recording, queries, lifecycle."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tackroom.mock import (
    DEFAULT_TEXT,
    REDACTED,
    MockServer,
    Script,
    ToolName,
    ToolVocabulary,
    Turn,
)

pytestmark = pytest.mark.timeout(30)

Serve = Callable[..., MockServer]
BASH = ToolVocabulary({"shell": ToolName("Bash")})
TOOLS = [{"name": "Bash", "description": "Run TOOL_DESCRIPTION_MARKER", "input_schema": {"type": "object"}}]
TWO_CALLS = Script(
    [
        Turn.call("shell", {"command": "one"}),
        Turn.call("shell", {"command": "two"}),
        Turn.reply("finished"),
    ]
)


def post(base_url: str, path: str, body: Any, **headers: str) -> tuple[int, bytes]:
    """POST JSON with urllib; HTTP errors come back as (status, body) too."""
    data = json.dumps(body).encode() if not isinstance(body, bytes) else body
    request = urllib.request.Request(base_url + path, data, {"Content-Type": "application/json", **headers})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, error.read()


def anthropic(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"model": "m", "tools": TOOLS, "messages": messages, **extra}


def history(assistant_turns: int) -> list[dict[str, Any]]:
    """A conversation holding that many assistant turns, each answered by a tool result."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for n in range(assistant_turns):
        call = {"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {}}
        messages += [
            {"role": "assistant", "content": [call]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{n}", "content": ""}]},
        ]
    return messages


def content_of(raw: bytes) -> dict[str, Any]:
    block: dict[str, Any] = json.loads(raw)["content"][0]
    return block


# --- Which turn answers which request ------------------------------------------------------------


def test_turn_index_is_the_number_of_assistant_turns(serve: Serve) -> None:
    mock = serve(TWO_CALLS, tools=BASH)
    answers = [content_of(post(mock.base_url, "/v1/messages", anthropic(history(n)))[1]) for n in range(4)]
    assert [a.get("input", a.get("text")) for a in answers] == [
        {"command": "one"},
        {"command": "two"},
        "finished",
        "MOCK-DONE after 2 tool call(s)",
    ]
    assert [r.turn for r in mock.requests] == [0, 1, 2, 3]


def test_same_request_twice_gets_byte_identical_answers(serve: Serve) -> None:
    mock = serve(TWO_CALLS, tools=BASH)
    body = anthropic(history(1), stream=True)
    first, second = post(mock.base_url, "/v1/messages", body), post(mock.base_url, "/v1/messages", body)
    assert first == second
    assert b'\\"command\\": \\"two\\"' in first[1]  # the input_json_delta of turn 1


def test_no_script_always_answers_the_default_text(serve: Serve) -> None:
    mock = serve()
    for n in range(3):
        assert (
            content_of(post(mock.base_url, "/v1/messages", anthropic(history(n)))[1])["text"] == DEFAULT_TEXT
        )


ACK = "Got it. Thanks for the context!"  # a made-up assistant turn (Qwen Code 0.15 opens with it)
CHAT_CALL = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}


@pytest.mark.parametrize(
    ("path", "body", "turns"),
    [
        (
            "/v1/messages",
            {
                "messages": [
                    {"role": "user", "content": "context"},
                    {"role": "assistant", "content": [{"type": "text", "text": ACK}]},
                    {"role": "user", "content": "go"},
                    {
                        "role": "assistant",
                        "content": [{"type": "tool_use", "id": "t", "name": "B", "input": {}}],
                    },
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": ""}]},
                ]
            },
            1,
        ),
        (
            "/v1/chat/completions",
            {
                "messages": [
                    {"role": "system", "content": "sys"},
                    {"role": "user", "content": "context"},
                    {"role": "assistant", "content": ACK},
                    {"role": "user", "content": "go"},
                    {"role": "assistant", "content": None, "tool_calls": [CHAT_CALL]},
                    {"role": "tool", "tool_call_id": "c1", "content": ""},
                    {"role": "assistant", "content": [{"type": "text", "text": "1"}]},  # scripted text
                    {"role": "user", "content": "again"},
                ]
            },
            2,
        ),
        (
            "/v1/responses",
            {
                "input": [
                    {"role": "assistant", "content": "made-up preamble"},
                    {"role": "user", "content": "go"},
                    {"type": "reasoning"},
                    {"type": "function_call"},
                    {"type": "function_call"},  # parallel calls: still one turn
                    {"type": "function_call_output"},
                    {"type": "function_call_output"},
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": "MOCK?"}],
                    },
                    {"type": "custom_tool_call"},  # text then a call: one turn
                    {"type": "custom_tool_call_output"},
                ]
            },
            2,
        ),
        (
            "/v1beta/models/m:generateContent",
            {
                "contents": [
                    {"role": "user", "parts": [{"text": "context"}]},
                    {"role": "model", "parts": [{"text": ACK}]},
                    {"role": "user", "parts": [{"text": "go"}]},
                    {"role": "model", "parts": [{"functionCall": {"name": "x", "args": {}}}]},
                    {"role": "user", "parts": [{"functionResponse": {"name": "x", "response": {}}}]},
                    {"role": "model", "parts": [{"text": "ponder", "thought": True}, {"text": "1"}]},
                    {"role": "user", "parts": [{"text": "again"}]},
                ]
            },
            2,
        ),
    ],
)
def test_turn_counting_per_wire(serve: Serve, path: str, body: dict[str, Any], turns: int) -> None:
    mock = serve(Script([Turn.reply(str(n)) for n in range(5)]))
    assert post(mock.base_url, path, body)[0] == 200
    assert mock.requests[0].turn == turns
    assert mock.requests[0].answer == {"kind": "text", "text": str(turns)}


# --- Faults ---------------------------------------------------------------------------------------


def test_error_turn_status_and_delay(serve: Serve) -> None:
    mock = serve(Script([Turn.error(503, "try later", delay_s=0.3)]))
    started = time.perf_counter()
    status, raw = post(mock.base_url, "/v1/chat/completions", {"messages": []})
    elapsed = time.perf_counter() - started
    assert status == 503
    assert json.loads(raw)["error"]["message"] == "try later"
    assert elapsed >= 0.3
    [latency] = mock.latencies()
    assert 0.3 <= latency <= elapsed


def _raw_post(base_url: str, path: str, body: dict[str, Any]) -> tuple[int, bytes, bool]:
    """POST and read the body; the flag says whether it ended before Content-Length."""
    conn = http.client.HTTPConnection(urlsplit(base_url).netloc, timeout=10)
    try:
        conn.request("POST", path, json.dumps(body).encode(), {"Content-Type": "application/json"})
        response = conn.getresponse()
        try:
            return response.status, response.read(), False
        except http.client.IncompleteRead as cut:
            return response.status, cut.partial, True
    finally:
        conn.close()


def test_disconnect_mid_stream_after_n_events(serve: Serve) -> None:
    mock = serve(Script([Turn.reply("never whole", disconnect_after=2)]))
    status, partial, cut = _raw_post(mock.base_url, "/v1/messages", {"stream": True, "messages": []})
    assert (status, cut) == (200, True)
    assert [line for line in partial.decode().splitlines() if line.startswith("event:")] == [
        "event: message_start",
        "event: content_block_start",
    ]


def test_disconnect_non_streaming_drops_after_headers(serve: Serve) -> None:
    mock = serve(Script([Turn.reply("never", disconnect_after=0)]))
    status, partial, cut = _raw_post(mock.base_url, "/v1/chat/completions", {"messages": []})
    assert (status, partial, cut) == (200, b"", True)


def test_disconnect_fault_repeats_on_retry_and_server_keeps_serving(serve: Serve) -> None:
    mock = serve(Script([Turn.reply("two halves", disconnect_after=1)]))
    body = {"stream": True, "contents": []}
    path = "/v1beta/models/m:streamGenerateContent?alt=sse"
    assert _raw_post(mock.base_url, path, body)[2] is True
    assert _raw_post(mock.base_url, path, body)[2] is True
    answered = {"contents": [{"role": "model", "parts": [{"text": "two halves"}]}]}  # turn 0 is in history
    assert _raw_post(mock.base_url, path, answered)[2] is False


# --- Recording and queries ------------------------------------------------------------------------


def test_recording_redacts_secret_headers(serve: Serve) -> None:
    mock = serve()
    secrets = {
        "Authorization": "Bearer sk-1",
        "x-api-key": "sk-2",
        "x-goog-api-key": "g-3",
        "api-key": "a-4",
        "Cookie": "c=5",
        "X-Session-Token": "t-6",
        "My-Client-Secret": "s-7",
    }
    post(
        mock.base_url,
        "/v1/messages?beta=true",
        {"messages": []},
        **secrets,
        **{"anthropic-version": "2023-06-01"},
    )
    [request] = mock.requests
    assert {k: request.headers[k.lower()] for k in secrets} == dict.fromkeys(secrets, REDACTED)
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert not any(value in json.dumps(request.to_json()) for value in secrets.values())
    assert (request.method, request.path, request.wire) == (
        "POST",
        "/v1/messages?beta=true",
        "anthropic-messages",
    )
    assert (request.body, request.turn, request.streamed) == ({"messages": []}, 0, False)
    assert request.answer == {"kind": "text", "text": DEFAULT_TEXT}
    assert request.latency_s is not None


def test_texts_offered_tools_and_saw(serve: Serve) -> None:
    mock = serve()
    post(mock.base_url, "/v1/messages", anthropic(
        [{"role": "user", "content": [{"type": "text", "text": "RULES_MARKER here"}]}],
        system=[{"type": "text", "text": "SYSTEM_MARKER"}],
    ))  # fmt: skip
    developer = {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "DEV"}]}
    namespace = {"type": "namespace", "name": "mcp__feas", "tools": [{"type": "function", "name": "echo"}]}
    post(
        mock.base_url,
        "/v1/responses",
        {"instructions": "INSTRUCTIONS_MARKER", "input": [developer], "tools": [namespace]},
    )
    post(mock.base_url, "/v1beta/models/m:generateContent", {
        "systemInstruction": {"parts": [{"text": "GEMINI_SYSTEM"}]},
        "contents": [{"role": "user", "parts": [{"text": "GEMINI_USER"}]}],
    })  # fmt: skip
    texts = mock.texts()
    assert texts == [
        "SYSTEM_MARKER",
        "RULES_MARKER here",
        "INSTRUCTIONS_MARKER",
        "DEV",
        "GEMINI_SYSTEM",
        "GEMINI_USER",
    ]
    assert mock.offered_tools() == {"Bash", "mcp__feas__echo"}
    assert mock.saw("RULES_MARKER")
    assert mock.saw("TOOL_DESCRIPTION_MARKER")  # tool descriptions count for saw(), not texts()
    assert not mock.saw("NEVER_SENT_MARKER")


def test_log_file_gets_one_json_line_per_request(serve: Serve, tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    mock = serve(log_path=log)
    post(mock.base_url, "/v1/chat/completions", {"messages": [{"role": "user", "content": "LOGGED"}]})
    post(mock.base_url, "/nowhere", {})
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["seq"], r["path"], r["wire"], r["answer"]["kind"]) for r in lines] == [
        (0, "/v1/chat/completions", "openai-chat", "text"),
        (1, "/nowhere", None, "error"),
    ]
    assert lines[0]["body"]["messages"][0]["content"] == "LOGGED"


def test_latency_is_recorded_per_request(serve: Serve) -> None:
    mock = serve()
    for _ in range(3):
        post(mock.base_url, "/v1/chat/completions", {"messages": []})
    latencies = mock.latencies()
    assert len(latencies) == 3
    assert all(0 < seconds < 5 for seconds in latencies)


# --- Routes and odd requests ----------------------------------------------------------------------


def test_model_lists(serve: Serve) -> None:
    mock = serve()
    with urllib.request.urlopen(mock.base_url + "/v1/models", timeout=10) as response:
        models = json.loads(response.read())
    assert models["object"] == "list"
    assert models["data"][0]["id"] == "mock-model"
    with urllib.request.urlopen(mock.base_url + "/v1beta/models", timeout=10) as response:
        gemini = json.loads(response.read())
    assert gemini["models"][0]["name"] == "models/mock-model"


def test_unknown_path_is_a_recorded_404(serve: Serve) -> None:
    mock = serve()
    status, raw = post(mock.base_url, "/v1/embeddings", {"input": "x"})
    assert status == 404
    assert json.loads(raw)["error"]["message"] == "MOCK: no route for POST /v1/embeddings"
    assert mock.requests[0].answer["status"] == 404


def test_body_that_is_not_json_is_a_400_in_the_wire_shape(serve: Serve) -> None:
    mock = serve()
    status, raw = post(mock.base_url, "/v1/messages", b"not json")
    assert status == 400
    assert json.loads(raw)["type"] == "error"
    assert mock.requests[0].body == "not json"


def test_chunked_request_body_is_read(serve: Serve) -> None:
    mock = serve()
    conn = http.client.HTTPConnection(urlsplit(mock.base_url).netloc, timeout=10)
    try:
        body = iter([b'{"messages": [{"role": "user", ', b'"content": "CHUNKED"}]}'])
        conn.request("POST", "/v1/chat/completions", body, encode_chunked=True)
        assert conn.getresponse().status == 200
    finally:
        conn.close()
    assert mock.saw("CHUNKED")


# --- Lifecycle ------------------------------------------------------------------------------------


def test_stop_closes_listener_and_kept_alive_connections() -> None:
    mock = MockServer().start()
    netloc = urlsplit(mock.base_url).netloc
    conn = http.client.HTTPConnection(netloc, timeout=5)
    conn.request("POST", "/v1/chat/completions", b'{"messages": []}', {"Content-Type": "application/json"})
    conn.getresponse().read()  # HTTP/1.1 keeps this connection open
    thread = mock._thread
    mock.stop()
    assert thread is not None and not thread.is_alive()
    assert conn.sock is not None and conn.sock.recv(1) == b""  # the server closed its end
    conn.close()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", int(netloc.rsplit(":", 1)[1])), timeout=2).close()
    mock.stop()  # idempotent


def test_stop_interrupts_a_scripted_delay() -> None:
    mock = MockServer(Script([Turn.reply("slow", delay_s=30)])).start()
    outcome: list[BaseException | tuple[int, bytes]] = []

    def client() -> None:
        try:
            outcome.append(post(mock.base_url, "/v1/chat/completions", {"messages": []}))
        except OSError as exc:
            outcome.append(exc)

    thread = threading.Thread(target=client)
    thread.start()
    while not mock.requests:
        time.sleep(0.01)
    started = time.perf_counter()
    mock.stop()
    thread.join(5)
    assert time.perf_counter() - started < 2
    assert len(outcome) == 1
    assert isinstance(outcome[0], OSError)  # the client sees the connection end, not an answer


def test_base_url_and_port() -> None:
    with MockServer(port=0) as mock:
        assert mock.base_url == f"http://127.0.0.1:{mock.port}"
    with pytest.raises(RuntimeError, match="not started"):
        _ = mock.port
