"""The kimi family's edge cases: wrapped errors, content parts, garbage, and its session log."""

from __future__ import annotations

import json
from pathlib import Path

from tackroom.families import get_family
from tackroom.families.kimi.stream import MAX_LOG_LINE, KimiStreamParser
from tackroom.run.result import summarize
from tackroom.trace.events import ErrorEvent, Event, SessionStarted, ToolCall, ToolResult, UsageReport

SESSION = "a8db81da-7306-45fc-a149-0a471bcada5a"


def parse(lines: list[str], exit_code: int = 0) -> list[Event]:
    parser = KimiStreamParser()
    events = [event for line in lines for event in parser.feed(line)]
    return events + parser.close(exit_code)


def test_a_wrapped_model_error_is_one_fatal_error_whatever_the_exit_code() -> None:
    lines = ["Error code: 400 - {'error': {'message': 'BOOM', 'type': 'inva", "lid_request_error'}}", ""]
    for code in (0, 1):
        summary = summarize(parse(lines, code))
        assert summary.model_failed and summary.error == (
            "Error code: 400 - {'error': {'message': 'BOOM', 'type': 'invalid_request_error'}}"
        )


def test_text_parts_tool_calls_and_results() -> None:
    call = {"type": "function", "id": "c1", "function": {"name": "Shell", "arguments": '{"command": "ls"}'}}
    lines = [
        json.dumps({"role": "assistant", "content": [], "tool_calls": [call, "junk", {"function": 3}]}),
        json.dumps({"role": "tool", "content": "out", "tool_call_id": "c1"}),
        json.dumps(
            {"role": "assistant", "content": [{"type": "text", "text": "DO"}, {"type": "text", "text": "NE"}]}
        ),
    ]
    events = parse(lines)
    assert [e.name for e in events if isinstance(e, ToolCall)] == ["Shell"]
    assert [e.output for e in events if isinstance(e, ToolResult)] == ["out"]
    summary = summarize(events)
    assert summary.final_text == "DONE" and not summary.model_failed


def test_garbage_and_a_killed_run() -> None:
    lines = ["", "not json", "[1]", '{"role": 5}', "{" * 100 + "}" * 100, "\ud800"]
    events = parse(lines, exit_code=-9)
    summary = summarize(events)
    assert summary.model_failed and summary.final_text is None


def wire(root: Path, session: str, lines: list[str]) -> Path:
    log = root / ".kimi" / "sessions" / ("0" * 32) / session / "wire.jsonl"
    log.parent.mkdir(parents=True)
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return log


def status(**usage: int) -> str:
    return json.dumps({"message": {"type": "StatusUpdate", "payload": {"token_usage": usage}}})


def test_usage_and_session_come_from_the_only_session_log(tmp_path: Path) -> None:
    family = get_family("kimi")
    wire(
        tmp_path,
        SESSION,
        [
            '{"type": "metadata"}',
            status(input_other=300, output=54, input_cache_read=21, input_cache_creation=0),
            "x" * (MAX_LOG_LINE + 10),
            "[" * 100 + "]" * 100,
            status(input_other=1, output=2, input_cache_read=3),
            json.dumps({"message": {"type": "StatusUpdate", "payload": {"token_usage": "no"}}}),
        ],
    )
    events = family.after_exit(tmp_path, {}, [])
    assert [e.session_id for e in events if isinstance(e, SessionStarted)] == [SESSION]
    summary = summarize(events)
    assert summary.usage.to_json() == {
        "input": 301,
        "output": 56,
        "cache_read": 24,
        "cache_write": "not_reported",
        "reasoning": "not_reported",
    }
    assert len([e for e in events if isinstance(e, UsageReport)]) == 2


def test_a_share_dir_of_many_sessions_is_not_guessed_at(tmp_path: Path) -> None:
    wire(tmp_path, SESSION, [status(input_other=1, output=1)])
    wire(tmp_path, "b" + SESSION[1:], [status(input_other=2, output=2)])
    assert get_family("kimi").after_exit(tmp_path, {}, []) == []


def test_kimi_share_dir_relocates_the_log(tmp_path: Path) -> None:
    wire(tmp_path / "elsewhere", "not-a-uuid", [status(input_other=7, output=1)])
    events = get_family("kimi").after_exit(
        tmp_path, {"KIMI_SHARE_DIR": str(tmp_path / "elsewhere" / ".kimi")}, []
    )
    # A directory name that is no session id is not reported as one; its usage still is.
    assert not any(isinstance(e, SessionStarted) for e in events)
    assert summarize(events).usage.input == 7
    assert not any(isinstance(e, ErrorEvent) and e.fatal for e in events)
