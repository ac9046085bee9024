"""Copilot CLI's session logs: duplicates, resumes, subagents, bad lines (beyond the golden files)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tackroom.families import get_family
from tackroom.families.copilot.transcripts import CopilotTranscripts
from tackroom.mock.script import Script, Turn
from tackroom.trace.events import ErrorEvent, Record, SessionStarted
from tackroom.trace.model import Cursor, SessionMeta, TraceEvent, TraceIssue, TraceItem
from tracekit import usage_reports

GOLDEN = Path(__file__).parent / "golden" / "copilot" / "transcripts"
RESUMED = GOLDEN / "resume-1.0.102" / "files" / "a9e99349-168c-4954-9d67-0923d274acd7" / "events.jsonl"
SESSION = "0000-session"


def _line(kind: str, data: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"type": kind, "data": data, "id": f"id-{kind}", "timestamp": "2026-12-02T10:00:00.000Z", **top}


def _usage_record(sequence: int, prompt: Any = 100, **top: Any) -> dict[str, Any]:
    usage = {
        "model": "gpt-5",
        "inputTokens": prompt,
        "outputTokens": 7,
        "cacheReadTokens": 40,
        "cacheWriteTokens": 0,
        "reasoningTokens": 3,
        "accounting": {"sourceSessionId": SESSION, "sequence": sequence, "usageId": "u"},
    }
    return _line("session.usage_record", {"usage": usage}, **top)


def _write(tmp_path: Path, *lines: dict[str, Any] | str) -> Path:
    path = tmp_path / SESSION / "events.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    path.write_text(text, encoding="utf-8")
    return path


def _read(path: Path, cursor: Cursor | None = None, usage_only: bool = False) -> list[TraceItem]:
    return list(CopilotTranscripts().read(path, cursor or Cursor(), usage_only=usage_only))


def test_the_family_has_this_reader() -> None:
    assert isinstance(get_family("copilot").transcripts(), CopilotTranscripts)


def test_a_call_written_twice_has_one_key(tmp_path: Path) -> None:
    path = _write(
        tmp_path, _line("session.start", {"sessionId": SESSION}), _usage_record(1), _usage_record(1)
    )
    first, second = usage_reports(_read(path))
    assert first.key == second.key == f"{SESSION}:1"
    assert first.event.usage.to_json() == {  # type: ignore[attr-defined]
        "input": 60,  # the prompt includes its cached part
        "output": 7,
        "cache_read": 40,
        "cache_write": "not_reported",  # 0 on a wire without the figure
        "reasoning": 3,
    }
    assert first.model == "gpt-5"


def test_a_record_without_accounting_is_keyed_by_its_line_id(tmp_path: Path) -> None:
    record = _usage_record(1)
    del record["data"]["usage"]["accounting"]
    path = _write(tmp_path, record)
    [usage] = usage_reports(_read(path))
    assert usage.key == "id-session.usage_record"
    assert usage.session_id == SESSION  # no session.start: the directory names it


def test_the_shutdown_totals_are_never_usage() -> None:
    items = _read(RESUMED)
    assert sum(u.event.usage.output or 0 for u in usage_reports(items)) == 20 + 21 + 22  # type: ignore[attr-defined]
    shutdowns = [i for i in items if isinstance(i, TraceEvent) and i.event.kind == "record"]
    assert any(json.loads(i.event.raw)["type"] == "session.shutdown" for i in shutdowns)


def test_a_resume_read_on_from_the_cursor_yields_only_the_new_call(tmp_path: Path) -> None:
    lines = RESUMED.read_bytes().splitlines(keepends=True)
    path = tmp_path / SESSION / "events.jsonl"
    path.parent.mkdir()
    path.write_bytes(b"".join(lines[:14]))
    cursor = Cursor()
    first = usage_reports(_read(path, cursor))
    with path.open("ab") as handle:
        handle.write(b"".join(lines[14:]))
    later = _read(path, cursor)
    assert [u.key for u in first] == [f"a9e99349-168c-4954-9d67-0923d274acd7:{n}" for n in (1, 2)]
    assert [u.key for u in usage_reports(later)] == ["a9e99349-168c-4954-9d67-0923d274acd7:3"]
    started = [i for i in later if isinstance(i, TraceEvent) and isinstance(i.event, SessionStarted)]
    assert [s.session_id for s in started] == ["a9e99349-168c-4954-9d67-0923d274acd7"]


def test_a_subagent_named_in_an_earlier_read_keeps_its_name(tmp_path: Path) -> None:
    started = _line("subagent.started", {"agentName": "helper"}, agentId="A1")
    path = _write(tmp_path, _line("session.start", {"sessionId": SESSION}), started)
    cursor = Cursor()
    _read(path, cursor)
    with path.open("a") as handle:
        handle.write(json.dumps(_usage_record(1, agentId="A1")) + "\n")
    later = _read(path, cursor)
    [usage] = usage_reports(later)
    assert usage.session_id == "agent-A1"
    [meta] = [i for i in later if isinstance(i, SessionMeta)]
    assert (meta.parent_id, meta.agent) == (SESSION, "helper")


def test_errors_bad_lines_wrong_types_and_unknown_types(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        _line("session.start", {"sessionId": SESSION}),
        _line("session.error", {"errorType": "rate_limit", "message": "Too many requests"}),
        _usage_record(2, prompt="100"),
        _line("hook.start", {"hookType": "preToolUse"}),
        _line("assistant.message", {"content": 5, "toolRequests": "no"}),
        {"type": 3, "data": []},
        "{truncated",
        _line("session.warp_drive", {"x": 1}),
    )
    items = _read(path)
    events = [i.event for i in items if isinstance(i, TraceEvent)]
    [error] = [e for e in events if isinstance(e, ErrorEvent)]
    assert error.message == "Too many requests"
    [usage] = usage_reports(items)
    assert usage.event.usage.state("input") == "unknown"  # type: ignore[attr-defined]
    assert usage.event.usage.output == 7  # type: ignore[attr-defined]
    records = [e.record_type for e in events if isinstance(e, Record)]
    assert "hook.start" in records and "session.warp_drive" in records and None in records
    assert [(i.line, i.path) for i in items if isinstance(i, TraceIssue)] == [(7, path)]


def test_a_truncated_last_line_waits_for_the_rest(tmp_path: Path) -> None:
    path = _write(tmp_path, _line("session.start", {"sessionId": SESSION}))
    whole = json.dumps(_usage_record(1))
    with path.open("a") as handle:
        handle.write(whole[:50])
    cursor = Cursor()
    assert usage_reports(_read(path, cursor)) == []
    with path.open("a") as handle:
        handle.write(whole[50:] + "\n")
    assert [u.key for u in usage_reports(_read(path, cursor))] == [f"{SESSION}:1"]


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=400), st.integers(min_value=0, max_value=60000))
def test_random_bytes_never_crash_and_the_fast_path_agrees(
    tmp_path_factory: Any, junk: bytes, cut: int
) -> None:
    path = tmp_path_factory.mktemp("copilot") / SESSION / "events.jsonl"
    path.parent.mkdir()
    data = RESUMED.read_bytes()
    path.write_bytes(data[:cut] + junk + b"\n" + data[cut:])
    full = _read(path)
    assert all(isinstance(i, TraceEvent | SessionMeta | TraceIssue) for i in full)

    def keyed(items: list[TraceItem]) -> list[Any]:
        return [(u.session_id, u.key, u.event.to_json()) for u in usage_reports(items)]

    assert keyed(_read(path, usage_only=True)) == keyed(full)


def _installed(harness: str) -> str:
    """The data dir where the real harness is installed (as tests/real has it), else the test is skipped."""
    root = Path(__file__).resolve().parents[1]
    data = os.environ.get("TACKROOM_TEST_DATA") or str(root / ".cache" / "tackroom-test")
    if not (Path(data) / "tackroom" / "harnesses" / harness).is_dir():
        pytest.skip(f"{harness} is not installed under {data}")
    return data


@pytest.mark.real
def test_the_real_harness_log_holds_the_usage_its_run_reported(tmp_path: Path) -> None:
    data = _installed("copilot")
    from tackroom.run.runner import run

    workdir = tmp_path / "work"
    workdir.mkdir()
    script = Script([Turn.call("shell", {"command": "echo hi > out.txt"}), Turn.reply("DONE")])
    environ = {**os.environ, "XDG_DATA_HOME": data}
    result = run(
        "copilot",
        "run the shell",
        workdir=workdir,
        mock=script,
        options={"auto_accept": True},
        runs_dir=tmp_path / "runs",
        environ=environ,
        timeout_s=120,
    )
    assert result.ok, result.error
    log = result.run_dir / "home" / ".copilot" / "session-state" / str(result.session_id) / "events.jsonl"
    items = _read(log)
    usage = [u.event.usage for u in usage_reports(items)]  # type: ignore[attr-defined]
    assert len(usage) == 2
    total = usage[0] + usage[1]
    for figure in ("input", "output", "cache_read", "reasoning"):
        assert total.state(figure) == result.usage.state(figure), figure
    assert [m.title for m in items if isinstance(m, SessionMeta)] == ["run the shell"]
