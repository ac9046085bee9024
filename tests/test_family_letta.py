"""The letta family's parser, and its reading of the local backend store, on the edges golden streams miss."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tackroom.families import get_family
from tackroom.families.letta import LettaStreamParser, run_usage, tool_results
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
)

AGENT = "agent-local-1"


def chunk(text: str, otid: str = "o1") -> str:
    content = [{"type": "text", "text": text}]
    return json.dumps(
        {"type": "message", "message_type": "assistant_message", "otid": otid, "content": content}
    )


def line(kind: str, **fields: Any) -> str:
    return json.dumps({"type": kind, **fields})


def parse(lines: list[str], exit_code: int | None = 0) -> list[Event]:
    parser = LettaStreamParser()
    events: list[Event] = []
    for raw in lines:
        events += parser.feed(raw)
    return events + parser.close(exit_code)


def test_the_family_is_registered() -> None:
    assert get_family("letta").reports_usage == frozenset({"input", "output", "cache_read"})


def test_chunks_of_one_message_are_one_text_and_another_message_starts_another() -> None:
    events = parse([chunk("MO"), chunk("CK"), chunk("next", otid="o2"), line("result", subtype="success")])
    assert [e.text for e in events if isinstance(e, AssistantText)] == ["MOCK", "next"]


def test_an_auto_approved_call_is_the_tool_call() -> None:
    call = {"name": "Bash", "tool_call_id": "c1", "arguments": '{"command": "ls"}'}
    events = parse([line("system", subtype="init", session_id=AGENT), line("auto_approval", tool_call=call)])
    assert [(e.name, e.call_id, e.input) for e in events if isinstance(e, ToolCall)] == [
        ("Bash", "c1", {"command": "ls"})
    ]
    assert [e.session_id for e in events if isinstance(e, SessionStarted)] == [AGENT]


def test_usage_takes_no_figure_letta_writes_as_0_whatever_the_model_said() -> None:
    usage = {"prompt_tokens": 300, "completion_tokens": 54, "cached_input_tokens": 21, "reasoning_tokens": 0}
    assert run_usage(usage) == Usage(input=300, output=54, cache_read=21)
    assert run_usage([1]) == Usage()


def test_a_model_error_is_reported_once_and_fails_the_run_whatever_the_exit_code() -> None:
    events = parse(
        [line("error", message="400 boom"), line("error", message='{"error": "400 boom"}')], exit_code=0
    )
    assert [e.message for e in events if isinstance(e, ErrorEvent)] == ["400 boom"]
    assert summarize(events).model_failed and events[-1] == Finished(final_text=None, ok=False)


def test_an_error_result_fails_the_run() -> None:
    events = parse([line("result", subtype="error", is_error=True, result="it broke")])
    assert [e.message for e in events if isinstance(e, ErrorEvent)] == ["it broke"]


def test_a_stream_cut_before_its_result_is_left_to_the_runner() -> None:
    events = parse([chunk("half")], exit_code=None)
    assert not any(isinstance(e, Finished) for e in events)
    assert [e.text for e in events if isinstance(e, AssistantText)] == ["half"]


def test_tool_results_are_read_for_this_agent_only_and_garbage_is_skipped(tmp_path: Path) -> None:
    log = tmp_path / "conversations" / "Y29udjE" / "messages.jsonl"
    log.parent.mkdir(parents=True)
    mine = {
        "role": "toolResult",
        "toolCallId": "c1",
        "content": [{"type": "text", "text": "ok"}],
        "isError": False,
        "metadata": {"agent_id": AGENT},
    }
    other = {**mine, "toolCallId": "c2", "metadata": {"agent_id": "agent-local-2"}}
    deep = "[" * 200 + "]" * 200
    lines = [json.dumps(mine), json.dumps(other), "garbage", '{"role": "toolResult", "x": ' + deep + "}"]
    log.write_bytes(("\n".join(lines) + "\n\xff\n").encode("utf-8", "surrogateescape"))
    results = tool_results(tmp_path, AGENT)
    assert [(e.call_id, e.output, e.is_error) for e in results if isinstance(e, ToolResult)] == [
        ("c1", "ok", False)
    ]
    assert tool_results(tmp_path / "missing", AGENT) == []


def test_after_exit_reads_the_store_only_when_the_run_called_a_tool(tmp_path: Path) -> None:
    family = get_family("letta")
    started = SessionStarted(session_id=AGENT)
    assert family.after_exit(tmp_path, {}, [started]) == []
    store = tmp_path / ".letta" / "lc-local-backend" / "conversations" / "c"
    store.mkdir(parents=True)
    result = {"role": "toolResult", "toolCallId": "c1", "content": "done", "metadata": {"agent_id": AGENT}}
    (store / "messages.jsonl").write_text(json.dumps(result) + "\n")
    events = family.after_exit(tmp_path, {}, [started, ToolCall(name="Bash", call_id="c1")])
    assert [(e.call_id, e.output) for e in events if isinstance(e, ToolResult)] == [("c1", "done")]


def test_the_lines_letta_prints_for_each_hook_are_not_the_stream() -> None:
    """letta logs every hook it runs with console.log, beside the stream-json lines (0.25.9)."""
    hook_log = [
        "\x1b[90m[hook:PostToolUse] jq -nc --arg m 'x' '{...}' # tackroom:hook ctx\x1b[0m",
        "\x1b[90m  ⎿ \x1b[32mexit 0\x1b[0m (4ms)\x1b[0m",
        "\x1b[90m  ⎿ (stdout)\x1b[0m",
        '\x1b[90m    {"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"x"}}\x1b[0m',
        '    {"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"x"}}',
    ]
    result = line("result", subtype="success", result="MOCK")
    events = parse([chunk("MOCK"), *hook_log, result])
    assert [e.text for e in events if isinstance(e, AssistantText)] == ["MOCK"]
    assert events[-1] == Finished(result, final_text="MOCK", ok=True)
