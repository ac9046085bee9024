"""Qwen Code chat logs: what the golden files do not show (telemetry, subagents, bad lines)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tackroom.families import get_family
from tackroom.trace.events import UsageReport
from tackroom.trace.model import Cursor, SessionMeta, TraceEvent, TraceIssue, TraceItem, TranscriptReader

SESSION = "c0d45946-cccf-4910-8ffa-be97264ce7d1"


def reader() -> TranscriptReader:
    found = get_family("qwen").transcripts()
    assert found is not None
    return found


def line(kind: str, uuid: str, **extra: Any) -> dict[str, Any]:
    base = {"uuid": uuid, "sessionId": SESSION, "timestamp": f"2026-12-01T10:00:0{len(uuid) % 10}.000Z"}
    return base | {"type": kind, "cwd": "/w", "version": "0.24.4"} | extra


def meta(prompt: Any, out: Any, cached: Any = 0, thoughts: Any = 0) -> dict[str, Any]:
    return {
        "promptTokenCount": prompt,
        "candidatesTokenCount": out,
        "thoughtsTokenCount": thoughts,
        "totalTokenCount": 0,
        "cachedContentTokenCount": cached,
    }


def write(path: Path, lines: list[Any], end: str = "\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines)[:-1] + end)
    return path


def chat(tmp_path: Path) -> Path:
    return tmp_path / "-w" / "chats" / f"{SESSION}.jsonl"


def read(path: Path, cursor: Cursor | None = None, usage_only: bool = False) -> list[TraceItem]:
    return list(reader().read(path, cursor or Cursor(), usage_only=usage_only))


def events(items: list[TraceItem]) -> list[dict[str, Any]]:
    out = []
    for item in items:
        if isinstance(item, TraceEvent):
            data = item.event.to_json()
            data.pop("raw", None)
            out.append(data)
    return out


def usages(items: list[TraceItem]) -> list[tuple[str | None, str | None, dict[str, Any]]]:
    return [
        (i.key, i.model, i.event.usage.to_json())
        for i in items
        if isinstance(i, TraceEvent) and isinstance(i.event, UsageReport)
    ]


def test_usage_comes_from_assistant_lines_never_from_telemetry(tmp_path: Path) -> None:
    telemetry = {
        "uiEvent": {
            "event.name": "qwen-code.api_response",
            "input_token_count": 200,
            "output_token_count": 40,
        }
    }
    lines = [
        line("user", "u1", message={"role": "user", "parts": [{"text": "go"}]}),
        line("system", "s1", subtype="ui_telemetry", systemPayload=telemetry),
        line(
            "assistant",
            "a1",
            model="qwen3.7-max",
            message={"role": "model", "parts": [{"text": "hmm", "thought": True}, {"text": "done"}]},
            usageMetadata=meta(200, 40, cached=60, thoughts=7),
        ),
    ]
    items = read(write(chat(tmp_path), lines))
    assert usages(items) == [
        (
            "qwen:a1",
            "qwen3.7-max",
            {"input": 140, "output": 40, "cache_read": 60, "cache_write": "not_reported", "reasoning": 7},
        )
    ]
    assert [e for e in events(items) if e["type"] != "session_started"] == [
        {"type": "user_text", "text": "go"},
        {"type": "record", "record_type": "system/ui_telemetry"},
        {"type": "assistant_text", "text": "done"},
        {"type": "usage", "usage": usages(items)[0][2], "scope": "turn"},
    ]


def test_a_call_written_twice_has_one_key(tmp_path: Path) -> None:
    call = line("assistant", "a1", model="m", usageMetadata=meta(10, 1))
    keys = [k for k, _, _ in usages(read(write(chat(tmp_path), [call, call])))]
    assert keys == ["qwen:a1", "qwen:a1"]


def test_tool_calls_results_and_failures(tmp_path: Path) -> None:
    call = {"functionCall": {"id": "c1", "name": "run_shell_command", "args": {"command": "ls"}}}
    failed = {"functionResponse": {"id": "c1", "name": "run_shell_command", "response": {"error": "denied"}}}
    ok = {"functionResponse": {"id": "c2", "name": "read_file", "response": {"output": "text"}}}
    odd = {"functionResponse": {"id": "c3", "name": "x", "response": {"llmContent": [1]}}}
    lines = [
        line("assistant", "a1", message={"role": "model", "parts": [call]}),
        line("tool_result", "t1", message={"parts": [failed]}, toolCallResult={"status": "error"}),
        line("tool_result", "t2", message={"parts": [ok, odd]}, toolCallResult={"status": "success"}),
        line("user", "n1", subtype="notification", message={"parts": [{"text": "<task-notification>"}]}),
    ]
    assert events(read(write(chat(tmp_path), lines)))[1:] == [
        {"type": "tool_call", "name": "run_shell_command", "call_id": "c1", "input": {"command": "ls"}},
        {"type": "tool_result", "call_id": "c1", "output": "denied", "is_error": True},
        {"type": "tool_result", "call_id": "c2", "output": "text", "is_error": False},
        {"type": "tool_result", "call_id": "c3", "output": '{"llmContent":[1]}', "is_error": False},
        {"type": "record", "record_type": "user/notification"},
    ]


def test_a_subagent_log_is_its_own_session_with_the_model_its_lines_left_out(tmp_path: Path) -> None:
    agent = "general-purpose-call_1"
    folder = tmp_path / "-w" / "subagents" / SESSION
    path = folder / f"agent-{agent}.jsonl"
    extra = {"agentId": agent, "agentName": "general-purpose", "isSidechain": True}
    write(
        path,
        [
            line("user", "u1", message={"parts": [{"text": "task"}]}, **extra),
            line("assistant", "a1", message={"parts": []}, usageMetadata=meta(50, 5), **extra),
        ],
    )
    (folder / f"agent-{agent}.meta.json").write_text(
        json.dumps(
            {"agentType": "general-purpose", "parentAgentId": "general-purpose-call_0", "model": "qwen-x"}
        )
    )
    items = read(path)
    [session] = [i for i in items if isinstance(i, SessionMeta)]
    assert (session.session_id, session.parent_id, session.agent) == (
        f"agent-{agent}",
        "agent-general-purpose-call_0",
        "general-purpose",
    )
    assert [model for _, model, _ in usages(items)] == ["qwen-x"]
    assert {i.session_id for i in items if isinstance(i, TraceEvent)} == {f"agent-{agent}"}


def test_wrong_types_unknown_records_and_bad_lines(tmp_path: Path) -> None:
    lines = [
        line("assistant", "a1", message="nope", usageMetadata=meta("200", 4.0, cached=None, thoughts=True)),
        line("assistant", "a2", usageMetadata=meta(None, None, None, None)),
        line("teleport", "x1", payload={"a": 1}),
        "[]",
        '{"half',
    ]
    items = read(write(chat(tmp_path), lines))
    assert [u for _, _, u in usages(items)] == []  # nothing countable was written
    assert {"type": "record", "record_type": "teleport"} in events(items)
    assert [i.line for i in items if isinstance(i, TraceIssue)] == [4, 5]  # ended by a newline: not JSON


def test_a_half_written_last_line_is_read_next_time(tmp_path: Path) -> None:
    whole = json.dumps(line("assistant", "a2", usageMetadata=meta(20, 2)))
    path = write(chat(tmp_path), [line("assistant", "a1", usageMetadata=meta(10, 1)), whole[:25]], end="")
    cursor = Cursor()
    assert [k for k, _, _ in usages(read(path, cursor))] == ["qwen:a1"]
    with path.open("a") as handle:
        handle.write(whole[25:] + "\n")
    assert [k for k, _, _ in usages(read(path, cursor))] == ["qwen:a2"]
    assert cursor.offset == path.stat().st_size


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.one_of(
            st.binary(max_size=80),
            st.sampled_from(
                [
                    b'{"type":"assistant","usageMetadata":{"promptTokenCount":-3}}',
                    b'{"sessionId":[],"agentId":1}',
                ]
            ),
        ),
        max_size=8,
    )
)
def test_any_bytes_give_items_never_a_crash(tmp_path: Path, chunks: list[bytes]) -> None:
    path = chat(tmp_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\n".join(chunks))
    for usage_only in (False, True):
        for item in read(path, usage_only=usage_only):
            assert isinstance(item, TraceEvent | SessionMeta | TraceIssue)
