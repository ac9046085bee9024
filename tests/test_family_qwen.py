"""The qwen family: Claude's stream-json with OpenAI usage and exit-0 model failures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tackroom.adapters.resolve import resolve_builtins
from tackroom.families import get_family
from tackroom.families.qwen.stream import QwenStreamParser, is_api_error, qwen_usage
from tackroom.probe.doctor import declared_capabilities
from tackroom.profile.model import Hook, Profile
from tackroom.profile.render import import_native, plan_render, write
from tackroom.run.result import summarize
from tackroom.trace.events import AssistantText, ErrorEvent, Event, Finished, ToolCall, Usage, UsageReport

SESSION = "0b7c-qwen"


def assistant(*content: dict[str, Any], usage: dict[str, Any] | None = None) -> str:
    message = {"role": "assistant", "content": list(content), "usage": usage or {}}
    return json.dumps({"type": "assistant", "session_id": SESSION, "message": message})


def result(text: str, usage: dict[str, Any] | None = None, **extra: Any) -> str:
    data = {"type": "result", "subtype": "success", "is_error": False, "result": text, "usage": usage or {}}
    return json.dumps({**data, **extra})


def parse(*lines: str) -> list[Event]:
    parser = QwenStreamParser()
    events = [event for item in lines for event in parser.feed(item)]
    return events + parser.close(0)


def usages(events: list[Event], scope: str) -> list[Usage]:
    return [e.usage for e in events if isinstance(e, UsageReport) and e.scope == scope]


def test_usage_counts_the_prompt_with_its_cached_tokens_so_input_is_the_difference() -> None:
    wire = {"input_tokens": 321, "output_tokens": 54, "cache_read_input_tokens": 21, "total_tokens": 375}
    assert qwen_usage(wire) == Usage(input=300, output=54, cache_read=21)


def test_a_prompt_smaller_than_its_cached_part_is_unknown_never_negative() -> None:
    usage = qwen_usage({"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 40})
    assert usage.input is None and usage.to_json()["input"] == "unknown"
    assert (usage.output, usage.cache_read) == (5, 40)


def test_without_a_cache_figure_the_prompt_is_all_input_and_cache_stays_unreported() -> None:
    assert qwen_usage({"input_tokens": 50, "output_tokens": 5}) == Usage(input=50, output=5)
    assert qwen_usage("n/a") == Usage()


def test_replies_report_per_call_usage_and_the_result_the_total() -> None:
    call = {"input_tokens": 100, "output_tokens": 10, "cache_read_input_tokens": 40}
    total = {"input_tokens": 200, "output_tokens": 20, "cache_read_input_tokens": 80}
    events = parse(assistant({"type": "text", "text": "hi"}, usage=call), result("hi", total))
    assert usages(events, "turn") == [Usage(input=60, output=10, cache_read=40)]
    assert usages(events, "total") == [Usage(input=120, output=20, cache_read=80)]
    assert summarize(events).usage == Usage(input=120, output=20, cache_read=80)
    assert isinstance(events[-1], Finished) and (events[-1].final_text, events[-1].ok) == ("hi", True)


def test_an_api_error_behind_exit_0_and_subtype_success_fails_the_run() -> None:
    text = "[API Error: Connection error. (cause: fetch failed)]"
    zero = {"input_tokens": 0, "output_tokens": 0}
    events = parse(
        assistant({"type": "text", "text": text}, usage=zero),
        result(text, {**zero, "cache_read_input_tokens": 0}),
    )
    assert not [e for e in events if isinstance(e, AssistantText | UsageReport)]
    errors = [(e.message, e.fatal) for e in events if isinstance(e, ErrorEvent)]
    assert errors == [(text, False), (text, True)]
    summary = summarize(events)
    assert summary.model_failed and summary.error == text and summary.final_text is None
    # qwen's 0/0 belongs to no reply: nothing was reported, so nothing is claimed.
    assert not summary.usage.reported


def test_a_failure_after_a_good_call_keeps_the_good_calls_usage() -> None:
    call = {"input_tokens": 100, "output_tokens": 10, "cache_read_input_tokens": 40}
    tool = {"type": "tool_use", "id": "c1", "name": "run_shell_command", "input": {"command": "ls"}}
    error = "[API Error: 400 bad request]"
    events = parse(
        assistant(tool, usage=call), assistant({"type": "text", "text": error}), result(error, call)
    )
    assert [e.name for e in events if isinstance(e, ToolCall)] == ["run_shell_command"]
    summary = summarize(events)
    assert summary.model_failed and summary.usage == Usage(input=60, output=10, cache_read=40)


def test_a_reply_that_merely_mentions_an_api_error_is_text() -> None:
    reply = "The log says [API Error: 500] twice."
    events = parse(assistant({"type": "text", "text": reply}), result(reply))
    assert not summarize(events).model_failed
    assert summarize(events).final_text == reply


@pytest.mark.parametrize(
    ("text", "expected"), [("  [API Error: x]", True), ("API Error", False), (None, False)]
)
def test_is_api_error(text: Any, expected: bool) -> None:
    assert is_api_error(text) is expected


def test_qwens_own_error_results_still_fail_as_claudes_do() -> None:
    events = parse(result("", subtype="error_max_turns", is_error=True))
    assert summarize(events).model_failed


def test_the_family_claims_exactly_the_figures_qwen_reports() -> None:
    family = get_family("qwen")
    assert family.verified
    assert family.reports_usage == {"input", "output", "cache_read"}


def error_result(message: str, usage: dict[str, Any], subtype: str = "error_during_execution") -> str:
    """A result line as 0.24.4 writes a failed run: exit 1, is_error, no result text, an error object."""
    data = {"type": "result", "subtype": subtype, "is_error": True, "usage": usage, "num_turns": 1}
    return json.dumps({**data, "error": {"message": message}})


def test_an_api_error_in_the_result_error_object_fails_with_its_text_and_claims_no_usage() -> None:
    """0.24.4: a model failure is ``error_during_execution`` with the text in ``error.message``."""
    text = "[API Error: 400 TACKROOM-INJECTED-ERROR]"
    zero = {"input_tokens": 0, "output_tokens": 0}
    events = parse(
        assistant({"type": "text", "text": text}, usage=zero),
        error_result(text, {**zero, "cache_read_input_tokens": 0}),
    )
    errors = [(e.message, e.fatal) for e in events if isinstance(e, ErrorEvent)]
    assert errors == [(text, False), (text, True)]
    summary = summarize(events)
    assert summary.model_failed and summary.error == text and summary.final_text is None
    # As with 0.15.10's exit-0 failure: qwen's 0/0 belongs to no reply, so nothing is claimed.
    assert not summary.usage.reported


def test_a_failed_result_names_its_error_message_rather_than_its_subtype() -> None:
    events = parse(error_result("Reached the session turn limit", {}, subtype="error_max_turns"))
    summary = summarize(events)
    assert summary.model_failed and summary.error == "Reached the session turn limit"


def test_a_late_api_error_in_the_error_object_keeps_the_good_calls_usage() -> None:
    call = {"input_tokens": 100, "output_tokens": 10, "cache_read_input_tokens": 40}
    tool = {"type": "tool_use", "id": "c1", "name": "run_shell_command", "input": {"command": "ls"}}
    error = "[API Error: 400 bad request]"
    events = parse(assistant(tool, usage=call), error_result(error, call))
    summary = summarize(events)
    assert summary.model_failed and summary.usage == Usage(input=60, output=10, cache_read=40)


def test_session_start_is_hooked_from_0_24_4_on(tmp_path: Path) -> None:
    """0.24.4 fires SessionStart headless (a probe proved it); 0.15.10 only interactively. One adapter
    says both through its since entry, and a session-start hook is dropped by name on 0.15.10."""
    qwen = resolve_builtins()["qwen"]
    assert qwen.since_versions == ("0.24.4",)
    hook = Hook("note", "session-start", "command", command="date >> s.log")
    for version, written in (("0.24.4", True), ("0.15.10", False), ("0.30.0", True)):
        adapter = qwen.at(version)
        assert ("session-start" in adapter.spec.capabilities.hooks.events) is written  # type: ignore[union-attr]
        root = tmp_path / version
        rendered = write(plan_render(Profile(hooks=(hook,)), adapter, root=root))
        if written:
            settings = json.loads((root / ".qwen/settings.json").read_text(encoding="utf-8"))
            assert list(settings["hooks"]) == ["SessionStart"]
            assert import_native(adapter, root=root).profile.hooks == (hook,)
        else:
            assert [(d.name, d.reason) for d in rendered.drops] == [("note", "session-start unsupported")]
    assert "hooks.session-start.fire" in declared_capabilities(qwen.at("0.24.4"))
    assert "hooks.session-start.fire" not in declared_capabilities(qwen.at("0.15.10"))
