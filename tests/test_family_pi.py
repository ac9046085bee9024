"""The pi family (pi and omp): ``--mode json`` events, exit-0 failures, retries, and usage."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tackroom.adapters.resolve import resolve_builtins
from tackroom.families import get_family
from tackroom.families.pi.stream import PiStreamParser, pi_usage
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

ZERO = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}
USED = {"input": 300, "output": 54, "cacheRead": 21, "cacheWrite": 0, "totalTokens": 375}


def line(kind: str, **fields: Any) -> str:
    return json.dumps({"type": kind, **fields})


def assistant(*content: dict[str, Any], usage: dict[str, Any] | None = None, **extra: Any) -> str:
    message = {"role": "assistant", "content": list(content), "usage": usage or ZERO, "stopReason": "stop"}
    return line("message_end", message={**message, **extra})


def failed(error: str, reason: str = "error") -> str:
    return assistant(usage=ZERO, stopReason=reason, errorMessage=error)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def parse(*lines: str) -> list[Event]:
    parser = PiStreamParser()
    events = [event for item in lines for event in parser.feed(item)]
    return events + parser.close(0)


def of(events: list[Event], kind: type[Event]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def test_usage_passes_through_because_pi_already_subtracts_cached_tokens() -> None:
    assert pi_usage(USED) == Usage(input=300, output=54, cache_read=21)


def test_the_all_zero_placeholder_of_a_call_that_never_answered_is_not_reported() -> None:
    assert pi_usage(ZERO) == Usage()
    assert not pi_usage(ZERO).reported
    assert pi_usage(None) == Usage()


def test_cache_write_is_reported_only_when_positive_and_reasoning_never() -> None:
    # pi and omp default cacheWrite to 0 when the wire has no such figure; omp adds
    # reasoningTokens, which pi 0.73.1 lacks, and one family serves both.
    usage = pi_usage({**USED, "cacheWrite": 5, "reasoningTokens": 3})
    assert usage == Usage(input=300, output=54, cache_read=21, cache_write=5)


def test_a_text_reply_is_text_turn_usage_and_a_successful_finish() -> None:
    events = parse(
        line("session", version=3, id="s-1", cwd="/w"),
        line("agent_start"),
        assistant(text("hel"), text("lo"), usage=USED),
        line("agent_end", messages=[]),
    )
    assert of(events, SessionStarted)[0].session_id == "s-1"
    assert [e.text for e in of(events, AssistantText)] == ["hel", "lo"]
    assert [e.usage for e in of(events, UsageReport)] == [Usage(input=300, output=54, cache_read=21)]
    assert events[-1] == Finished(events[-1].raw, final_text="hello", ok=True)


def test_tool_calls_and_results_pair_by_id_and_errors_are_flagged() -> None:
    call = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls", "i": "look"}}
    result = {"role": "toolResult", "toolCallId": "c1", "content": [text("blocked")], "isError": True}
    events = parse(assistant(call, usage=USED), line("message_end", message=result))
    assert of(events, ToolCall) == [
        ToolCall(events[0].raw, name="bash", call_id="c1", input={"command": "ls", "i": "look"})
    ]
    assert of(events, ToolResult)[0].call_id == "c1"
    assert of(events, ToolResult)[0].output == "blocked"
    assert of(events, ToolResult)[0].is_error


def test_user_messages_deltas_and_non_json_lines_yield_nothing() -> None:
    user = line("message_end", message={"role": "user", "content": [text("hi")]})
    delta = line("message_update", assistantMessageEvent={"type": "text_delta", "delta": "x"})
    assert parse(user, delta, "Working...", "", line("advisor_cost_changed")) == []


def test_an_unretried_error_behind_exit_0_fails_the_run_when_the_stream_ends() -> None:
    parser = PiStreamParser()
    live = parser.feed(failed("400 bad request")) + parser.feed(line("agent_end", messages=[]))
    # Not final yet: pi may still announce a retry after agent_end.
    assert live == []
    end = parser.close(0)
    assert [type(e) for e in end] == [ErrorEvent, Finished]
    assert summarize(end).model_failed
    assert summarize(end).error == "400 bad request"


def test_a_retry_that_succeeds_leaves_a_non_fatal_error_and_a_good_run() -> None:
    events = parse(
        failed("Connection error."),
        line("agent_end", messages=[]),
        line("auto_retry_start", attempt=1, maxAttempts=3, delayMs=2000, errorMessage="Connection error."),
        assistant(text("ok"), usage=USED),
        line("auto_retry_end", success=True, attempt=1),
        line("agent_end", messages=[]),
    )
    errors = of(events, ErrorEvent)
    assert [(e.message, e.fatal) for e in errors] == [("Connection error. (retry 1 of 3)", False)]
    summary = summarize(events)
    assert not summary.model_failed
    assert summary.final_text == "ok"


def test_exhausted_retries_fail_at_once_and_close_adds_nothing() -> None:
    parser = PiStreamParser()
    for item in (failed("Connection error."), line("agent_end", messages=[])):
        parser.feed(item)
    final = parser.feed(line("auto_retry_end", success=False, attempt=3, finalError="Connection error."))
    assert [(type(e), getattr(e, "ok", None)) for e in final] == [(ErrorEvent, None), (Finished, False)]
    assert parser.close(0) == []


def test_a_stream_cut_off_while_retrying_ends_in_the_error_it_was_retrying() -> None:
    events = parse(
        failed("Connection error."),
        line("agent_end", messages=[]),
        line("auto_retry_start", attempt=3, maxAttempts=3, delayMs=8000, errorMessage="Connection error."),
    )
    fatal = [e for e in of(events, ErrorEvent) if e.fatal]
    assert [e.message for e in fatal] == ["Connection error."]
    assert events[-1] == Finished(events[-1].raw, final_text=None, ok=False)


def test_a_retry_cancelled_by_a_signal_names_the_error_it_was_retrying() -> None:
    # omp 18.2.3, stopped during its backoff: no agent_end between attempts.
    refused = "ECONNREFUSED: Unable to connect."
    events = parse(
        failed(refused),
        line("auto_retry_start", attempt=5, maxAttempts=10, delayMs=7101.8, errorMessage=refused),
        line("auto_retry_end", success=False, attempt=5, finalError="Retry cancelled"),
        line("agent_end", isTerminal=True),
    )
    assert summarize(events).error == f"{refused} (Retry cancelled)"
    assert [e.ok for e in of(events, Finished)] == [False]


def test_an_aborted_call_is_a_failure_with_its_message() -> None:
    events = parse(failed("Request was aborted", reason="aborted"))
    assert summarize(events).error == "Request was aborted"
    assert summarize(events).model_failed


def test_a_failure_without_a_message_names_its_stop_reason() -> None:
    events = parse(assistant(usage=ZERO, stopReason="error"), line("agent_end"))
    assert summarize(events).error == "model call ended with stopReason 'error'"


def test_omp_non_terminal_agent_end_does_not_finish_the_run() -> None:
    events = parse(
        assistant(text("first"), usage=USED),
        line("agent_end", isTerminal=False),
        assistant(text("second"), usage=USED),
        line("agent_end", isTerminal=True),
    )
    assert [e.final_text for e in of(events, Finished)] == ["second"]
    assert summarize(events).usage == Usage(input=600, output=108, cache_read=42)


@pytest.mark.parametrize("adapter", ["pi", "omp"])
def test_pi_and_omp_adapters_select_this_verified_family(adapter: str) -> None:
    family = get_family(resolve_builtins()[adapter].family)
    assert family.name == "pi" and family.verified
    assert family.reports_usage == {"input", "output", "cache_read"}
    assert isinstance(family.parser(), PiStreamParser)
