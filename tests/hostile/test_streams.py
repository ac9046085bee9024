"""Every family's stream parser, fed mutated real streams: only events come out, never an exception.

The corpus is the recorded real streams in ``tests/golden/<family>/<case>/``
(a family without recordings of its own gets every recorded stream: a
harness may print anything). Each example takes one recorded stream and
mutates it the way a hostile or broken harness would: a value anywhere in a
line replaced by another type, a key dropped, lone surrogates and Rich markup
in strings, nesting far past any real stream, lines cut, doubled, dropped or
reordered, bytes that were not UTF-8. Every event that comes out must
serialise with ``json.dumps`` and encode to UTF-8, as ``events.jsonl``,
``--events`` and the live view do. Copilot's session log, read after exit,
gets the same treatment as a file.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hostile.fuzz import FUZZ
from tackroom.families import family_names, get_family
from tackroom.families.base import Family, StreamParser
from tackroom.families.copilot import FAMILY as COPILOT
from tackroom.trace.events import AssistantText, ErrorEvent, Event, SessionStarted

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
FAMILIES = family_names()

# Values a hostile harness may put anywhere a parser expects something else.
HOSTILE_TEXT = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["\ud83d", "a\udc00b", "[/usr/bin]", "[bold red]x[/]", "\x00", "\u2028", "{", ""]),
)
LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    HOSTILE_TEXT,
)
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(HOSTILE_TEXT, inner, max_size=3),
    max_leaves=8,
)


@cache
def corpus(family: str) -> tuple[tuple[str, ...], ...]:
    own = sorted((GOLDEN / family).glob("*/stream.jsonl"))
    cases = own or sorted(GOLDEN.glob("*/*/stream.jsonl"))
    return tuple(tuple(case.read_text(encoding="utf-8").splitlines()) for case in cases)


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value, the value itself first."""
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += paths(item, (*prefix, index))
    return found


def put(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: put(value[head], rest, new)}
    copy = list(value)
    copy[head] = put(copy[head], rest, new)
    return copy


def drop(value: Any, path: tuple[Any, ...]) -> Any:
    if len(path) == 1 and isinstance(value, dict):
        return {k: v for k, v in value.items() if k != path[0]}
    if len(path) == 1:
        return value[: path[0]] + value[path[0] + 1 :]
    return put(value, path[:1], drop(value[path[0]], path[1:]))


def nested(depth: int) -> str:
    return '{"type": "assistant", "message": ' + '{"content": [' * depth + "]}" * depth + "}"


@st.composite
def mutated_line(draw: st.DrawFn, line: str) -> str:
    """One line of a recorded stream, changed the way a hostile harness might change it."""
    how = draw(st.sampled_from(["replace", "drop", "raw", "deep", "cut", "bytes"]))
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):  # a line an earlier mutation made too deep for Python
        data = None
    if how in ("replace", "drop") and isinstance(data, dict | list):
        # Most of a line is deep inside it; the shapes parsers read are near the top, so weigh those.
        depth = draw(st.integers(0, 4))
        path = draw(st.sampled_from([p for p in paths(data) if len(p) <= depth] or [()]))
        if how == "replace" or not path:
            return json.dumps(put(data, path, draw(VALUES)), ensure_ascii=draw(st.booleans()))
        return json.dumps(drop(data, path))
    if how == "deep":
        return nested(draw(st.sampled_from([63, 65, 200, 1000, 5000])))
    if how == "cut" and line:
        return line[: draw(st.integers(0, len(line) - 1))]
    if how == "bytes":
        # What the process layer makes of bytes that were not UTF-8, and an escaped lone surrogate.
        return draw(st.sampled_from(["\ufffd", "\\ud83d", '"\\udc00"'])).join(line.split('"', 2))
    return json.dumps(draw(VALUES))


@st.composite
def hostile_stream(draw: st.DrawFn, family: str) -> list[str]:
    lines = list(draw(st.sampled_from(corpus(family))))
    for _ in range(draw(st.integers(1, 6))):
        where = draw(st.integers(0, max(0, len(lines) - 1)))
        action = draw(st.sampled_from(["mutate", "mutate", "mutate", "insert", "delete", "double", "swap"]))
        if not lines or action == "insert":
            lines.insert(where, draw(mutated_line(draw(st.sampled_from(lines or ["{}"])))))
        elif action == "mutate":
            lines[where] = draw(mutated_line(lines[where]))
        elif action == "delete":
            del lines[where]
        elif action == "double":
            lines.insert(where, lines[where])
        else:
            other = draw(st.integers(0, len(lines) - 1))
            lines[where], lines[other] = lines[other], lines[where]
    return [delivered(line) for line in lines]


def delivered(line: str) -> str:
    """A line as the process layer hands it over: UTF-8 decoded with replacement, so no lone surrogate."""
    return line.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


