"""OpenHands' conversations: what the golden files do not show (usage per call, bad files, totals)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tackroom.adapters.resolve import load_adapters
from tackroom.families import get_family
from tackroom.families.openhands.stream import state_usage
from tackroom.families.openhands.transcripts import OpenHandsTranscripts, usage_of
from tackroom.trace.model import Cursor, TraceEvent, TraceIssue, TraceItem
from tracekit import usage_reports

GOLDEN = Path(__file__).parent / "golden" / "openhands" / "transcripts"
CONVERSATION = "0123456789abcdef0123456789abcdef"


def _call(response: str, prompt: Any = 321, **more: Any) -> dict[str, Any]:
    figures = {
        "prompt_tokens": prompt,
        "completion_tokens": 45,
        "cache_read_tokens": 67,
        "cache_write_tokens": 0,
    }
    return {"model": "openai/m", **figures, "reasoning_tokens": 0, "response_id": response, **more}


def _conversation(tmp_path: Path, calls: list[dict[str, Any]], *events: dict[str, Any] | str) -> Path:
    folder = tmp_path / CONVERSATION
    (folder / "events").mkdir(parents=True, exist_ok=True)
    state = {
        "id": "01234567-89ab-cdef-0123-456789abcdef",
        "agent": {"llm": {"model": "openai/m"}},
        "workspace": {"working_dir": "/w"},
        "stats": {"usage_to_metrics": {"agent": {"model_name": "openai/m", "token_usages": calls}}},
    }
    (folder / "base_state.json").write_text(json.dumps(state))
    for n, event in enumerate(events):
        text = event if isinstance(event, str) else json.dumps(event)
        (folder / "events" / f"event-{n:05d}-{n}.json").write_text(text)
    return folder / "base_state.json"


def _read(path: Path, usage_only: bool = False) -> list[TraceItem]:
    return list(OpenHandsTranscripts().read(path, Cursor(), usage_only=usage_only))


def test_the_family_and_adapter_have_this_reader() -> None:
    assert isinstance(get_family("openhands").transcripts(), OpenHandsTranscripts)
    spec = load_adapters()["openhands"].spec.transcripts
    assert spec is not None and spec.glob == "*/base_state.json"


def test_the_calls_add_up_to_the_total_the_family_reads_after_a_run() -> None:
    """The recording's two calls, read per call, sum to the running total after_exit reports."""
    (state,) = GOLDEN.glob("openhands-1.16.0-shell/files/*/base_state.json")
    calls = [u.event.usage for u in usage_reports(_read(state))]  # type: ignore[attr-defined]
    assert [c.to_json() for c in calls] == [  # the mock sent 321 in (67 cached), 45 out; 500 (100), 20, 5
        {"input": 254, "output": 45, "cache_read": 67, "cache_write": "not_reported", "reasoning": 0},
        {"input": 400, "output": 20, "cache_read": 100, "cache_write": "not_reported", "reasoning": 5},
    ]
    total = state_usage(json.loads(state.read_text()))
    for name in ("input", "output", "cache_read", "reasoning"):
        assert sum(getattr(c, name) for c in calls) == getattr(total, name), name


def test_figures_that_are_not_counts_are_unknown() -> None:
    usage = usage_of(
        {"prompt_tokens": 10, "cache_read_tokens": "3", "completion_tokens": 2.0, "cache_write_tokens": 4}
    )
    assert usage.to_json() == {
        "input": "unknown",  # the prompt less a cache read that is not a count
        "output": "unknown",
        "cache_read": "unknown",
        "cache_write": 4,
        "reasoning": "not_reported",
    }
    assert not usage_of("junk").reported


def test_a_call_takes_the_time_of_the_first_event_it_produced(tmp_path: Path) -> None:
    action = {
        "timestamp": "2026-12-02T10:00:01",
        "source": "agent",
        "kind": "ActionEvent",
        "llm_response_id": "r1",
    }
    later = {**action, "timestamp": "2026-12-02T10:00:02"}
    state = _conversation(tmp_path, [_call("r1"), _call("r-unseen")], action, later)
    assert [(u.key, u.timestamp) for u in usage_reports(_read(state))] == [
        ("r1", "2026-12-02T10:00:01"),
        ("r-unseen", None),
    ]
    assert usage_reports(_read(state, usage_only=True)) == usage_reports(_read(state))


def test_a_state_caught_mid_write_is_an_issue_and_nothing_else(tmp_path: Path) -> None:
    message = {"timestamp": "t", "source": "user", "kind": "MessageEvent", "llm_message": {"content": "hi"}}
    state = _conversation(tmp_path, [_call("r1")], message)
    whole = state.read_bytes()
    state.write_bytes(whole[: len(whole) // 2])
    items = _read(state)
    assert [type(i) for i in items] == [TraceIssue]
    state.write_bytes(whole)
    assert [i.event.kind for i in _read(state) if isinstance(i, TraceEvent)] == [
        "session_started",
        "user_text",
        "usage",
    ]


def test_bad_event_files_are_issues_and_the_rest_is_read(tmp_path: Path) -> None:
    message = {
        "timestamp": "t",
        "source": "agent",
        "kind": "MessageEvent",
        "llm_message": {"content": [{"type": "text", "text": "TRACED"}]},
    }
    state = _conversation(
        tmp_path,
        [{k: v for k, v in _call("r1").items() if k != "prompt_tokens"}, _call("r2", cache_read_tokens=None)],
        "[1]",
        {"kind": "ActionEvent", "tool_call": {"arguments": 5}, "thought": "x"},
        {"kind": "ObservationEvent", "observation": []},
        message,
    )
    (state.parent / "events" / "event-00009-link.json").symlink_to("/etc/passwd")
    items = _read(state)
    assert [(i.line, i.message) for i in items if isinstance(i, TraceIssue)] == [
        (1, "events/event-00000-0.json: not a JSON object"),
        (10, "events/event-00009-link.json: cannot be read (Too many levels of symbolic links)"),
    ]
    kinds = [i.event.kind for i in items if isinstance(i, TraceEvent)]
    assert kinds[-3:] == ["assistant_text", "usage", "usage"]
    first, second = (u.event.usage for u in usage_reports(items))  # type: ignore[attr-defined]
    assert first.input is None and "input" not in first.unknown  # no prompt figure: not reported
    assert second.to_json()["input"] == second.to_json()["cache_read"] == "unknown"  # null is not a count


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_events_folder_that_cannot_be_listed_is_an_issue(tmp_path: Path) -> None:
    state = _conversation(tmp_path, [_call("r1")])
    (state.parent / "events").chmod(0)
    try:
        items = _read(state)
    finally:
        (state.parent / "events").chmod(0o755)
    assert [i.message.partition(":")[0] for i in items if isinstance(i, TraceIssue)] == ["events/"]
    assert len(usage_reports(items)) == 1
