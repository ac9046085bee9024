"""Letta Code's local store: what the golden files do not show (times, a rewritten log, the session)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tackroom.adapters.resolve import load_adapters
from tackroom.families import get_family
from tackroom.families.letta.transcripts import LettaTranscripts
from tackroom.trace import api
from tackroom.trace.model import Cursor, TraceEvent, TraceItem
from tracekit import the_session, usage_reports

GOLDEN = Path(__file__).parent / "golden" / "letta" / "transcripts"
AGENT = "agent-local-0123"
FOLDER = "Y29udmVyc2F0aW9uOmxvY2FsLWNvbnYtMQ"  # conversation:local-conv-1


def _assistant(n: int, text: str = "ok", output: int = 45) -> dict[str, Any]:
    return {
        "id": f"ui-msg-{n}",
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "model": "deepseek/deepseek-v4-pro",
        "responseId": f"chatcmpl-{n}",
        "usage": {"input": 254, "output": output, "cacheRead": 67, "cacheWrite": 0},
        "stopReason": "stop",
        "timestamp": 1796183503981 + n,
        "metadata": {"created_at": f"2026-01-01T00:00:0{n}.000Z", "agent_id": AGENT},
    }


def _conversation(root: Path, *lines: dict[str, Any], about: Any = None) -> Path:
    folder = root / "conversations" / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    conversation = {"id": "local-conv-1", "agent_id": AGENT} if about is None else about
    (folder / "conversation.json").write_text(json.dumps(conversation))
    path = folder / "messages.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _read(path: Path, usage_only: bool = False) -> list[TraceItem]:
    return list(LettaTranscripts().read(path, Cursor(), usage_only=usage_only))


def test_the_family_and_adapter_have_this_reader() -> None:
    assert isinstance(get_family("letta").transcripts(), LettaTranscripts)
    spec = load_adapters()["letta"].spec.transcripts
    assert spec is not None and spec.glob == "conversations/*/messages.jsonl"


def test_each_call_is_what_the_mock_sent_and_the_session_is_the_agent() -> None:
    """The mock sent prompt 321 with 67 cached: the store keeps 254 uncached, and the stream's session."""
    (path,) = GOLDEN.glob("letta-0.25.9-shell/files/conversations/Y29u*/messages.jsonl")
    items = _read(path)
    calls = [u.event.usage for u in usage_reports(items)]  # type: ignore[attr-defined]
    assert [(c.input, c.output, c.cache_read, c.cache_write, c.reasoning) for c in calls] == [
        (254, 45, 67, None, None)
    ] * 2
    assert the_session(items).session_id == "agent-local-beca3c9a-96e8-47fa-abdd-98cedf59f3f2"


def test_the_stores_counter_is_no_time_and_the_clocks_is_kept(tmp_path: Path) -> None:
    user = {
        "id": "ui-msg-1",
        "role": "user",
        "content": "hi",
        "timestamp": 1767225601000,  # 2026-01-01T00:00:01Z: the counter, as created_at says
        "metadata": {"created_at": "2026-01-01T00:00:01.000Z"},
    }
    items = _read(_conversation(tmp_path, user, _assistant(2)))
    times = [(i.event.kind, i.timestamp) for i in items if isinstance(i, TraceEvent)]
    assert times == [
        ("session_started", None),
        ("user_text", None),
        ("assistant_text", "2026-12-02T03:51:43.983Z"),
        ("usage", "2026-12-02T03:51:43.983Z"),
    ]
    meta = the_session(items)
    assert (meta.started, meta.ended) == ("2026-12-02T03:51:43.983Z", "2026-12-02T03:51:43.983Z")


@pytest.mark.parametrize("about", [["not", "an object"], {"agent_id": 7}])
def test_without_a_usable_conversation_json_the_folder_names_the_session(tmp_path: Path, about: Any) -> None:
    items = _read(_conversation(tmp_path, _assistant(1), about=about))
    assert the_session(items).session_id == FOLDER
    assert [u.key for u in usage_reports(items)] == ["chatcmpl-1"]


def test_a_log_rewritten_with_its_last_message_replaced_is_read_again_and_counted_once(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """letta rewrites messages.jsonl whole, a later snapshot of the last assistant message in its place."""
    monkeypatch.delenv("LETTA_LOCAL_BACKEND_DIR", raising=False)
    root = isolated_home / ".letta" / "lc-local-backend"
    path = _conversation(root, _assistant(1, "partial", output=10))

    def totals() -> tuple[Any, ...]:
        t = api.usage("daily", harness="letta", timezone="UTC")["totals"]
        return (t["input"], t["output"], t["cache_read"], t["calls"])

    assert totals() == (254, 10, 67, 1)
    path.write_text(
        json.dumps(_assistant(1, "whole answer", output=45)) + "\n" + json.dumps(_assistant(2)) + "\n"
    )
    assert totals() == (508, 90, 134, 2)