TEXT_FIELDS = ("raw", "session_id", "model", "text", "name", "call_id", "output", "message", "final_text")


def check(events: Any) -> list[Event]:
    """What a parser returned is a list of events, typed as declared, each serialising to UTF-8 JSON."""
    assert isinstance(events, list)
    for event in events:
        assert isinstance(event, Event), event
        for name in TEXT_FIELDS:
            value = getattr(event, name, None)
            assert value is None or isinstance(value, str), (name, value)
        usage = getattr(event, "usage", None)
        if usage is not None:
            assert all(isinstance(v, str) or v >= 0 for v in usage.to_json().values())
        data = event.to_json()
        json.dumps(data).encode("utf-8")
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    return events


def parse(family: Family, lines: list[str], exit_code: int | None) -> list[Event]:
    parser: StreamParser = family.parser()
    events: list[Event] = []
    for line in lines:
        events += check(parser.feed(line))
    return events + check(parser.close(exit_code))


# The shapes that killed runs with a traceback (issue 7, item 3): each parses cleanly now.
SHAPES = [
    ("claude-code", '{"type":"assistant","message":"hi"}', []),
    ("cursor", '{"type":"assistant","message":"hi"}', []),
    ("qwen", '{"type":"assistant","message":"hi"}', []),
    (
        "claude-code",
        '{"type":"user","message":{"content":[{"type":"tool_result","content":[{"text":5}]}]}}',
        ["tool_result"],
    ),
    ("copilot", '{"type":"assistant.message","data":{"content":"x","toolRequests":5}}', ["assistant_text"]),
    (
        "opencode",
        '{"type":"tool_use","part":{"callID":"c","tool":"bash","state":{"status":{}}}}',
        ["tool_call"],
    ),
    ("pi", '{"type":"session","id":{"a":1}}', ["session_started"]),
]


@pytest.mark.parametrize(("name", "line", "kinds"), SHAPES, ids=[f"{s[0]}:{s[1][:40]}" for s in SHAPES])
def test_an_unexpected_shape_parses_cleanly(name: str, line: str, kinds: list[str]) -> None:
    events = check(get_family(name).parser().feed(line))
    assert [e.kind for e in events] == kinds


@pytest.mark.parametrize("name", ["claude-code", "codex", "copilot", "gemini", "opencode", "pi", "qwen"])
def test_json_nested_a_thousand_deep_is_a_non_fatal_error_event_keeping_its_line(name: str) -> None:
    line = nested(1000)
    [event] = check(get_family(name).parser().feed(line))
    assert isinstance(event, ErrorEvent) and not event.fatal and event.raw == line
    assert "nested deeper than" in event.message


def test_a_lone_surrogate_becomes_a_replacement_character() -> None:
    line = '{"type":"assistant","message":{"content":[{"type":"text","text":"a\\ud83db \\ud83d\\ude00"}]}}'
    [event] = check(get_family("claude-code").parser().feed(line))
    assert isinstance(event, AssistantText) and event.text == "a\ufffdb \U0001f600"


@pytest.mark.parametrize("name", FAMILIES)
@FUZZ
@given(data=st.data(), exit_code=st.sampled_from([0, 1, 144, -9, None]))
def test_a_mutated_stream_yields_only_events(name: str, data: st.DataObject, exit_code: int | None) -> None:
    family = get_family(name)
    lines = data.draw(hostile_stream(name))
    parse(family, lines, exit_code)
    stderr = "\n".join(data.draw(st.lists(st.sampled_from(lines or [""]), max_size=3)))
    found = family.stderr_error(stderr)
    check([found] if found is not None else [])


SESSION_LOGS = sorted(GOLDEN.glob("copilot/*/session-events.jsonl"))


@FUZZ
@given(data=st.data(), garbage=st.binary(max_size=40), with_session=st.booleans())
def test_copilot_reads_a_corrupt_session_log_without_raising(
    data: st.DataObject, garbage: bytes, with_session: bool, tmp_path_factory: pytest.TempPathFactory
) -> None:
    source = data.draw(st.sampled_from(SESSION_LOGS))
    lines = source.read_text(encoding="utf-8").splitlines()
    lines = [data.draw(mutated_line(line)) if data.draw(st.booleans()) else line for line in lines]
    raw = "\n".join(lines).encode("utf-8", "surrogatepass")
    cut = data.draw(st.integers(0, len(raw)))
    root = tmp_path_factory.mktemp("copilot")
    log = root / "session-state" / "s-1" / "events.jsonl"
    log.parent.mkdir(parents=True)
    log.write_bytes(raw[:cut] + garbage + raw[cut:])
    started = (SessionStarted(session_id="s-1"),) if with_session else ()
    check(COPILOT.after_exit(root, {"COPILOT_HOME": str(root)}, started))
