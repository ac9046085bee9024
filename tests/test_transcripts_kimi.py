"""Kimi CLI's wire.jsonl: what the golden files do not show (the work dir, subagents, bad lines, growth)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from tackroom.adapters.resolve import load_adapters
from tackroom.families import get_family
from tackroom.families.kimi.stream import session_usage
from tackroom.families.kimi.transcripts import KimiTranscripts, iso, usage_of
from tackroom.trace.events import Record, UsageReport
from tackroom.trace.model import Cursor, TraceEvent, TraceIssue, TraceItem
from tracekit import the_session, usage_reports

GOLDEN = Path(__file__).parent / "golden" / "kimi" / "transcripts"
SESSION = "11111111-2222-3333-4444-555555555555"


def _status(message_id: str | None, **figures: Any) -> dict[str, Any]:
    usage = {"input_other": 254, "output": 45, "input_cache_read": 67, "input_cache_creation": 0, **figures}
    payload: dict[str, Any] = {"context_tokens": 321, "token_usage": usage}
    if message_id is not None:
        payload["message_id"] = message_id
    return _msg("StatusUpdate", payload)


def _msg(kind: str, payload: dict[str, Any], at: float = 1796171141.5) -> dict[str, Any]:
    return {"timestamp": at, "message": {"type": kind, "payload": payload}}


def _write(share: Path, workdir: str, *lines: dict[str, Any] | str, agent: str | None = None) -> Path:
    digest = hashlib.md5(workdir.encode()).hexdigest()
    folder = share / "sessions" / digest / SESSION
    if agent:
        folder = folder / "subagents" / agent
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "wire.jsonl"
    head = {"type": "metadata", "protocol_version": "1.10"}
    text = "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in (head, *lines))
    path.write_text(text, encoding="utf-8")
    return path


def _read(path: Path, cursor: Cursor | None = None, usage_only: bool = False) -> list[TraceItem]:
    return list(KimiTranscripts().read(path, cursor or Cursor(), usage_only=usage_only))


def test_the_family_and_adapter_have_this_reader() -> None:
    assert isinstance(get_family("kimi").transcripts(), KimiTranscripts)
    spec = load_adapters()["kimi"].spec.transcripts
    assert spec is not None
    assert spec.roots == ["${KIMI_SHARE_DIR:-~/.kimi}/sessions"]


def test_usage_is_what_the_family_reads_after_a_run() -> None:
    """One reading of a call's figures: the reader's and the family's after_exit agree on the recording."""
    wire = next(GOLDEN.glob("kimi-1.51.0-shell/files/*/*/wire.jsonl"))
    ours = [i.event.usage for i in usage_reports(_read(wire))]  # type: ignore[attr-defined]
    theirs = [e.usage for e in session_usage(wire) if isinstance(e, UsageReport)]
    assert ours == theirs
    # The mock sent 321 in (67 of them cached) and 45 out: input_other is already the uncached part.
    assert ours[0].to_json() == {
        "input": 254,
        "output": 45,
        "cache_read": 67,
        "cache_write": "not_reported",  # Chat Completions has no such figure: kimi writes 0
        "reasoning": "not_reported",  # the log keeps none
    }


def test_figures_that_are_not_counts_are_unknown_and_a_positive_cache_write_counts() -> None:
    usage = usage_of({"input_other": 10, "output": True, "input_cache_read": 2.5, "input_cache_creation": 9})
    assert usage.to_json() == {
        "input": 10,
        "output": "unknown",
        "cache_read": "unknown",
        "cache_write": 9,
        "reasoning": "not_reported",
    }
    assert usage_of({"input_cache_creation": "9"}).to_json()["cache_write"] == "unknown"
    assert not usage_of({}).reported
    assert not usage_of("junk").reported


def test_the_work_dir_comes_from_kimi_json_by_its_md5(tmp_path: Path) -> None:
    share = tmp_path / "share"
    path = _write(share, "/home/u/project", _msg("TurnBegin", {"user_input": "hi"}))
    (share / "kimi.json").write_text(
        json.dumps({"work_dirs": [{"path": "/elsewhere"}, {"path": "/home/u/project", "kaos": "local"}]})
    )
    cursor = Cursor()
    assert the_session(_read(path, cursor)).cwd == "/home/u/project"
    # Once found it is kept: a later read (of lines appended since) does not need kimi.json.
    (share / "kimi.json").unlink()
    with path.open("a") as handle:
        handle.write(json.dumps(_msg("TurnEnd", {})) + "\n")
    assert the_session(_read(path, cursor)).cwd == "/home/u/project"


