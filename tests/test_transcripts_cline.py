"""Cline's sessions: what the golden files do not show (usage per call, a rewritten file, bad files)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tackroom.adapters.resolve import load_adapters
from tackroom.families import get_family
from tackroom.families.cline.transcripts import ClineTranscripts, usage_of
from tackroom.trace import api
from tackroom.trace.model import Cursor, TraceIssue, TraceItem
from tracekit import the_session, usage_reports

GOLDEN = Path(__file__).parent / "golden" / "cline" / "transcripts"
SESSION = "1796182910948_abcde"


def _call(n: int, prompt: Any = 321, **more: Any) -> dict[str, Any]:
    metrics = {
        "inputTokens": prompt,
        "outputTokens": 45,
        "cacheReadTokens": 67,
        "cacheWriteTokens": 0,
        **more,
    }
    return {
        "id": f"msg_{n}",
        "role": "assistant",
        "content": [{"type": "text", "text": f"answer {n}"}],
        "ts": 1796182911000 + n * 1000,
        "modelInfo": {"id": "mock-model", "provider": "openai-compatible"},
        "metrics": metrics,
    }


def _session(root: Path, *messages: Any, about: dict[str, Any] | None = None) -> Path:
    folder = root / SESSION
    folder.mkdir(parents=True, exist_ok=True)
    meta = {
        "session_id": SESSION,
        "cwd": "/w",
        "model": "mock-model",
        "started_at": "2026-12-02T03:41:50.964Z",
    }
    (folder / f"{SESSION}.json").write_text(json.dumps(meta if about is None else about))
    path = folder / f"{SESSION}.messages.json"
    path.write_text(json.dumps({"version": 1, "sessionId": SESSION, "messages": list(messages)}))
    return path


def _read(path: Path, usage_only: bool = False) -> list[TraceItem]:
    return list(ClineTranscripts().read(path, Cursor(), usage_only=usage_only))


def test_the_family_and_adapter_have_this_reader() -> None:
    assert isinstance(get_family("cline").transcripts(), ClineTranscripts)
    spec = load_adapters()["cline"].spec.transcripts
    assert spec is not None and spec.glob == "*/*.messages.json"


def test_the_calls_add_up_to_the_running_total_cline_keeps_beside_them() -> None:
    """The recording's calls, read per call, sum to ``metadata.usage`` of ``<id>.json``."""
    (path,) = GOLDEN.glob("cline-3.0.65-shell/files/*/*.messages.json")
    total = json.loads(path.with_name(path.name.replace(".messages", "")).read_text())["metadata"]["usage"]
    calls = [u.event.usage for u in usage_reports(_read(path))]  # type: ignore[attr-defined]
    assert len(calls) == 2
    assert sum(c.input + c.cache_read for c in calls) == total["inputTokens"] == 642
    assert sum(c.output for c in calls) == total["outputTokens"]
    assert sum(c.cache_read for c in calls) == total["cacheReadTokens"]
    assert all(c.cache_write is None and c.reasoning is None for c in calls)


def test_the_prompt_less_its_cached_parts_is_the_fresh_input() -> None:
    # Anthropic's figures as cline writes them: inputTokens = input + cache read + cache write.
    usage = usage_of({"inputTokens": 1321, "outputTokens": 56, "cacheReadTokens": 78, "cacheWriteTokens": 9})
    assert (usage.input, usage.output, usage.cache_read, usage.cache_write) == (1234, 56, 78, 9)
    # Chat Completions: no cache write figure, written as 0.
    usage = usage_of({"inputTokens": 321, "outputTokens": 45, "cacheReadTokens": 67, "cacheWriteTokens": 0})
    assert (usage.input, usage.cache_read, usage.cache_write) == (254, 67, None)
    # No cached figure: the prompt is all that is known.
    assert usage_of({"inputTokens": 10, "outputTokens": 2}).input == 10
    assert not usage_of({}).reported


