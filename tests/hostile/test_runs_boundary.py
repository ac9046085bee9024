"""The run's boundary around family code and its bounded logs, driven directly.

A family is third-party code too: whatever it raises or returns, on a line,
at close, after exit or on stderr, the run gets an error event that names the
family and keeps the raw text, and goes on.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hostile.fuzz import FUZZ
from tackroom.families.base import MAX_TEXT, Family, Lines, PlainTextParser, StreamParser
from tackroom.run.session import _Boundary, _Events, _Spool, _text_gap
from tackroom.trace.events import AssistantText, ErrorEvent, Event, Finished, ToolCall


class BrokenParser(StreamParser):
    def feed(self, line: str) -> list[Event]:
        if line == "good":
            return [AssistantText(line, text="fine")]
        if line == "not events":
            return ["a string"]  # type: ignore[list-item]
        if line == "half":
            return self._half()  # type: ignore[return-value]
        raise KeyError(line)

    def _half(self) -> Iterator[Event]:
        yield AssistantText("half", text="first")
        raise ValueError("then broke")

    def close(self, exit_code: int | None) -> list[Event]:
        raise ZeroDivisionError("at close")


class Broken(Family):
    name = "broken"

    def parser(self) -> StreamParser:
        return BrokenParser()

    def after_exit(self, home: Path | None, env: Mapping[str, str], events: Sequence[Event]) -> list[Event]:
        raise OSError("after exit")

    def stderr_error(self, stderr_tail: str) -> ErrorEvent | None:
        raise RecursionError("on stderr")


class NoParser(Family):
    name = "no-parser"

    def parser(self) -> StreamParser:
        raise RuntimeError("cannot even start")


def boundary(family: Family) -> tuple[_Boundary, list[Event]]:
    seen: list[Event] = []
    return _Boundary(family, seen.append), seen


def test_whatever_family_code_raises_becomes_a_non_fatal_error_event_naming_it() -> None:
    guard, seen = boundary(Broken())
    for line in ("good", "{bad line", "not events", "half"):
        guard.feed(line)
    guard.close(0)
    guard.after_exit({"HOME": "/nowhere"}, ())
    guard.stderr("some stderr")

    assert seen[0] == AssistantText("good", text="fine")
    errors = [e for e in seen if isinstance(e, ErrorEvent)]
    assert all(not e.fatal and e.message.startswith("broken family ") for e in errors)
    assert [e.raw for e in errors] == ["{bad line", "not events", "half", "", "", "some stderr"]
    assert "KeyError: '{bad line'" in errors[0].message
    assert "not an event" in errors[1].message and "ValueError: then broke" in errors[2].message
    assert "ZeroDivisionError" in errors[3].message and "OSError" in errors[4].message
    assert "RecursionError" in errors[5].message


def test_a_family_that_cannot_make_its_parser_is_reported_and_the_run_goes_on() -> None:
    guard, seen = boundary(NoParser())
    guard.feed("anything")
    guard.close(0)
    [error] = seen
    assert isinstance(error, ErrorEvent) and "no-parser family could not make its parser" in error.message


def test_an_event_that_cannot_be_serialised_becomes_an_error_event(tmp_path: Path) -> None:
    with _Events(tmp_path / "events.jsonl", None) as events:
        events.add(ToolCall("raw", name="t", input={1, 2}))
        events.add(AssistantText("raw", text="lone \ud83d"))
    [error, text] = events.kept()
    assert isinstance(error, ErrorEvent) and "could not be serialised" in error.message and error.raw == "raw"
    written = (tmp_path / "events.jsonl").read_bytes()
    written.decode("ascii")  # surrogates are escaped, never written raw
    assert [json.loads(line)["type"] for line in written.splitlines()] == ["error", "assistant_text"]
    assert text == AssistantText("raw", text="lone \ud83d")


def test_a_failing_callback_is_called_once_then_recorded(tmp_path: Path) -> None:
    calls: list[Event] = []

    def callback(event: Event) -> None:
        calls.append(event)
        raise ValueError("bug in the caller")

    with _Events(tmp_path / "events.jsonl", callback) as events:
        events.add(AssistantText(text="a"))
        events.add(AssistantText(text="b"))
    kinds = [e.kind for e in events.kept()]
    assert len(calls) == 1 and kinds == ["assistant_text", "error", "assistant_text"]


@FUZZ
@given(
    lines=st.lists(
        st.text(st.characters(exclude_categories=("Cs", "Zl", "Zp", "Cc")), max_size=30), max_size=200
    ),
    head=st.integers(0, 300),
    tail=st.integers(0, 300),
)
def test_a_spool_keeps_the_head_and_the_tail_and_marks_the_gap(
    lines: list[str], head: int, tail: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    path = tmp_path_factory.mktemp("spool") / "log"
    with _Spool(path, (head, tail), _text_gap) as spool:
        for line in lines:
            spool.add(line)
    written = path.read_text(encoding="utf-8").split("\n")[:-1]
    if not spool.left_out:
        assert written == lines
        return
    gap = next(i for i, line in enumerate(written) if line.startswith("[tackroom: "))
    kept_head, kept_tail = written[:gap], written[gap + 1 :]
    assert len(kept_head) + len(kept_tail) + spool.left_out == len(lines)
    assert kept_head == lines[: len(kept_head)]
    assert kept_tail == lines[len(lines) - len(kept_tail) :]
    assert sum(len(line) + 1 for line in kept_head) <= head
    assert f"{spool.left_out} lines" in written[gap]


def test_plain_text_of_a_flood_keeps_its_beginning_and_end_bounded() -> None:
    parser = PlainTextParser()
    for n in range(400_000):
        parser.feed(f"line {n}")
    [text, finished] = parser.close(0)
    assert isinstance(finished, Finished) and finished.final_text == text.text
    assert isinstance(text, AssistantText) and text.text.startswith("line 0\n")
    assert text.text.endswith("line 399999") and "lines of output left out here" in text.text
    assert len(text.text) < 2 * MAX_TEXT


def test_lines_are_all_kept_when_they_fit() -> None:
    kept = Lines(budget=1000)
    for n in range(5):
        kept.append(str(n))
    assert list(kept) == ["0", "1", "2", "3", "4"] and kept.left_out == 0
