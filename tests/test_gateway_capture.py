"""The capture's parsing and each provider's usage semantics, on answers made here (no server)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tackroom.gateway.capture import CallUsage, Capture, anthropic_usage, gemini_usage, openai_usage
from tackroom.gateway.redaction import redact_body
from tackroom.gateway.routes import BadTarget, place
from tackroom.gateway.store import blob_hash, join_request, split_request
from tackroom.mock import Usage
from tackroom.mock.answer import TextAnswer
from tackroom.mock.wires import WIRES
from tackroom.mock.wires.base import Exchange

USAGE = Usage(input=1000, output=50, cache_read=200, cache_write=30, reasoning=10)


def stream_of(wire: str, body: dict[str, Any]) -> bytes:
    [found] = [w for w in WIRES if w.name == wire]
    return b"".join(
        found.events(TextAnswer("hello there"), USAGE, Exchange("/x:streamGenerateContent", body))
    )


@pytest.mark.parametrize(
    ("wire", "body"),
    [
        ("anthropic-messages", {"model": "m", "stream": True}),
        ("openai-chat", {"model": "m", "stream": True, "stream_options": {"include_usage": True}}),
        ("openai-responses", {"model": "m", "stream": True}),
        ("gemini", {}),
    ],
)
@pytest.mark.parametrize("size", [1, 7, 100_000])
def test_a_stream_cut_anywhere_reads_the_same(wire: str, body: dict[str, Any], size: int) -> None:
    data = stream_of(wire, body)
    capture = Capture(wire, keep_bytes=1 << 20)
    capture.start("text/event-stream; charset=utf-8")
    for start in range(0, len(data), size):
        capture.feed(data[start : start + size])
    captured = capture.finish(200, clean=True)
    assert (captured.complete, captured.reason) == (True, None)
    assert captured.usage.output is not None and captured.usage.cache_read == 200
    assert bytes(capture.kept) == data


def test_crlf_events_and_a_stream_without_its_last_event() -> None:
    data = stream_of("anthropic-messages", {"model": "m", "stream": True})
    capture = Capture("anthropic-messages", keep_bytes=1 << 20)
    capture.start("text/event-stream")
    capture.feed(data.replace(b"\n", b"\r\n").rsplit(b"event: message_stop", 1)[0])
    captured = capture.finish(200, clean=True)
    assert captured.reason == "the stream ended before its final event"
    assert captured.usage == CallUsage(1000, 200, 30, 50, None)


def test_a_whole_answer_over_the_kept_size_is_marked() -> None:
    capture = Capture("anthropic-messages", keep_bytes=10)
    capture.start("application/json")
    capture.feed(json.dumps({"model": "m", "usage": {"input_tokens": 1}}).encode())
    captured = capture.finish(200, clean=True)
    assert capture.truncated and not captured.complete and "usage was not read" in (captured.reason or "")


def test_openai_semantics() -> None:
    assert openai_usage({"prompt_tokens": 100, "completion_tokens": 5}) == CallUsage(
        None, None, None, 5, None
    )
    details = {"prompt_tokens": 100, "prompt_tokens_details": {"cached_tokens": 40}, "completion_tokens": 5}
    assert openai_usage(details) == CallUsage(60, 40, None, 5, None)
    contradicted = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 40}, "output_tokens": 5}
    assert openai_usage(contradicted) == CallUsage(None, None, None, 5, None)
    assert openai_usage({"input_tokens": -1, "output_tokens": True}) == CallUsage()


def test_anthropic_and_gemini_semantics() -> None:
    assert anthropic_usage({"input_tokens": 3, "output_tokens": 4}) == CallUsage(3, None, None, 4, None)
    # proto3 JSON omits zero counts: inside usageMetadata a missing count is 0.
    assert gemini_usage({"promptTokenCount": 9, "candidatesTokenCount": 2}) == CallUsage(9, 0, None, 2, 0)
    thinking = {
        "promptTokenCount": 9,
        "cachedContentTokenCount": 4,
        "candidatesTokenCount": 2,
        "thoughtsTokenCount": 5,
    }
    assert gemini_usage(thinking) == CallUsage(5, 4, None, 7, 5)


def test_routes() -> None:
    assert place("POST", "/t/abc/v1/messages?beta=true", None).wire == "anthropic-messages"
    assert place("POST", "/v1/chat/completions", "hdr").trace_id == "hdr"
    gemini = place("POST", "/t/x/v1beta/models/g:streamGenerateContent?alt=sse", None)
    assert (gemini.provider, gemini.path) == ("gemini", "/v1beta/models/g:streamGenerateContent?alt=sse")
    assert place("GET", "/t/x/v1/models", None).kind == "openai_models"
    assert place("POST", "/t/x/v2/unknown", None).kind is None
    with pytest.raises(BadTarget):
        place("POST", "/t/../v1/messages", None)
    with pytest.raises(BadTarget):
        place("POST", "/v1/messages", "bad header value")


def test_requests_split_and_join_back() -> None:
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}], "x": [1]}).encode()
    skeleton, items = split_request(body)
    assert len(items) == 1 and b"hi" not in skeleton
    store = {blob_hash(i): i for i in items}
    assert json.loads(join_request(skeleton, store.__getitem__)) == json.loads(body)
    assert split_request(b"not json") == (b"not json", [])


def test_bodies_are_redacted() -> None:
    body = json.dumps(
        {"api_key": "abc", "max_tokens": 5, "nested": [{"token": "t0k"}], "text": "sk-LITERAL-1"}
    )
    cleaned = json.loads(redact_body(body.encode(), frozenset({"sk-LITERAL-1"})))
    assert cleaned == {
        "api_key": "<redacted>",
        "max_tokens": 5,
        "nested": [{"token": "<redacted>"}],
        "text": "<redacted>",
    }


def _call(wire: str, **usage: int | None) -> dict[str, Any]:
    figures = dict.fromkeys(("input_uncached", "cache_read", "cache_write", "output", "reasoning"))
    return {"wire_api": wire, "usage": {**figures, **usage}}


def test_reconciliation_explains_each_difference() -> None:
    from tackroom.gateway.reconcile import reconcile
    from tackroom.trace.events import Usage as Reported

    calls = [
        _call("openai-responses", input_uncached=100, cache_read=10, cache_write=5, output=7, reasoning=0),
        _call("openai-responses", input_uncached=50, cache_read=10, cache_write=4, output=3, reasoning=0),
    ]
    found = reconcile(Reported(input=159, output=3, cache_read=20, cache_write=None), calls)
    assert found["cache_read"] == {"harness": 20, "gateway": 20, "difference": 0, "explanation": None}
    assert "cache writes inside its input" in found["input"]["explanation"]
    assert (
        found["output"]["difference"] == -7 and "only its last model call" in found["output"]["explanation"]
    )
    assert found["cache_write"]["harness"] is None and "no cache_write" in found["cache_write"]["explanation"]
    assert "no reasoning figure" in found["reasoning"]["explanation"]
    fewer = reconcile(
        Reported(input=100, output=9), [*calls, _call("openai-chat", input_uncached=1, output=1)]
    )
    assert "fewer" in fewer["output"]["explanation"]


def test_a_garbled_delta_is_caught_without_parsing_every_delta() -> None:
    data = stream_of("anthropic-messages", {"model": "m", "stream": True})
    head, tail = data.split(b"event: content_block_delta", 1)
    garbled = (
        head + b'event: content_block_delta\ndata: {"type": "content_blo\n\nevent: content_block_delta' + tail
    )
    capture = Capture("anthropic-messages", keep_bytes=1 << 20)
    capture.start("text/event-stream")
    capture.feed(garbled)
    captured = capture.finish(200, clean=True)
    assert captured.reason is not None and captured.reason.startswith("malformed SSE event")
    assert captured.usage.output == 50  # the rest was still read