def test_a_work_dir_not_listed_or_a_broken_kimi_json_is_no_cwd(tmp_path: Path) -> None:
    share = tmp_path / "share"
    path = _write(share, "/home/u/project", _msg("TurnBegin", {"user_input": "hi"}))
    assert the_session(_read(path)).cwd is None
    (share / "kimi.json").write_text('{"work_dirs": [{"path": "/other"}, 7, {"path": 3}]}')
    assert the_session(_read(path)).cwd is None
    (share / "kimi.json").write_text("{not json")
    assert the_session(_read(path)).cwd is None
    (share / "kimi.json").write_bytes(b" " * (2 * 1024 * 1024))  # past the bound: not read
    assert the_session(_read(path)).cwd is None


def test_a_subagent_log_is_its_own_session_under_its_parent(tmp_path: Path) -> None:
    share = tmp_path / "share"
    path = _write(share, "/w", _status("call-1"), agent="a123")
    (path.parent / "meta.json").write_text(json.dumps({"subagent_type": "explore", "description": "look"}))
    items = _read(path)
    meta = the_session(items)
    assert meta.session_id == f"{SESSION}-agent-a123"
    assert (meta.parent_id, meta.agent, meta.title) == (SESSION, "explore", "look")
    assert [u.key for u in usage_reports(items)] == ["call-1"]


def test_the_parent_s_copy_of_a_subagent_line_is_a_record_not_usage(tmp_path: Path) -> None:
    copy = _msg(
        "SubagentEvent", {"agent_id": "a123", "subagent_type": "coder", "event": _status("c")["message"]}
    )
    path = _write(tmp_path, "/w", copy)
    items = _read(path)
    assert not usage_reports(items)
    assert [
        i.event.record_type for i in items if isinstance(i, TraceEvent) and isinstance(i.event, Record)
    ] == [
        "metadata",
        "SubagentEvent",
    ]
    assert not usage_reports(_read(path, usage_only=True))


def test_a_call_without_a_message_id_has_no_key(tmp_path: Path) -> None:
    path = _write(tmp_path, "/w", _status(None), _status(""))
    assert [u.key for u in usage_reports(_read(path))] == [None, None]


def test_bad_lines_are_issues_and_the_rest_is_read(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "/w",
        "{broken",
        "[1, 2]",
        json.dumps({"timestamp": "yesterday", "message": "StatusUpdate"}),
        _msg("ToolCall", {"id": 5, "function": {"name": ["x"], "arguments": "{not json"}}),
        _msg("ToolResult", {"tool_call_id": "c", "return_value": {"output": {"odd": 1}, "is_error": "yes"}}),
        _status("ok-1"),
    )
    items = _read(path)
    assert [i.line for i in items if isinstance(i, TraceIssue)] == [2, 3]
    assert [u.key for u in usage_reports(items)] == ["ok-1"]
    events = {i.event.kind: i.event for i in items if isinstance(i, TraceEvent)}
    call, result = events["tool_call"], events["tool_result"]
    assert (call.name, call.call_id, call.input) == ("", None, "{not json")  # type: ignore[attr-defined]
    assert (result.output, result.is_error) == (None, False)  # type: ignore[attr-defined]


def test_a_line_still_being_written_is_read_once_it_is_whole(tmp_path: Path) -> None:
    path = _write(tmp_path, "/w", _status("one"))
    whole = json.dumps(_status("two")) + "\n"
    with path.open("a") as handle:
        handle.write(whole[:40])
    cursor = Cursor()
    assert [u.key for u in usage_reports(_read(path, cursor))] == ["one"]
    with path.open("a") as handle:
        handle.write(whole[40:])
    assert [u.key for u in usage_reports(_read(path, cursor))] == ["two"]


def test_times_are_epoch_seconds_written_as_iso() -> None:
    assert iso(1796171141.5) == "2026-12-02T00:25:41.500000Z"
    assert iso(0) == "1970-01-01T00:00:00.000000Z"
    for junk in (None, "1796171141.5", True, 1e20, float("nan")):
        assert iso(junk) is None
