"""The gateway with real clients: the official SDKs and plain HTTP, through it to tackroom's mock."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from tests.gatewaykit import (
    _close_clients,  # noqa: F401  (the fixture closes SDK clients)
    claude,
    gpt,
)

from tackroom.gateway import Gateway, SQLiteCaptureStore
from tackroom.mock import MockServer, Script, Turn, Usage
from tackroom.prices import PriceBook

ANTHROPIC_KEY = "sk-ant-test-GATEWAYSECRET-0001"
OPENAI_KEY = "sk-test-GATEWAYSECRET-0002"
GEMINI_KEY = "AIzaGATEWAYSECRET0003"
USAGE = Usage(input=1000, output=50, cache_read=200, cache_write=30, reasoning=10)
HI = [{"role": "user", "content": "hi"}]


@pytest.fixture
def mock() -> Iterator[MockServer]:
    with MockServer(Script([Turn.reply("hello from the mock", usage=USAGE)] * 5)) as server:
        yield server


@pytest.fixture(params=["raw", "aiohttp"])
def gw(mock: MockServer, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Gateway]:
    with Gateway(upstream=mock.base_url, db=tmp_path / "state.db", engine=request.param) as gateway:
        yield gateway


def calls(gw: Gateway, **where: Any) -> list[dict[str, Any]]:
    gw.flush()
    return gw.store.calls(**where)


def post(url: str, body: bytes, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(
        url, data=body, headers={"Content-Type": "application/json", **(headers or {})}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, exc.read()


def cost(model: str, uncached: int, output: int, read: int, write: int) -> Decimal:
    prices = PriceBook().lookup(model)
    assert prices is not None
    return prices.rates[0].cost(uncached, output, read, write)


# --- the official SDKs ---------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
def test_anthropic_sdk_through_the_gateway(gw: Gateway, stream: bool) -> None:
    client = claude(base_url=gw.trace_url("tr-a"), api_key=ANTHROPIC_KEY, max_retries=0)
    if stream:
        with client.messages.stream(model="claude-sonnet-4-5", max_tokens=20, messages=HI) as answer:
            message = answer.get_final_message()
    else:
        message = client.messages.create(model="claude-sonnet-4-5", max_tokens=20, messages=HI)
    assert message.content[0].text == "hello from the mock"  # type: ignore[union-attr]
    [call] = calls(gw, trace="tr-a")
    assert (call["wire_api"], call["provider"], call["path"]) == (
        "anthropic-messages",
        "anthropic",
        "/v1/messages",
    )
    assert (call["status"], call["outcome"], call["reason"], call["streamed"]) == (
        200,
        "complete",
        None,
        stream,
    )
    assert call["model_requested"] == call["model_served"] == "claude-sonnet-4-5"
    # Anthropic's cache figures are additive to input_tokens; it sends no reasoning figure.
    assert call["usage"] == {
        "input_uncached": 1000,
        "cache_read": 200,
        "cache_write": 30,
        "output": 50,
        "reasoning": None,
    }
    assert Decimal(call["cost_usd"]) == cost("claude-sonnet-4-5", 1000, 50, 200, 30)
    assert call["first_byte_ms"] is not None and 0 < call["first_byte_ms"] <= call["duration_ms"]


@pytest.mark.parametrize("stream", [False, True])
def test_openai_chat_sdk_through_the_gateway(gw: Gateway, stream: bool) -> None:
    client = gpt(base_url=gw.trace_url("tr-c") + "/v1", api_key=OPENAI_KEY, max_retries=0)
    if stream:
        chunks = client.chat.completions.create(
            model="gpt-4o", messages=HI, stream=True, stream_options={"include_usage": True}
        )
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    else:
        text = client.chat.completions.create(model="gpt-4o", messages=HI).choices[0].message.content or ""
    assert text == "hello from the mock"
    [call] = calls(gw, trace="tr-c")
    assert (call["wire_api"], call["streamed"], call["outcome"]) == ("openai-chat", stream, "complete")
    # OpenAI's prompt_tokens (1000) include the cached ones; the mock sends no cache-write figure here.
    assert call["usage"] == {
        "input_uncached": 800,
        "cache_read": 200,
        "cache_write": None,
        "output": 50,
        "reasoning": 10,
    }
    assert Decimal(call["cost_usd"]) == cost("gpt-4o", 800, 50, 200, 0)


@pytest.mark.parametrize("stream", [False, True])
def test_openai_responses_sdk_through_the_gateway(gw: Gateway, stream: bool) -> None:
    client = gpt(base_url=gw.trace_url("tr-r") + "/v1", api_key=OPENAI_KEY, max_retries=0)
    if stream:
        with client.responses.stream(model="gpt-5", input="hi") as answer:
            text = answer.get_final_response().output_text
    else:
        text = client.responses.create(model="gpt-5", input="hi").output_text
    assert text == "hello from the mock"
    [call] = calls(gw, trace="tr-r")
    assert (call["wire_api"], call["streamed"], call["outcome"]) == ("openai-responses", stream, "complete")
    # input_tokens (1000) include the cached (200) and the cache-written (30) tokens.
    assert call["usage"] == {
        "input_uncached": 770,
        "cache_read": 200,
        "cache_write": 30,
        "output": 50,
        "reasoning": 10,
    }


@pytest.mark.parametrize("method", ["generateContent", "streamGenerateContent?alt=sse"])
def test_gemini_with_plain_http(gw: Gateway, method: str) -> None:
    body = json.dumps({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}).encode()
    url = f"{gw.trace_url('tr-g')}/v1beta/models/gemini-2.5-pro:{method}"
    status, answer = post(url, body, {"x-goog-api-key": GEMINI_KEY})
    assert status == 200 and b"hello" in answer
    [call] = calls(gw, trace="tr-g")
    assert (call["wire_api"], call["provider"], call["streamed"]) == ("gemini", "gemini", "alt=sse" in method)
    assert call["model_requested"] == call["model_served"] == "gemini-2.5-pro"
    # promptTokenCount (1000) includes the cached 200; thoughts (10) are outside candidates (50).
    assert call["usage"] == {
        "input_uncached": 800,
        "cache_read": 200,
        "cache_write": None,
        "output": 60,
        "reasoning": 10,
    }
    assert Decimal(call["cost_usd"]) == cost("gemini-2.5-pro", 800, 60, 200, 0)


def test_model_lists_are_forwarded_and_recorded(gw: Gateway) -> None:
    client = gpt(base_url=gw.trace_url("tr-m") + "/v1", api_key=OPENAI_KEY, max_retries=0)
    assert [m.id for m in client.models.list()]
    with urllib.request.urlopen(f"{gw.trace_url('tr-m')}/v1beta/models", timeout=10) as answer:
        assert answer.status == 200 and b"models" in answer.read()
    found = calls(gw, trace="tr-m")
    assert [(c["method"], c["path"], c["provider"], c["outcome"]) for c in found] == [
        ("GET", "/v1/models", "openai", "complete"),
        ("GET", "/v1beta/models", "gemini", "complete"),
    ]
    assert all(c["usage"]["output"] is None and c["cost_usd"] is None for c in found)


def test_unknown_model_has_unknown_cost(gw: Gateway) -> None:
    client = claude(base_url=gw.trace_url("tr-u"), api_key=ANTHROPIC_KEY, max_retries=0)
    client.messages.create(model="no-such-model-anywhere", max_tokens=5, messages=HI)
    [call] = calls(gw, trace="tr-u")
    assert call["usage"]["output"] == 50 and call["cost_usd"] is None


# --- streams pass through byte for byte ----------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/messages", {"model": "m", "max_tokens": 5, "stream": True, "messages": HI}),
        ("/v1/chat/completions", {"model": "m", "stream": True, "messages": HI}),
        ("/v1/responses", {"model": "m", "stream": True, "input": "hi"}),
        ("/v1beta/models/m:streamGenerateContent?alt=sse", {"contents": [{"parts": [{"text": "hi"}]}]}),
        ("/v1/messages", {"model": "m", "max_tokens": 5, "messages": HI}),
    ],
)
def test_answers_are_byte_identical_to_direct(gw: Gateway, mock: MockServer, path: str, body: Any) -> None:
    data = json.dumps(body).encode()
    direct = post(mock.base_url + path, data)
    through = post(gw.trace_url("tr-b") + path, data)
    assert through == direct and direct[0] == 200
    [call] = calls(gw, trace="tr-b")
    assert call["response_bytes"] == len(direct[1])
    assert gw.store.body(call["response_body"]) == direct[1]


# --- attribution, storage, secrets ----------------------------------------------------------------


def test_trace_header_fallback_and_run_header(gw: Gateway) -> None:
    body = json.dumps({"model": "m", "max_tokens": 5, "messages": HI}).encode()
    post(gw.url + "/v1/messages", body, {"x-tackroom-trace": "hdr-trace", "x-tackroom-run": "run-7"})
    post(gw.url + "/v1/messages", body)
    assert [c["run_id"] for c in calls(gw, trace="hdr-trace")] == ["run-7"]
    assert [c["trace_id"] for c in calls(gw, run="run-7")] == ["hdr-trace"]
    assert [c["trace_id"] for c in calls(gw)] == ["hdr-trace", None]


def test_bad_trace_id_is_refused_and_recorded(gw: Gateway) -> None:
    status, answer = post(gw.url + "/t/bad%20id!/v1/messages", b"{}")
    assert status == 400 and json.loads(answer)["error"]["type"] == "invalid_request_error"
    [call] = calls(gw)
    assert call["status"] == 400 and call["outcome"] == "incomplete" and "trace id" in call["reason"]


def test_repeated_history_is_stored_once(gw: Gateway) -> None:
    store = gw.store
    assert isinstance(store, SQLiteCaptureStore)
    history: list[dict[str, Any]] = [{"role": "user", "content": "x" * 5000}]
    client = claude(base_url=gw.trace_url("tr-d"), api_key=ANTHROPIC_KEY, max_retries=0)
    client.messages.create(model="m", max_tokens=5, messages=history)
    gw.flush()
    before = store.blob_count()
    for turn in range(4):
        history += [
            {"role": "assistant", "content": f"answer {turn}"},
            {"role": "user", "content": f"more {turn}"},
        ]
        client.messages.create(model="m", max_tokens=5, messages=history)
    found = calls(gw, trace="tr-d")
    # Each later call adds its skeleton, its answer and its two new messages: never the 5 kB again.
    assert store.blob_count() - before == 4 * 4
    last = json.loads(store.body(found[-1]["request_body"]) or b"")
    assert last["messages"] == history


def test_secrets_never_reach_the_database(mock: MockServer, tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    injected = "sk-ant-INJECTED-by-the-gateway-0004"
    with Gateway(upstream=mock.base_url, db=db) as gw:
        client = claude(base_url=gw.trace_url("tr-s"), api_key=ANTHROPIC_KEY, max_retries=0)
        client.messages.create(
            model="m", max_tokens=5, messages=[{"role": "user", "content": f"my key is {ANTHROPIC_KEY}"}]
        )
        oai = gpt(base_url=gw.trace_url("tr-s") + "/v1", api_key=OPENAI_KEY, max_retries=0)
        oai.chat.completions.create(model="m", messages=HI, extra_body={"api_key": "sk-body-SECRET-0005"})
        post(f"{gw.trace_url('tr-s')}/v1beta/models/m:generateContent?key={GEMINI_KEY}", b'{"contents": []}')
        gw.flush()
    with Gateway(upstream=mock.base_url, db=db, keys={"anthropic": injected}) as gw:
        client = claude(base_url=gw.trace_url("tr-s"), api_key="placeholder", max_retries=0)
        client.messages.create(model="m", max_tokens=5, messages=HI)
    # The mock saw the injected key in place of the client's placeholder.
    assert mock.requests[-1].headers.get("x-api-key") not in (None, "placeholder")
    assert len(SQLiteCaptureStore(db).calls(trace="tr-s")) == 4
    for secret in (ANTHROPIC_KEY, OPENAI_KEY, GEMINI_KEY, injected, "sk-body-SECRET-0005", "GATEWAYSECRET"):
        for path in tmp_path.glob("state.db*"):
            assert secret.encode() not in path.read_bytes(), (secret, path.name)


# --- bad input ------------------------------------------------------------------------------------


def test_bad_input_gets_a_clear_error_and_is_recorded(mock: MockServer, tmp_path: Path) -> None:
    with Gateway(upstream=mock.base_url, db=tmp_path / "state.db", max_body_bytes=10_000) as gw:
        base = gw.trace_url("tr-x")
        status, answer = post(base + "/v1/messages", b'{"model": ')
        assert status == 400 and "not JSON" in json.loads(answer)["error"]["message"]
        status, answer = post(base + "/v1/chat/completions", b"[1, 2]")
        assert status == 400 and "not a JSON object" in json.loads(answer)["error"]["message"]
        status, answer = post(base + "/v1/nowhere", b"{}")
        assert status == 404 and "no provider API" in json.loads(answer)["error"]["message"]
        status, answer = post(base + "/v1/messages", b'{"x": "' + b"a" * 20_000 + b'"}')
        assert status == 413 and "over 10000 bytes" in json.loads(answer)["error"]["message"]
        # Still up, and still right.
        client = claude(base_url=base, api_key=ANTHROPIC_KEY, max_retries=0)
        assert client.messages.create(model="m", max_tokens=5, messages=HI).usage.output_tokens == 50
        found = calls(gw, trace="tr-x")
    assert [(c["status"], c["outcome"]) for c in found] == [
        (400, "incomplete"),
        (400, "incomplete"),
        (404, "incomplete"),
        (413, "incomplete"),
        (200, "complete"),
    ]
