"""The copilot family: its JSONL stream, and the usage only its session log holds.

``tests/golden/copilot/<case>/session-events.jsonl`` is the session log the real
1.0.102 wrote during the recorded run (``$COPILOT_HOME/session-state/<id>/events.jsonl``,
paths scrubbed); the golden stream test does not read it, these tests do.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tackroom.families import get_family
from tackroom.families.copilot.stream import CopilotStreamParser, copilot_home, record_usage, tool_output
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

GOLDEN = Path(__file__).parent / "golden" / "copilot"
FAMILY = get_family("copilot")


def line(kind: str, **data: Any) -> str:
    return json.dumps({"type": kind, "data": data, "id": "x", "timestamp": "2026-01-01T00:00:00Z"})


def result(exit_code: int, session: str = "sess-1") -> str:
    return json.dumps({"type": "result", "sessionId": session, "exitCode": exit_code, "usage": {}})


def parse(*lines: str) -> list[Event]:
    parser = CopilotStreamParser()
    events = [event for item in lines for event in parser.feed(item)]
    return events + parser.close(0)


def stage(home: Path, *cases: str) -> Path:
    """A COPILOT_HOME holding the recorded session log of each case."""
    root = home / ".copilot"
    for number, case in enumerate(cases):
        target = root / "session-state" / f"session-{number}" / "events.jsonl"
        target.parent.mkdir(parents=True)
        shutil.copy(GOLDEN / f"copilot-{case}" / "session-events.jsonl", target)
    return root


def test_a_tool_request_and_its_completion_become_a_call_and_a_result() -> None:
    request = {"toolCallId": "c1", "name": "bash", "arguments": {"command": "ls"}, "type": "function"}
    complete = {"toolCallId": "c1", "success": True, "result": {"content": "a\nb", "detailedContent": "a\nb"}}
    events = parse(
        line("assistant.message", content="", toolRequests=[request], model="m"),
        line("tool.execution_complete", **complete),
    )
    assert events[:2] == [
        ToolCall(events[0].raw, name="bash", call_id="c1", input={"command": "ls"}),
        ToolResult(events[1].raw, call_id="c1", output="a\nb", is_error=False),
    ]
    assert not [e for e in events if isinstance(e, AssistantText)], "an empty content is no text"


def test_a_denied_tool_reports_the_error_message() -> None:
    error = {"message": "Permission denied", "code": "denied"}
    events = parse(line("tool.execution_complete", toolCallId="c2", success=False, error=error))
    assert events == [ToolResult(events[0].raw, call_id="c2", output="Permission denied", is_error=True)]


@pytest.mark.parametrize(
    ("data", "expected"),
    [({"result": {"content": "x"}}, "x"), ({"error": "plain"}, "plain"), ({}, None), ({"result": 3}, None)],
)
def test_tool_output_shapes(data: dict[str, Any], expected: str | None) -> None:
    assert tool_output(data) == expected


def test_the_session_id_arrives_with_the_result_and_the_last_reply_is_the_answer() -> None:
    events = parse(
        line("session.tools_updated", model="mock-model"),
        line("assistant.message", content="first", toolRequests=[]),
        line("assistant.message", content="second", toolRequests=[]),
        result(0, "sess-9"),
    )
    started = [e for e in events if isinstance(e, SessionStarted)]
    assert [(e.session_id, e.model) for e in started] == [("sess-9", "mock-model")]
    assert isinstance(events[-1], Finished) and events[-1].final_text == "second" and events[-1].ok


def test_a_session_start_on_stdout_is_not_announced_twice() -> None:
    events = parse(line("session.start", sessionId="sess-2", selectedModel="m2"), result(0, "sess-2"))
    assert [(e.session_id, e.model) for e in events if isinstance(e, SessionStarted)] == [("sess-2", "m2")]


def test_a_session_error_fails_the_run() -> None:
    events = parse(line("session.error", errorType="query", message="400 bad", statusCode=400), result(1))
    summary = summarize(events)
    assert summary.model_failed and summary.error == "400 bad"
    assert [e.fatal for e in events if isinstance(e, ErrorEvent)] == [True]


def test_a_non_zero_exit_code_in_the_result_is_not_ok() -> None:
    assert summarize(parse(result(2))).model_failed


def test_a_stream_without_a_result_claims_no_outcome() -> None:
    events = parse(line("assistant.message", content="partial", toolRequests=[]))
    assert not [e for e in events if isinstance(e, Finished)]


def test_usage_records_use_tackrooms_convention() -> None:
    record = {"inputTokens": 321, "outputTokens": 54, "cacheReadTokens": 21, "cacheWriteTokens": 0}
    assert record_usage({**record, "reasoningTokens": 3}) == Usage(300, 54, 21, None, 3)
    assert record_usage({**record, "cacheWriteTokens": 5}).cache_write == 5
    assert record_usage({"outputTokens": 7}) == Usage(output=7)
    assert record_usage(None) == Usage()


def test_a_prompt_smaller_than_its_cached_part_is_unknown_never_negative() -> None:
    usage = record_usage({"inputTokens": 10, "outputTokens": 5, "cacheReadTokens": 40})
    assert usage.input is None and usage.to_json()["input"] == "unknown"
    assert (usage.output, usage.cache_read) == (5, 40)


def test_a_session_id_that_would_leave_the_state_dir_is_not_followed(tmp_path: Path) -> None:
    root = stage(tmp_path, "usage")
    outside = tmp_path / "elsewhere" / "events.jsonl"
    outside.parent.mkdir()
    shutil.copy(GOLDEN / "copilot-usage" / "session-events.jsonl", outside)
    started = (SessionStarted(session_id="../../elsewhere"),)
    events = FAMILY.after_exit(tmp_path, {"COPILOT_HOME": str(root)}, started)
    assert not [e for e in events if isinstance(e, UsageReport)]
    assert [e.fatal for e in events if isinstance(e, ErrorEvent)] == [False]


def test_a_bad_byte_in_the_session_log_is_replaced_not_fatal(tmp_path: Path) -> None:
    root = stage(tmp_path, "usage")
    [log] = (root / "session-state").glob("*/events.jsonl")
    log.write_bytes(b"\xff\xfe garbage\n" + log.read_bytes() + b'\n{"type": "x", "data": "\xc3"}\n')
    events = FAMILY.after_exit(tmp_path, {"COPILOT_HOME": str(root)}, ())
    assert [e.usage for e in events if isinstance(e, UsageReport)] == [Usage(300, 54, 21, None, 3)]


def test_the_recorded_session_log_gives_the_mocks_figures_exactly(tmp_path: Path) -> None:
    root = stage(tmp_path, "usage")
    events = FAMILY.after_exit(tmp_path, {"COPILOT_HOME": str(root)}, ())
    assert [e.usage for e in events if isinstance(e, UsageReport)] == [Usage(300, 54, 21, None, 3)]


def test_stream_and_session_log_fold_into_the_runs_result(tmp_path: Path) -> None:
    root = stage(tmp_path, "shell")
    parser = FAMILY.parser()
    stream = (GOLDEN / "copilot-shell" / "stream.jsonl").read_text(encoding="utf-8").splitlines()
    events = [event for item in stream for event in parser.feed(item)] + parser.close(0)
    events += FAMILY.after_exit(tmp_path, {"COPILOT_HOME": str(root)}, ())
    summary = summarize(events)
    # Two calls of the mock's default figures: 1234 prompt with 78 cached, 56 out, 0 reasoning.
    assert summary.usage == Usage(input=2 * 1156, output=112, cache_read=156, cache_write=None, reasoning=0)
    assert summary.final_text == "DONE" and not summary.model_failed


def test_a_failed_call_records_no_usage(tmp_path: Path) -> None:
    root = stage(tmp_path, "error")
    assert FAMILY.after_exit(tmp_path, {"COPILOT_HOME": str(root)}, ()) == []


def test_copilot_home_defaults_to_dot_copilot_under_home(tmp_path: Path) -> None:
    stage(tmp_path, "usage")
    assert copilot_home(tmp_path, {}) == tmp_path / ".copilot"
    assert len(FAMILY.after_exit(tmp_path, {}, ())) == 1
    assert FAMILY.after_exit(None, {}, ()) == []


def test_a_state_dir_with_other_sessions_is_not_guessed_at(tmp_path: Path) -> None:
    root = stage(tmp_path, "usage", "shell")
    assert FAMILY.after_exit(tmp_path, {"COPILOT_HOME": str(root)}, ()) == []


def test_no_session_state_means_no_usage(tmp_path: Path) -> None:
    assert FAMILY.after_exit(tmp_path, {"COPILOT_HOME": str(tmp_path / "absent")}, ()) == []


def test_the_family_claims_exactly_the_figures_its_session_log_carries() -> None:
    assert FAMILY.verified
    assert FAMILY.reports_usage == {"input", "output", "cache_read", "reasoning"}


def test_the_streams_session_id_picks_its_own_log_among_others(tmp_path: Path) -> None:
    root = stage(tmp_path, "shell", "usage")
    started = (SessionStarted(session_id="session-1"),)
    events = FAMILY.after_exit(tmp_path, {"COPILOT_HOME": str(root)}, started)
    assert [e.usage for e in events if isinstance(e, UsageReport)] == [Usage(300, 54, 21, None, 3)]
    assert (
        FAMILY.after_exit(tmp_path, {"COPILOT_HOME": str(root)}, (SessionStarted(session_id="gone"),)) == []
    )