@pytest.mark.parametrize(
    ("metrics", "unknown"),
    [
        ({"inputTokens": "321"}, {"input"}),
        ({"cacheReadTokens": 1.5}, {"cache_read", "input"}),
        ({"cacheWriteTokens": None}, {"cache_write", "input"}),
        ({"outputTokens": True}, {"output"}),
    ],
)
def test_figures_that_are_not_counts_are_unknown(metrics: dict[str, Any], unknown: set[str]) -> None:
    figures = {"inputTokens": 321, "outputTokens": 45, "cacheReadTokens": 67, "cacheWriteTokens": 0}
    usage = usage_of({**figures, **metrics})
    assert usage.unknown == unknown
    for name in unknown:
        assert getattr(usage, name) is None


def test_a_file_caught_mid_write_is_an_issue_and_nothing_else(tmp_path: Path) -> None:
    path = _session(tmp_path, _call(1))
    text = path.read_text()
    path.write_text(text[: len(text) // 2])
    items = _read(path)
    assert len(items) == 1 and isinstance(items[0], TraceIssue) and items[0].message.startswith("not JSON")
    assert _read(path, usage_only=True) == items


def test_a_session_without_its_metadata_file_is_read_with_an_issue(tmp_path: Path) -> None:
    path = _session(tmp_path, "junk", _call(1))
    (path.parent / f"{SESSION}.json").unlink()
    items = _read(path)
    issues = [(i.line, i.message.split(" (")[0]) for i in items if isinstance(i, TraceIssue)]
    assert issues == [(0, f"{SESSION}.json: cannot be read"), (1, "a message that is not a JSON object")]
    assert [u.key for u in usage_reports(items)] == ["msg_1"]
    meta = the_session(items)
    assert (meta.session_id, meta.cwd, meta.started) == (SESSION, None, "2026-12-02T03:41:52.000Z")


def test_a_rewritten_session_is_read_again_whole_and_counted_once(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """cline rewrites ``<id>.messages.json`` after each message: the index reads it again, not on."""
    for name in ("CLINE_SESSION_DATA_DIR", "CLINE_DATA_DIR", "CLINE_DIR"):
        monkeypatch.delenv(name, raising=False)
    root = isolated_home / ".cline" / "data" / "sessions"
    path = _session(root, _call(1))

    def totals() -> tuple[Any, ...]:
        report = api.usage("daily", harness="cline", timezone="UTC")
        t = report["totals"]
        return (t["input"], t["output"], t["cache_read"], t["cache_write"], t["calls"])

    assert totals() == (254, 45, 67, "not_reported", 1)
    path.write_text(json.dumps({"version": 1, "sessionId": SESSION, "messages": [_call(1), _call(2, 400)]}))
    assert totals() == (254 + 333, 90, 134, "not_reported", 2)
    assert api.usage("daily", harness="cline", timezone="UTC", refresh=False)["totals"]["calls"] == 2


def test_a_subagents_file_in_its_parents_folder_is_a_child_session(tmp_path: Path) -> None:
    """spawn_agent's messages go to <parent>/agent_<id>.messages.json, with no <id>.json of their own."""
    _session(tmp_path, _call(1))
    sub = tmp_path / SESSION / "agent_1796184115071_o0w1wh.messages.json"
    sub.write_text(json.dumps({"agent": "subagent", "sessionId": f"{SESSION}__x", "messages": [_call(2)]}))
    items = _read(sub)
    assert not [i for i in items if isinstance(i, TraceIssue)]
    meta = the_session(items)
    assert (meta.session_id, meta.parent_id, meta.agent) == (f"{SESSION}__x", SESSION, "subagent")
    assert [u.session_id for u in usage_reports(items)] == [f"{SESSION}__x"]
    # Without its sessionId, the folder and the file name say it.
    sub.write_text(json.dumps({"messages": []}))
    meta = the_session(_read(sub))
    assert (meta.session_id, meta.parent_id) == (f"{SESSION}__agent_1796184115071_o0w1wh", SESSION)
