"""The gptme family's edge cases: tool calls written into the text, errors on stderr, garbage."""

from __future__ import annotations

import json

from tackroom.families import get_family
from tackroom.families.gptme.stream import GptmeStreamParser
from tackroom.run.result import summarize
from tackroom.trace.events import Event, ToolCall, ToolResult


def message(role: str, content: object, **extra: object) -> str:
    return json.dumps({"type": "message", "role": role, "content": content, **extra})


def parse(lines: list[str], exit_code: int = 0) -> list[Event]:
    parser = GptmeStreamParser()
    events = [event for line in lines for event in parser.feed(line)]
    return events + parser.close(exit_code)


def test_a_tool_call_its_result_and_the_answer() -> None:
    usage = {
        "usage": {"input_tokens": 300, "output_tokens": 54, "cache_read_tokens": 21, "reasoning_tokens": 3}
    }
    lines = [
        message("user", "go"),
        message("assistant", '\n@shell(call_1): {"command": "ls"}', metadata=usage),
        message("system", "Ran command", call_id="call_1", metadata={"tool": "shell"}),
        message("assistant", "@save(c2): not json"),
        message("assistant", "DONE", metadata=usage),
        message("user", "/exit"),
    ]
    events = parse(lines)
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert [(c.name, c.call_id, c.input) for c in calls] == [
        ("shell", "call_1", {"command": "ls"}),
        ("save", "c2", "not json"),
    ]
    assert [e.call_id for e in events if isinstance(e, ToolResult)] == ["call_1"]
    summary = summarize(events)
    assert summary.final_text == "DONE" and not summary.model_failed
    assert summary.usage.to_json() == {
        "input": 600,
        "output": 108,
        "cache_read": 42,
        "cache_write": "not_reported",
        "reasoning": 6,
    }


def test_a_model_error_on_stderr_fails_the_run() -> None:
    stderr = "· ERROR    Error code: 400 - {'error': {'message': 'BO  \n           OM'}}\nTraceback\n"
    found = get_family("gptme").stderr_error(stderr)
    assert found is not None and found.fatal
    assert found.message == "the model API answered 400: {'error': {'message': 'BOOM'}}"
    assert get_family("gptme").stderr_error("WARNING Failed to load tiktoken encoding") is None
    assert summarize(parse([message("user", "go")], exit_code=1)).model_failed


def test_garbage_is_ignored() -> None:
    lines = [
        "",
        "text",
        "[]",
        '{"type": "message", "role": "assistant", "content": 5}',
        "{" * 200 + "}" * 200,
    ]
    lines.append(message("assistant", "ok", metadata={"usage": "none"}))
    summary = summarize(parse(lines))
    assert summary.final_text == "ok" and summary.usage.to_json()["input"] == "not_reported"
