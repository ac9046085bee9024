"""The grok family's parser on the edges its golden streams do not reach."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tackroom.adapters.resolve import resolve_builtins
from tackroom.families import get_family
from tackroom.families.grok import GrokStreamParser
from tackroom.profile.model import McpServer, Profile
from tackroom.profile.render import plan_render
from tackroom.run.result import summarize
from tackroom.trace.events import AssistantText, ErrorEvent, Event, Finished, ToolCall, ToolResult


def message(role: str, **fields: Any) -> str:
    return json.dumps({"role": role, **fields})


def parse(lines: list[str], exit_code: int | None = 0) -> list[Event]:
    parser = GrokStreamParser()
    events: list[Event] = []
    for raw in lines:
        events += parser.feed(raw)
    return events + parser.close(exit_code)


def test_the_family_is_registered_and_reports_no_usage() -> None:
    family = get_family("grok")
    assert family.verified and family.reports_usage == frozenset()


def test_the_last_assistant_message_is_the_final_text() -> None:
    events = parse([message("user", content="hi"), message("assistant", content="hello")])
    assert events[-1] == Finished(final_text="hello", ok=True)
    assert summarize(events).final_text == "hello" and not summarize(events).model_failed


def test_a_model_error_fails_the_run_although_grok_exits_0() -> None:
    text = "Sorry, I encountered an error: Grok API error: 429 slow down"
    summary = summarize(parse([message("assistant", content=text)], exit_code=0))
    assert summary.model_failed and summary.error == "Grok API error: 429 slow down"


def test_the_clis_own_failure_is_an_error_too() -> None:
    events = parse([message("assistant", content="Error: no API key")], exit_code=1)
    assert [e.message for e in events if isinstance(e, ErrorEvent)] == ["no API key"]
    assert events[-1] == Finished(final_text=None, ok=False)


def test_the_error_words_are_the_models_own_unless_they_end_the_run() -> None:
    lines = [
        message("assistant", content="Error: that file is missing, let me look"),
        message("assistant", content="found it"),
    ]
    events = parse(lines)
    assert not any(isinstance(e, ErrorEvent) for e in events)
    assert events[-1] == Finished(final_text="found it", ok=True)


def test_a_message_with_tool_calls_is_never_the_error() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}
    events = parse([message("assistant", content="Error: x", tool_calls=[call])])
    assert [e for e in events if isinstance(e, ToolCall)] == [
        ToolCall(events[1].raw, name="bash", call_id="c1", input={"command": "ls"})
    ]
    assert not any(isinstance(e, ErrorEvent) for e in events)


def test_hostile_tool_calls_and_results_are_taken_without_raising() -> None:
    lines = [
        message(
            "assistant", content=None, tool_calls=[1, {"function": "x"}, {"function": {"arguments": "{"}}]
        ),
        message("tool", tool_call_id=5, content=["not text"]),
        "not json",
        "[1, 2]",
        message("assistant", content=7),
    ]
    events = parse(lines)
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert [(c.name, c.input) for c in calls] == [("", None), ("", None), ("", "{")]
    assert [e.output for e in events if isinstance(e, ToolResult)] == [None]
    assert not any(isinstance(e, AssistantText) for e in events)
    assert events[-1] == Finished(final_text=None, ok=True)


def test_a_killed_run_is_left_to_the_runner() -> None:
    assert not any(isinstance(e, Finished) for e in parse([message("assistant", content="half")], None))


def test_a_profiles_mcp_servers_are_dropped_by_name_and_the_matrix_says_why(tmp_path: Path) -> None:
    """grok 0.0.34's -p never offers an MCP tool (its tool list is fixed before the servers list theirs,
    and it never exits while one runs): no mcp capability, and the lacks entry says so."""
    grok = resolve_builtins()["grok"]
    assert grok.spec.capabilities.mcp is None
    assert "never exits" in grok.spec.lacks["mcp"]
    rendered = plan_render(Profile(mcp=(McpServer("db", command="db-mcp"),)), grok, root=tmp_path)
    assert [(d.kind, d.name, d.reason) for d in rendered.drops] == [("MCP server", "db", "no mcp capability")]
