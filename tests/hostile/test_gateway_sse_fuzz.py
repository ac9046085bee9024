"""The capture's one-pass read of a kept stream against its event-by-event read, on hostile streams.

A stream that fits the kept size is read once it is over, by a few byte searches that pick the
events worth parsing (:meth:`Capture._scan`); a longer one is read event by event as it passes
(:meth:`Capture._feed_sse`). Both must say the same of any stream: model, usage, ending, problem.
"""

from __future__ import annotations

import json

from hypothesis import example, given
from hypothesis import strategies as st

from hostile.fuzz import FUZZ
from tackroom.gateway.capture import Capture
from tackroom.mock import Usage
from tackroom.mock.answer import TextAnswer
from tackroom.mock.wires import WIRES
from tackroom.mock.wires.base import Exchange

WIRE_NAMES = ("anthropic-messages", "openai-chat", "openai-responses", "gemini")
BODIES = {
    "anthropic-messages": {"model": "m", "stream": True},
    "openai-chat": {"model": "m", "stream": True, "stream_options": {"include_usage": True}},
    "openai-responses": {"model": "m", "stream": True},
    "gemini": {},
}


def real_events(wire: str) -> list[bytes]:
    """The events of a real stream as tackroom's mock writes it for ``wire``."""
    [found] = [w for w in WIRES if w.name == wire]
    usage = Usage(input=1000, output=50, cache_read=200, cache_write=30, reasoning=10)
    data = b"".join(
        found.events(TextAnswer("hello there"), usage, Exchange("/x:streamGenerateContent", BODIES[wire]))
    )
    return [event for event in data.split(b"\n\n") if event]


REAL = {wire: real_events(wire) for wire in WIRE_NAMES}
SHARDS = [
    b"data:",
    b"data: ",
    b"event: x",
    b"{",
    b"}",
    b"\n",
    b"\r",
    b" ",
    b"[DONE]",
    b"usage",
    b'"model',
    b"modelVersion",
    b"error",
    b"message_stop",
    b"response.completed",
    b"finishReason",
    b":",
    b'"',
    b"x",
]
JSON_VALUES = st.recursive(
    st.none() | st.integers(-5, 10**6) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)
KEYS = st.sampled_from(
    ["type", "model", "usage", "error", "modelVersion", "usageMetadata", "candidates", "response", "message"]
)
TYPES = st.sampled_from(
    ["message_start", "message_delta", "message_stop", "error", "response.completed", "response.failed", "x"]
)


@st.composite
def events(draw: st.DrawFn, wire: str) -> bytes:
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return draw(st.sampled_from(REAL[wire]))
    if kind == 1:
        value = draw(st.dictionaries(KEYS, JSON_VALUES, max_size=4))
        if draw(st.booleans()):
            value["type"] = draw(TYPES)
        text = json.dumps(value).encode()
        return b"data: " + text if draw(st.booleans()) else b"event: e\ndata:" + text
    if kind == 2:
        return b"".join(draw(st.lists(st.sampled_from(SHARDS), max_size=12)))
    return draw(st.binary(max_size=40))


@st.composite
def streams(draw: st.DrawFn) -> tuple[str, bytes]:
    wire = draw(st.sampled_from(WIRE_NAMES))
    parts = draw(st.lists(events(wire), max_size=12))
    separators = st.sampled_from([b"\n\n", b"\r\n\r\n", b"\n\n\n", b"\n\n\n\n"])
    data = b"".join(part + draw(separators) for part in parts)
    if data and draw(st.booleans()):
        data = data[: draw(st.integers(0, len(data)))]
    return wire, data


def read(wire: str, data: bytes, keep_bytes: int, size: int) -> tuple[object, ...]:
    capture = Capture(wire, keep_bytes=keep_bytes)
    capture.start("text/event-stream")
    for start in range(0, len(data), size):
        capture.feed(data[start : start + size])
    captured = capture.finish(200, clean=True)
    return captured.model_served, captured.usage, captured.usage_raw, captured.complete, captured.reason


@FUZZ
@given(streams(), st.integers(1, 64))
@example(("openai-chat", b'data: {"model": "a"}\n\ndata: {"model": "b", "usage": {"id": 3}}\n\n'), 2)
@example(("anthropic-messages", b'event: x\ndata: {"a": "data: {"}\n\n' + REAL["anthropic-messages"][-1]), 5)
@example(("gemini", b"data: [DONE]\n\n\ndata: {}\n\n"), 3)
@example(("gemini", b'event: e\ndata:{"type": null, "model": null, "candidates": 1}\n\n'), 1)
def test_the_one_pass_read_says_what_the_event_by_event_read_says(
    stream: tuple[str, bytes], size: int
) -> None:
    wire, data = stream
    whole = read(wire, data, 1 << 20, size)  # kept whole: read in one pass at the end
    passing = read(wire, data, 0, size)  # nothing kept: read event by event as it passes
    assert whole == passing


def test_a_real_stream_is_read_without_parsing_its_deltas() -> None:
    """The one pass parses only the events that say something: a delta that names nothing is not read."""
    parsed: list[bytes] = []

    class Counting(Capture):
        def _event(self, event: bytes) -> None:
            parsed.append(event)
            super()._event(event)

    data = b"".join(event + b"\n\n" for event in REAL["anthropic-messages"])
    capture = Counting("anthropic-messages", keep_bytes=1 << 20)
    capture.start("text/event-stream")
    capture.feed(data)
    captured = capture.finish(200, clean=True)
    assert captured.complete and captured.usage.output == 50
    kinds = [event.split(b"\n", 1)[0] for event in parsed]
    assert kinds == [b"event: message_start", b"event: message_delta", b"event: message_stop"]
