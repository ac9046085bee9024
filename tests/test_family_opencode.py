"""The opencode family's parser on the edges its golden streams do not reach."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tackroom.families import get_family
from tackroom.families.opencode.stream import OpencodeStreamParser, error_message, step_usage
from tackroom.run.result import summarize
from tackroom.trace.events import (
    AssistantText,
    ErrorEvent,
    Event,
    Finished,
    SessionStarted,
    ToolCall,
    ToolResult,
    Usage,
    UsageReport,
)

SESSION = "ses_test"


def line(kind: str, part: dict[str, Any] | None = None, **extra: Any) -> str:
    return json.dumps({"type": kind, "sessionID": SESSION, "part": part or {}, **extra})


def text(value: str) -> str:
    return line("text", {"type": "text", "text": value})


def tool(call_id: str, status: str, **state: Any) -> str:
    return line(
        "tool_use", {"type": "tool", "tool": "bash", "callID": call_id, "state": {"status": status, **state}}
    )


def parse(lines: list[str], exit_code: int | None = 0) -> list[Event]:
    parser = OpencodeStreamParser()
    events = [event for item in lines for event in parser.feed(item)]
    return events + parser.close(exit_code)


def strip(events: list[Event], kind: type[Event]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.to_json().items() if k != "raw"} for e in events if isinstance(e, kind)]


def test_tokens_are_taken_as_opencode_reports_them_and_a_zero_reasoning_is_not_a_count() -> None:
    tokens = {"total": 401, "input": 321, "output": 54, "reasoning": 0, "cache": {"write": 5, "read": 21}}
    assert step_usage(tokens) == Usage(input=321, output=54, cache_read=21, cache_write=5, reasoning=None)
    assert step_usage({**tokens, "reasoning": 3}).reasoning == 3


def test_missing_or_malformed_token_figures_stay_unreported() -> None:
    assert step_usage(None) == Usage()
    assert step_usage({"input": 10, "output": "many", "cache": "none"}) == Usage(input=10)


def test_each_step_is_one_model_call_and_the_run_sums_them() -> None:
    finish = line("step_finish", {"tokens": {"input": 10, "output": 2, "cache": {"read": 1, "write": 0}}})
    events = parse([line("step_start"), finish, line("step_start"), finish])
    assert [e.scope for e in events if isinstance(e, UsageReport)] == ["turn", "turn"]
    assert summarize(events).usage == Usage(input=20, output=4, cache_read=2, cache_write=0)


def test_final_text_is_the_last_step_with_text_whole() -> None:
    first = [line("step_start"), text("let me look"), tool("c1", "completed", output="ok")]
    second = [line("step_start"), text("all "), text("done")]
    events = parse([*first, *second, line("step_start")])
    assert [e.text for e in events if isinstance(e, AssistantText)] == ["let me look", "all ", "done"]
    assert strip(events, Finished) == [{"type": "finished", "final_text": "all done", "ok": True}]


def test_a_tool_seen_pending_then_finished_is_one_call_and_one_result() -> None:
    events = parse([tool("c1", "running", input={"command": "ls"}), tool("c1", "completed", output="a\nb")])
    assert strip(events, ToolCall) == [
        {"type": "tool_call", "name": "bash", "call_id": "c1", "input": {"command": "ls"}}
    ]
    assert strip(events, ToolResult) == [
        {"type": "tool_result", "call_id": "c1", "output": "a\nb", "is_error": False}
    ]


def test_a_failed_tool_reports_its_error_text() -> None:
    events = parse([tool("c2", "error", input={"filePath": "/x"}, error="File not found: /x")])
    assert strip(events, ToolResult) == [
        {"type": "tool_result", "call_id": "c2", "output": "File not found: /x", "is_error": True}
    ]


def test_an_error_line_fails_the_run_with_the_providers_message() -> None:
    error = {"name": "APIError", "data": {"message": "overloaded", "statusCode": 529}}
    events = parse([line("error", error=error)], exit_code=1)
    assert strip(events, ErrorEvent) == [{"type": "error", "message": "overloaded", "fatal": True}]
    summary = summarize(events)
    assert summary.model_failed and summary.error == "overloaded"


@pytest.mark.parametrize(
    ("error", "message"),
    [
        ({"name": "UnknownError", "data": {}}, "UnknownError"),
        ({"name": "ProviderAuthError", "data": {"message": ""}}, "ProviderAuthError"),
        ("boom", "boom"),
        (None, "opencode reported an error"),
    ],
)
def test_error_message_falls_back_to_the_errors_name(error: Any, message: str) -> None:
    assert error_message(error) == message


def test_the_session_is_announced_once() -> None:
    events = parse([line("step_start"), text("hi"), line("step_finish")])
    assert strip(events, SessionStarted) == [
        {"type": "session_started", "session_id": SESSION, "model": None}
    ]


@pytest.mark.parametrize("exit_code", [None, 1, 137])
def test_a_kill_or_a_crash_without_an_error_line_claims_no_outcome(exit_code: int | None) -> None:
    assert not [e for e in parse([line("step_start"), text("partial")], exit_code) if isinstance(e, Finished)]


def test_lines_that_are_not_opencode_json_are_ignored() -> None:
    parser = OpencodeStreamParser()
    assert parser.feed("") == [] and parser.feed("Error: not json") == [] and parser.feed("[1, 2]") == []


def test_the_family_claims_exactly_the_figures_its_verified_wire_carries() -> None:
    family = get_family("opencode")
    assert family.verified
    assert family.reports_usage == {"input", "output", "cache_read", "cache_write"}
    assert isinstance(family.parser(), OpencodeStreamParser)
