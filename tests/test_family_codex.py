"""The codex family's parser on the edges its golden streams do not reach."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tackroom.families import get_family
from tackroom.families.codex.stream import CodexStreamParser, codex_usage, fresh_input
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

USAGE = {
    "input_tokens": 321,
    "cached_input_tokens": 21,
    "cache_write_input_tokens": 5,
    "output_tokens": 54,
    "reasoning_output_tokens": 3,
}
RECONNECTING = "Reconnecting... waiting for network (Connection failed: error sending request)"


def line(kind: str, **fields: Any) -> str:
    return json.dumps({"type": kind, **fields})


def item(event: str, kind: str, ident: str = "item_1", **fields: Any) -> str:
    return line(f"item.{event}", item={"id": ident, "type": kind, **fields})


def parse(lines: list[str], exit_code: int | None = 0) -> list[Event]:
    parser = CodexStreamParser()
    events = [event for text in lines for event in parser.feed(text)]
    return events + parser.close(exit_code)


def plain(events: list[Event], kind: type[Event] = Event) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.to_json().items() if k != "raw"} for e in events if isinstance(e, kind)]


def test_cached_tokens_are_taken_out_of_the_input_count() -> None:
    assert codex_usage(USAGE) == Usage(input=300, output=54, cache_read=21, cache_write=5, reasoning=3)


@pytest.mark.parametrize(
    ("prompt", "cached", "fresh"),
    [(321, 21, 300), (21, 21, 0), (321, None, 321), (None, 21, None), (20, 21, -1)],
)
def test_fresh_input_subtracts_only_what_is_known(
    prompt: int | None, cached: int | None, fresh: int | None
) -> None:
    assert fresh_input(prompt, cached) == fresh


def test_a_prompt_smaller_than_its_cached_part_is_unknown_input() -> None:
    usage = codex_usage({"input_tokens": 20, "cached_input_tokens": 21, "output_tokens": 5})
    assert usage.input is None and usage.to_json()["input"] == "unknown"
    assert usage.output == 5 and usage.cache_read == 21


def test_missing_or_malformed_usage_figures_stay_unreported() -> None:
    assert codex_usage(None) == Usage()
    assert codex_usage("lots") == Usage()
    malformed = {
        "input_tokens": 10,
        "cached_input_tokens": "2",
        "output_tokens": True,
        "reasoning_output_tokens": 1.5,
    }
    assert codex_usage(malformed) == Usage(input=10)


def test_lines_that_are_not_codex_events_are_ignored() -> None:
    events = parse(
        [
            "",
            "Reading additional input from stdin...",
            "{not json",
            "[1, 2]",
            line("turn.started"),
            line("item.completed", item="not an item"),
            line("item.completed"),
            item("completed", "reasoning", text="thinking"),
            item("updated", "todo_list", items=[]),
            line("something.new", payload={}),
            item("started", "agent_message", text="partial"),
        ]
    )
    assert events == []


def test_a_whole_run_folds_into_session_text_usage_and_finish() -> None:
    events = parse(
        [
            line("thread.started", thread_id="thread-1"),
            item("completed", "agent_message", "item_0", text="first"),
            item("completed", "agent_message", "item_1", text="last"),
            line("turn.completed", usage=USAGE),
        ]
    )
    assert events[0] == SessionStarted(events[0].raw, session_id="thread-1")
    assert [e.text for e in events if isinstance(e, AssistantText)] == ["first", "last"]
    assert plain(events, UsageReport)[0]["scope"] == "total"
    summary = summarize(events)
    assert summary.final_text == "last" and not summary.model_failed
    assert summary.usage == Usage(input=300, output=54, cache_read=21, cache_write=5, reasoning=3)


def test_turn_failed_is_a_fatal_error_with_codex_message() -> None:
    body = '{"error": {"message": "bad request"}}'
    events = parse(
        [line("error", message=body), line("turn.failed", error={"message": body})],
        exit_code=1,
    )
    assert plain(events, ErrorEvent) == [
        {"type": "error", "message": body, "fatal": False},
        {"type": "error", "message": body, "fatal": True},
    ]
    assert plain(events, Finished) == [{"type": "finished", "final_text": None, "ok": False}]
    summary = summarize(events)
    assert summary.model_failed and summary.error == body


def test_turn_failed_without_a_message_still_fails() -> None:
    summary = summarize(parse([line("turn.failed", error="?")], exit_code=1))
    assert summary.model_failed and summary.error == "turn failed"


def test_reconnect_errors_and_warning_items_alone_are_not_failures() -> None:
    events = parse(
        [
            item("completed", "error", "item_0", message="hooks may run without review"),
            line("error", message=RECONNECTING),
            item("completed", "agent_message", text="recovered"),
            line("turn.completed", usage=USAGE),
        ]
    )
    assert [e.fatal for e in events if isinstance(e, ErrorEvent)] == [False, False]
    assert not summarize(events).model_failed


def test_killed_while_reconnecting_fails_with_the_reconnect_message() -> None:
    events = parse([line("turn.started"), line("error", message=RECONNECTING)], exit_code=-15)
    summary = summarize(events)
    assert summary.model_failed and summary.error == RECONNECTING


@pytest.mark.parametrize(
    ("lines", "exit_code"),
    [
        # a stale retry message, then the run went on before it was killed
        (
            [line("error", message=RECONNECTING), item("started", "command_execution", command="sleep 99")],
            -15,
        ),
        ([line("error", message=RECONNECTING)], 0),
        ([line("error", message=RECONNECTING), line("turn.completed", usage=USAGE)], 1),
    ],
)
def test_an_error_is_promoted_only_when_it_was_codex_last_word_before_a_bad_exit(
    lines: list[str], exit_code: int
) -> None:
    assert not any(e.fatal for e in parse(lines, exit_code) if isinstance(e, ErrorEvent))


def test_a_command_is_one_call_and_one_result_even_when_started_and_completed() -> None:
    command = "/bin/bash -lc 'exit 3'"
    events = parse(
        [
            item("started", "command_execution", command=command, aggregated_output="", exit_code=None),
            item("completed", "command_execution", command=command, aggregated_output="oops\n", exit_code=3),
        ]
    )
    assert plain(events) == [
        {
            "type": "tool_call",
            "name": "command_execution",
            "call_id": "item_1",
            "input": {"command": command},
        },
        {"type": "tool_result", "call_id": "item_1", "output": "oops\n", "is_error": True},
    ]


@pytest.mark.parametrize(
    ("fields", "is_error"),
    [
        ({"exit_code": 0, "status": "completed"}, False),
        ({"exit_code": 1, "status": "completed"}, True),
        ({"exit_code": None, "status": "declined"}, True),
        ({"status": "failed"}, True),
    ],
)
def test_a_command_result_is_an_error_when_it_failed_or_was_declined(
    fields: dict[str, Any], is_error: bool
) -> None:
    events = parse([item("completed", "command_execution", command="true", **fields)])
    assert [e.is_error for e in events if isinstance(e, ToolResult)] == [is_error]


def test_an_item_seen_only_completed_still_opens_its_call() -> None:
    changes = [{"path": "/w/a.txt", "kind": "add"}, {"path": "/w/b.txt", "kind": "update"}]
    events = parse([item("completed", "file_change", changes=changes, status="completed")])
    assert plain(events) == [
        {"type": "tool_call", "name": "file_change", "call_id": "item_1", "input": {"changes": changes}},
        {
            "type": "tool_result",
            "call_id": "item_1",
            "output": "add /w/a.txt\nupdate /w/b.txt",
            "is_error": False,
        },
    ]


def test_mcp_calls_are_named_as_the_model_sees_them() -> None:
    result = {"content": [{"type": "text", "text": "FEAS_ECHO:"}, {"type": "text", "text": "ping"}]}
    events = parse(
        [
            item("started", "mcp_tool_call", server="feas", tool="echo", arguments={"text": "ping"}),
            item("completed", "mcp_tool_call", server="feas", tool="echo", result=result, status="completed"),
        ]
    )
    call, done = events
    assert isinstance(call, ToolCall) and call.name == "mcp__feas__echo" and call.input == {"text": "ping"}
    assert done == ToolResult(done.raw, call_id="item_1", output="FEAS_ECHO:ping", is_error=False)


def test_a_failed_mcp_call_reports_its_error_message() -> None:
    events = parse(
        [
            item(
                "completed",
                "mcp_tool_call",
                server="s",
                tool="t",
                error={"message": "denied"},
                status="failed",
            )
        ]
    )
    assert plain(events, ToolResult) == [
        {"type": "tool_result", "call_id": "item_1", "output": "denied", "is_error": True}
    ]


def test_subagent_and_web_search_items_are_tool_calls() -> None:
    states = {"child-1": {"status": "completed", "message": "child says hi"}}
    events = parse(
        [
            item(
                "completed",
                "collab_tool_call",
                "c1",
                tool="spawn_agent",
                prompt="go",
                receiver_thread_ids=["child-1"],
                agents_states=states,
                status="completed",
            ),
            item("completed", "web_search", "w1", query="tackroom"),
        ]
    )
    assert [(e.name, e.input) for e in events if isinstance(e, ToolCall)] == [
        ("spawn_agent", {"prompt": "go", "receiver_thread_ids": ["child-1"]}),
        ("web_search", {"query": "tackroom"}),
    ]
    assert [e.output for e in events if isinstance(e, ToolResult)] == ["child says hi", None]


def test_the_family_is_verified_and_says_which_figures_it_reports() -> None:
    family = get_family("codex")
    assert family.verified and "0.171.0" in (family.__doc__ or "")
    assert family.reports_usage == {"input", "output", "cache_read", "cache_write", "reasoning"}
    assert family.parser() is not family.parser()
