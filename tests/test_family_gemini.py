"""The gemini family's parser on the edges its golden streams do not reach."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tackroom.families import get_family
from tackroom.families.gemini.stream import GeminiStreamParser, gemini_usage, json_mode_error
from tackroom.run.result import summarize
from tackroom.trace.events import (
    AssistantText,
    ErrorEvent,
    Event,
    Finished,
    SessionStarted,
    ToolCall,
    Usage,
    UsageReport,
)

STATS = {"total_tokens": 378, "input_tokens": 321, "output_tokens": 54, "cached": 21, "input": 300}
API_ERROR = '{"error":{"code":400,"message":"TACKROOM-INJECTED-ERROR","status":"INVALID_ARGUMENT"}}'
# What 0.61.0 printed to stderr for a 400 with --output-format json (stack trace shortened).
JSON_MODE_STDERR = (
    "Ripgrep is not available. Falling back to GrepTool.\n"
    f"Error when talking to Gemini API Full report available at: <run>/tmp/x.json _ApiError: {API_ERROR}\n"
    "    at throwErrorIfNotOK (file:///bundle/chunk-JDPZ4CE3.js:267833:24)\n"
    "    at async Turn.run (file:///bundle/chunk-JDPZ4CE3.js:333001:24) {\n"
    "  status: 400\n"
    "}\n"
    "{\n"
    '  "session_id": "24d91c78-0d14-4fa6-987f-d69fb67882dd",\n'
    '  "error": {\n'
    '    "type": "Error",\n'
    f'    "message": {json.dumps(API_ERROR)},\n'
    '    "code": 400\n'
    "  }\n"
    "}\n"
)
# The same failure under --output-format stream-json: the error is on stdout, stderr has only the trace.
STREAM_MODE_STDERR = JSON_MODE_STDERR.split("}\n{", 1)[0] + "}\n"


def line(kind: str, **fields: Any) -> str:
    return json.dumps({"type": kind, "timestamp": "2026-11-29T16:45:43.400Z", **fields})


def delta(text: str) -> str:
    return line("message", role="assistant", content=text, delta=True)


def parse(lines: list[str], exit_code: int | None = 0) -> list[Event]:
    parser = GeminiStreamParser()
    events = [event for text in lines for event in parser.feed(text)]
    return events + parser.close(exit_code)


def plain(events: list[Event], kind: type[Event] = Event) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.to_json().items() if k != "raw"} for e in events if isinstance(e, kind)]


def test_cached_tokens_are_taken_out_of_the_input_count() -> None:
    assert gemini_usage(STATS) == Usage(input=300, output=54, cache_read=21)


def test_missing_or_malformed_stats_stay_unreported() -> None:
    assert gemini_usage(None) == Usage()
    assert gemini_usage({"input_tokens": 10, "output_tokens": "54", "cached": None}) == Usage(input=10)
    # A prompt smaller than its cached part contradicts itself: unknown, not a guess.
    assert gemini_usage({"input_tokens": 10, "cached": 11}) == Usage(
        cache_read=11, unknown=frozenset({"input"})
    )


def test_lines_that_are_not_gemini_events_are_ignored() -> None:
    events = parse(
        [
            "",
            "YOLO mode is enabled. All tool calls will be automatically approved.",
            "{broken",
            '"a string"',
            line("message", role="user", content="say the magic words"),
            line("message", role="assistant", content=7, delta=True),
            line("something_new", payload={}),
        ]
    )
    assert events == []


def test_delta_fragments_become_one_message_and_the_final_text() -> None:
    events = parse(
        [
            line("init", session_id="s-1", model="gemini-2.5-flash"),
            delta("TACKROOM-T"),
            delta("EXT-gemini"),
            line("result", status="success", stats=STATS),
        ]
    )
    assert events[0] == SessionStarted(events[0].raw, session_id="s-1", model="gemini-2.5-flash")
    (message,) = [e for e in events if isinstance(e, AssistantText)]
    assert message.text == "TACKROOM-TEXT-gemini" and message.raw.count("\n") == 1
    assert plain(events, UsageReport)[0]["scope"] == "total"
    assert plain(events, Finished) == [{"type": "finished", "final_text": "TACKROOM-TEXT-gemini", "ok": True}]


def test_a_tool_call_ends_the_message_before_it_and_the_last_message_is_final() -> None:
    tool_id = "run_shell_command__1"
    events = parse(
        [
            delta("I will "),
            delta("run it"),
            line("tool_use", tool_name="run_shell_command", tool_id=tool_id, parameters={"command": "true"}),
            line("tool_result", tool_id=tool_id, status="success", output=""),
            delta("DONE"),
            line("result", status="success", stats=STATS),
        ]
    )
    assert [type(e).__name__ for e in events] == [
        "AssistantText",
        "ToolCall",
        "ToolResult",
        "AssistantText",
        "UsageReport",
        "Finished",
    ]
    assert [e.text for e in events if isinstance(e, AssistantText)] == ["I will run it", "DONE"]
    call = events[1]
    assert isinstance(call, ToolCall) and call.name == "run_shell_command" and call.call_id == tool_id
    assert summarize(events).final_text == "DONE"


def test_a_whole_message_without_delta_is_taken_as_is() -> None:
    events = parse([delta("half"), line("message", role="assistant", content="whole")])
    assert [e.text for e in events if isinstance(e, AssistantText)] == ["half", "whole"]


def test_text_still_streaming_when_the_process_ends_is_kept() -> None:
    events = parse([delta("cut "), delta("off")], exit_code=-15)
    assert plain(events) == [{"type": "assistant_text", "text": "cut off"}]


def test_a_failed_tool_reports_its_error_message() -> None:
    events = parse(
        [line("tool_result", tool_id="t1", status="error", error={"type": "x", "message": "no such file"})]
    )
    assert plain(events) == [
        {"type": "tool_result", "call_id": "t1", "output": "no such file", "is_error": True}
    ]


def test_an_error_result_is_a_fatal_model_failure() -> None:
    message = f"[API Error: {API_ERROR}]"
    zero = dict.fromkeys(STATS, 0)
    events = parse(
        [line("result", status="error", error={"type": "unknown", "message": message}, stats=zero)],
        exit_code=144,
    )
    summary = summarize(events)
    assert summary.model_failed and summary.error == message
    assert plain(events, Finished) == [{"type": "finished", "final_text": None, "ok": False}]


def test_an_error_result_without_a_message_still_fails() -> None:
    summary = summarize(parse([line("result", status="cancelled")], exit_code=1))
    assert summary.model_failed and summary.error == "status cancelled"


@pytest.mark.parametrize(("severity", "fatal"), [("warning", False), ("error", True), (None, False)])
def test_error_lines_are_fatal_only_with_error_severity(severity: str | None, fatal: bool) -> None:
    events = parse([line("error", severity=severity, message="Loop detected, stopping execution")])
    assert plain(events, ErrorEvent) == [
        {"type": "error", "message": "Loop detected, stopping execution", "fatal": fatal}
    ]


def test_the_json_mode_error_object_on_stderr_is_a_fatal_error() -> None:
    found = get_family("gemini").stderr_error(JSON_MODE_STDERR)
    assert found is not None and found.fatal and found.message == API_ERROR
    assert json.loads(found.raw)["session_id"] == "24d91c78-0d14-4fa6-987f-d69fb67882dd"


@pytest.mark.parametrize(
    "stderr",
    [
        STREAM_MODE_STDERR,
        "",
        "{\n  unterminated",
        '{"session_id": "s", "response": "fine"}\n',
        '{"error": "just a string"}\n',
    ],
)
def test_stderr_without_the_error_object_adds_nothing(stderr: str) -> None:
    assert json_mode_error(stderr) is None


def test_the_family_is_verified_and_says_which_figures_it_reports() -> None:
    family = get_family("gemini")
    assert family.verified and "0.61.0" in (family.__doc__ or "")
    assert family.reports_usage == {"input", "output", "cache_read"}
    assert family.parser() is not family.parser()
