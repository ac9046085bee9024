"""Factory Droid's session logs: what the golden files do not show (no usage, headers, bad lines, growth)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tackroom.adapters.resolve import load_adapters
from tackroom.families import get_family
from tackroom.families.droid.transcripts import DroidTranscripts
from tackroom.trace.events import Record, SessionStarted, UsageReport
from tackroom.trace.model import Cursor, SessionMeta, TraceEvent, TraceIssue, TraceItem

GOLDEN = Path(__file__).parent / "golden" / "droid" / "transcripts"
SESSION = "aaaaaaaa-1111-2222-3333-444444444444"
HEADER = {"type": "session_start", "id": SESSION, "title": "t", "cwd": "/w"}


def _message(role: str, content: Any, **more: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "id": "m",
        "timestamp": "2026-12-02T10:00:00.000Z",
        "message": {"role": role, "content": content, **more},
    }


def _write(tmp_path: Path, *lines: dict[str, Any] | str, name: str = SESSION) -> Path:
    path = tmp_path / "-w" / f"{name}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines), encoding="utf-8"
    )
    return path


def _read(path: Path, cursor: Cursor | None = None, usage_only: bool = False) -> list[TraceItem]:
    return list(DroidTranscripts().read(path, cursor or Cursor(), usage_only=usage_only))


def _events(items: list[TraceItem]) -> list[TraceEvent]:
    return [i for i in items if isinstance(i, TraceEvent)]


def test_the_family_and_adapter_have_this_reader() -> None:
    assert isinstance(get_family("droid").transcripts(), DroidTranscripts)
    spec = load_adapters()["droid"].spec.transcripts
    assert spec is not None and spec.glob == "*/*.jsonl"


def test_the_running_totals_beside_the_log_are_never_reported_as_calls() -> None:
    """settings.json holds the session's totals (the mock's two calls summed): not a call, so not usage."""
    (log,) = GOLDEN.glob("droid-0.215.0-shell/files/*/*.jsonl")
    settings = json.loads(log.with_name(log.stem + ".settings.json").read_text())
    assert settings["tokenUsage"]["outputTokens"] == 45 + 20
    items = _read(log)
    assert not [e for e in _events(items) if isinstance(e.event, UsageReport)]
    assert not [e for e in _events(_read(log, usage_only=True)) if isinstance(e.event, UsageReport)]
    assert {e.event.kind for e in _events(items)} >= {
        "tool_call",
        "tool_result",
        "assistant_text",
        "user_text",
    }


def test_the_fast_path_still_names_the_session(tmp_path: Path) -> None:
    path = _write(tmp_path, HEADER, _message("user", "hi"))
    (meta,) = [i for i in _read(path, usage_only=True) if isinstance(i, SessionMeta)]
    assert (meta.session_id, meta.cwd, meta.title) == (SESSION, "/w", "t")


def test_a_file_without_a_header_is_named_by_its_file(tmp_path: Path) -> None:
    path = _write(tmp_path, _message("user", "hi"), name="bbbb")
    items = _read(path)
    assert {i.session_id for i in items if isinstance(i, SessionMeta)} == {"bbbb"}
    assert not [e for e in _events(items) if isinstance(e.event, SessionStarted)]


def test_a_session_read_in_two_parts_keeps_its_header(tmp_path: Path) -> None:
    path = _write(tmp_path, HEADER, _message("user", "hi"))
    cursor = Cursor()
    _read(path, cursor)
    with path.open("a") as handle:
        handle.write(json.dumps(_message("assistant", [{"type": "text", "text": "yo"}], modelId="m")) + "\n")
    items = _read(path, cursor)
    (meta,) = [i for i in items if isinstance(i, SessionMeta)]
    assert (meta.session_id, meta.cwd, meta.models) == (SESSION, "/w", ["m"])
    assert [e.event.kind for e in _events(items)] == ["assistant_text"]


def test_the_model_only_context_is_a_record_not_the_user_s_words(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        HEADER,
        _message("user", [{"type": "text", "text": "<system-reminder>"}], visibility="llm_only"),
    )
    (record,) = [e.event for e in _events(_read(path)) if isinstance(e.event, Record) and e.line == 2]
    assert record.record_type == "message.llm_only"


def test_bad_lines_are_issues_and_the_rest_is_read(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        HEADER,
        "{broken",
        "7",
        _message(
            "assistant", [{"type": "tool_use", "id": 5, "name": None}, "junk", {"type": "text", "text": 3}]
        ),
        _message(
            "user", [{"type": "tool_result", "tool_use_id": "c", "content": {"odd": 1}, "is_error": "yes"}]
        ),
        _message("user", None),
        _message("assistant", [{"type": "text", "text": "TRACED"}]),
    )
    items = _read(path)
    assert [i.line for i in items if isinstance(i, TraceIssue)] == [2, 3]
    events = _events(items)
    call = next(e.event for e in events if e.event.kind == "tool_call")
    result = next(e.event for e in events if e.event.kind == "tool_result")
    assert (call.name, call.call_id) == ("", None)  # type: ignore[attr-defined]
    assert (result.call_id, result.output, result.is_error) == ("c", None, False)  # type: ignore[attr-defined]
    assert events[-1].event.kind == "assistant_text"
