"""The droid family's parser on the edges its golden streams do not reach."""

from __future__ import annotations

import json
from typing import Any

from tackroom.families import get_family
from tackroom.families.droid import DroidStreamParser, run_usage
from tackroom.run.result import summarize
from tackroom.trace.events import ErrorEvent, Event, Finished, SessionStarted, ToolCall, ToolResult, Usage

SESSION = "0a6df8a1-fccc-4eda-86b1-c353b0c05da2"


def line(kind: str, **fields: Any) -> str:
    return json.dumps({"type": kind, **fields, "session_id": SESSION})


def parse(lines: list[str], exit_code: int | None = 0) -> list[Event]:
    parser = DroidStreamParser()
    events: list[Event] = []
    for raw in lines:
        events += parser.feed(raw)
    return events + parser.close(exit_code)


def test_the_family_is_registered() -> None:
    assert get_family("droid").stream == "droid exec -o stream-json"


def test_the_session_and_model_come_from_the_init_line_once() -> None:
    events = parse(
        [line("system", subtype="init", model="custom:m-0"), line("message", role="user", text="hi")]
    )
    assert [e for e in events if isinstance(e, SessionStarted)] == [
        SessionStarted(events[0].raw, session_id=SESSION, model="custom:m-0")
    ]


def test_a_model_error_fails_the_run_even_when_droid_exits_0() -> None:
    events = parse(
        [
            line("error", source="agent_loop", message="400 overloaded"),
            line("error", source="cli", message="Exec failed"),
        ],
        exit_code=0,
    )
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert [e.message for e in errors] == ["400 overloaded"]  # the model's failure, not the CLI's echo
    summary = summarize(events)
    assert summary.model_failed and summary.finished
    assert events[-1] == Finished(final_text=None, ok=False)


def test_a_stream_cut_before_its_completion_line_is_left_to_the_runner() -> None:
    events = parse([line("message", role="assistant", text="half")], exit_code=None)
    assert not any(isinstance(e, Finished) for e in events)


def test_a_failed_tool_and_a_non_text_result_are_read_without_inventing_output() -> None:
    events = parse(
        [
            line("tool_call", id="t1", toolName="Execute", parameters={"command": "false"}),
            line("tool_result", id="t1", isError=True, value={"code": 1}),
            line("tool_result", id="t2", isError="yes", value="x"),
        ]
    )
    calls = [e for e in events if isinstance(e, ToolCall)]
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [(c.name, c.call_id, c.input) for c in calls] == [("Execute", "t1", {"command": "false"})]
    assert [(r.call_id, r.output, r.is_error) for r in results] == [("t1", None, True), ("t2", "x", False)]


def test_usage_names_no_figure_droid_did_not_write() -> None:
    assert run_usage({"input_tokens": 3, "output_tokens": 2, "factory_credits": 0, "ttft_ms": 5}) == Usage(
        input=3, output=2
    )
    assert run_usage(["not", "an", "object"]) == Usage()
    assert not run_usage({"input_tokens": "many"}).reported


def test_garbage_lines_are_no_events() -> None:
    assert parse(["", "not json", "[1, 2]", json.dumps({"type": 5})], exit_code=None) == []
