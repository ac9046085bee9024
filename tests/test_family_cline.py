"""The cline family's parser on the edges its golden streams do not reach."""

from __future__ import annotations

import json
from typing import Any

from tackroom.families import get_family
from tackroom.families.cline import ClineStreamParser, run_usage
from tackroom.run.result import summarize
from tackroom.trace.events import ErrorEvent, Event, Finished, SessionStarted, ToolResult, Usage


def agent(kind: str, **fields: Any) -> str:
    return json.dumps({"type": "agent_event", "event": {"type": kind, **fields}})


def hook(name: str, task: str, parent: str | None = None) -> str:
    return json.dumps({"type": "hook_event", "hookEventName": name, "taskId": task, "parentAgentId": parent})


def result(reason: str, **fields: Any) -> str:
    return json.dumps({"type": "run_result", "finishReason": reason, **fields})


def parse(lines: list[str], exit_code: int | None = 0) -> list[Event]:
    parser = ClineStreamParser()
    events: list[Event] = []
    for raw in lines:
        events += parser.feed(raw)
    return events + parser.close(exit_code)


def test_the_family_is_registered() -> None:
    assert get_family("cline").stream == "cline --json"


def test_the_session_starts_once_with_the_top_agent_and_no_id() -> None:
    """The stream's taskId (conv_...) is not the id cline logs and resumes its session by."""
    events = parse([hook("agent_start", "conv_sub", parent="agent_1"), hook("agent_start", "conv_1")])
    assert [e.session_id for e in events if isinstance(e, SessionStarted)] == [None]


def test_usage_leaves_the_cached_part_out_of_input_and_takes_no_cache_write() -> None:
    usage = run_usage({"inputTokens": 321, "outputTokens": 54, "cacheReadTokens": 21, "cacheWriteTokens": 0})
    assert usage == Usage(input=300, output=54, cache_read=21)
    assert run_usage("garbage") == Usage()


def test_a_model_error_is_reported_once_whatever_the_exit_code() -> None:
    lines = [
        agent("error", error={"message": "400 boom"}),
        result("error", text="400 boom"),
        json.dumps({"type": "error", "message": "400 boom"}),
    ]
    events = parse(lines, exit_code=0)
    assert [e.message for e in events if isinstance(e, ErrorEvent)] == ["400 boom"]
    summary = summarize(events)
    assert summary.model_failed and summary.finished


def test_a_run_that_did_not_complete_fails_even_without_an_error_line() -> None:
    events = parse([result("aborted", text="partial")])
    assert [e.message for e in events if isinstance(e, ErrorEvent)] == ["cline ended the run: aborted"]
    assert events[-1] == Finished(events[-1].raw, final_text=None, ok=False)


def test_an_error_line_without_a_run_result_still_fails_the_run() -> None:
    events = parse([json.dumps({"type": "error", "message": "no provider"})], exit_code=1)
    assert events[-1] == Finished(final_text=None, ok=False)


def test_a_stream_cut_before_its_run_result_is_left_to_the_runner() -> None:
    assert not any(
        isinstance(e, Finished) for e in parse([agent("content_end", contentType="text", text="x")])
    )


def test_a_failed_tool_and_hostile_events_are_taken_without_raising() -> None:
    lines = [
        agent(
            "content_end", contentType="tool", toolCallId="c1", output=[{"success": False}], error="exit 1"
        ),
        json.dumps({"type": "agent_event", "event": "not an object"}),
        agent("content_start", contentType="tool", toolName=5, input=None),
        agent("content_end", contentType="text", text=["x"]),
        "[]",
        "nonsense",
    ]
    events = parse(lines)
    [tool_result] = [e for e in events if isinstance(e, ToolResult)]
    assert tool_result.is_error and tool_result.output == '[{"success": false}]'


def test_clines_own_hook_lines_after_the_start_say_nothing() -> None:
    """With hooks or MCP tools, cline writes a hook_event line around each tool call and at the run's
    end (recorded in golden/cline/cline-3.0.65-mcp): only the first starts the session."""
    lines = [
        hook("agent_start", "conv_1"),
        hook("tool_call", "conv_1"),
        agent("content_start", contentType="tool", toolName="srv__echo", toolCallId="c1", input={}),
        hook("tool_result", "conv_1"),
        hook("agent_end", "conv_1"),
    ]
    events = parse(lines)
    assert [type(e).__name__ for e in events] == ["SessionStarted", "ToolCall"]
