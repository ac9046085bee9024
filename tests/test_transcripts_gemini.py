"""Gemini CLI chat logs: what the golden files do not show (rewrites, resumes, bad lines, subagents)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tackroom.families import get_family
from tackroom.trace.events import ErrorEvent, Record, UsageReport
from tackroom.trace.model import Cursor, SessionMeta, TraceEvent, TraceIssue, TraceItem, TranscriptReader

SESSION = "73f74605-352e-478e-abfa-3109e2ae1268"


def reader() -> TranscriptReader:
    found = get_family("gemini").transcripts()
    assert found is not None
    return found


def header(kind: str = "main", session: str = SESSION) -> dict[str, Any]:
    return {"sessionId": session, "projectHash": "h", "startTime": "2026-12-01T10:00:00.000Z", "kind": kind}


def answer(mid: str, text: Any = "", tokens: Any = None, **extra: Any) -> dict[str, Any]:
    line = {"id": mid, "timestamp": "2026-12-01T10:00:01.000Z", "type": "gemini", "content": text}
    if tokens is not None:
        line["tokens"] = tokens
    return line | {"model": "gemini-2.5-flash"} | extra


def tokens(i: Any, o: Any, cached: Any = 0, thoughts: Any = 0) -> dict[str, Any]:
    return {"input": i, "output": o, "cached": cached, "thoughts": thoughts, "tool": 0, "total": 0}


def write(path: Path, lines: list[Any], end: str = "\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines)[:-1] + end)
    return path


def chat(tmp_path: Path) -> Path:
    return tmp_path / "proj" / "chats" / "session-2026-12-01T10-00-73f74605.jsonl"


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


def usages(items: list[TraceItem]) -> list[tuple[str | None, dict[str, Any]]]:
    return [
        (i.key, i.event.usage.to_json())
        for i in items
        if isinstance(i, TraceEvent) and isinstance(i.event, UsageReport)
    ]


def test_tokens_follow_gemini_s_convention(tmp_path: Path) -> None:
    items = read(
        write(chat(tmp_path), [header(), answer("m1", "hi", tokens(100, 20, cached=30, thoughts=5))])
    )
    [(key, usage)] = usages(items)
    # input counts the cached part; output leaves out the thoughts, which are billed output too.
    assert usage == {
        "input": 70,
        "output": 25,
        "cache_read": 30,
        "cache_write": "not_reported",
        "reasoning": 5,
    }
    assert key == f"gemini:{SESSION}:m1"


def test_tool_use_prompt_tokens_are_input(tmp_path: Path) -> None:
    counts = tokens(100, 20, cached=30) | {"tool": 12}
    garbled = tokens(100, 20, cached=30) | {"tool": "12"}
    items = read(write(chat(tmp_path), [header(), answer("m1", "a", counts), answer("m2", "b", garbled)]))
    assert [u["input"] for _, u in usages(items)] == [82, "unknown"]


def test_a_rewritten_message_is_one_call_its_text_and_calls_yielded_once(tmp_path: Path) -> None:
    call = {"id": "c1", "name": "run_shell_command", "args": {"command": "ls"}, "status": "success"}
    first = answer("m1", "looking", tokens(100, 20))
    again = answer("m1", "looking", tokens(100, 20), toolCalls=[call])
    items = read(write(chat(tmp_path), [header(), first, {"$set": {"lastUpdated": "x"}}, again]))
    assert len({k for k, _ in usages(items)}) == 1
    kinds = [e["type"] for e in events(items) if e["type"] != "record"]
    assert kinds == ["session_started", "assistant_text", "usage", "tool_call", "usage"]


def test_a_rewrite_read_in_a_later_pass_still_yields_its_calls_once(tmp_path: Path) -> None:
    call = {"id": "c1", "name": "read_file", "args": {}}
    path = write(chat(tmp_path), [header(), answer("m1", "a", tokens(1, 1), toolCalls=[call])])
    cursor = Cursor()
    read(path, cursor)
    cursor = Cursor(cursor.offset, cursor.line, json.loads(json.dumps(cursor.state)))
    with path.open("a") as handle:
        handle.write(
            json.dumps(answer("m1", "a", tokens(1, 1), toolCalls=[call, call | {"id": "c2"}])) + "\n"
        )
    later = [e for e in events(read(path, cursor)) if e["type"] == "tool_call"]
    assert [e["call_id"] for e in later] == ["c2"]


def test_a_cursor_state_that_is_not_ours_does_not_crash(tmp_path: Path) -> None:
    path = write(chat(tmp_path), [header(), answer("m1", "a", tokens(10, 1))])
    for state in ({"seen": {"m1": 1}, "session": 4}, {"seen": [["m1", "x"], 3, []]}):
        items = list(reader().read(path, Cursor(state=dict(state))))
        assert len(usages(items)) == 1


def test_a_resume_starts_again_and_its_replayed_history_counts_nothing(tmp_path: Path) -> None:
    replay = {
        "$set": {"messages": [answer("m1", [{"text": "hi"}]), {"id": "u", "type": "user", "content": []}]}
    }
    path = write(
        chat(tmp_path),
        [header(), answer("m1", "hi", tokens(10, 1)), header(), replay, answer("m2", "more", tokens(20, 2))],
    )
    items = read(path)
    assert [k for k, _ in usages(items)] == [f"gemini:{SESSION}:m1", f"gemini:{SESSION}:m2"]
    assert [e["type"] for e in events(items)].count("session_started") == 2
    [session] = [i for i in items if isinstance(i, SessionMeta)]
    assert session.models == ["gemini-2.5-flash"]


def test_user_parts_tool_results_errors_and_titles(tmp_path: Path) -> None:
    response = {"functionResponse": {"id": "c1", "name": "x", "response": {"error": "denied"}}}
    lines = [
        header(),
        {"id": "u1", "timestamp": "t", "type": "user", "content": [{"text": "hello"}, response]},
        {"id": "u2", "timestamp": "t", "type": "user", "content": "plain"},
        {"id": "e1", "timestamp": "t", "type": "error", "content": "quota exceeded"},
        {"id": "i1", "timestamp": "t", "type": "info", "content": "switched model"},
        {"$set": {"summary": "Listing files"}},
        answer("m1", [{"text": "secret", "thought": True}, {"text": "shown"}]),
    ]
    items = read(write(chat(tmp_path), lines))
    assert events(items)[1:6] == [
        {"type": "user_text", "text": "hello"},
        {"type": "tool_result", "call_id": "c1", "output": "denied", "is_error": True},
        {"type": "user_text", "text": "plain"},
        {"type": "error", "message": "quota exceeded", "fatal": False},
        {"type": "record", "record_type": "info"},
    ]
    assert events(items)[-1] == {"type": "assistant_text", "text": "shown"}
    assert [i.event for i in items if isinstance(i, TraceEvent) and isinstance(i.event, ErrorEvent)]
    [session] = [i for i in items if isinstance(i, SessionMeta)]
    assert session.title == "Listing files"


def test_a_subagent_log_is_its_own_session_linked_to_its_parent(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / ".project_root").write_text("/work/app\n")
    sub = "aec9d139-172d-4d16-890f-5a043e65191a"
    path = write(
        tmp_path / "proj" / "chats" / SESSION / f"{sub}.jsonl", [header("subagent", sub), answer("a", "x")]
    )
    [session] = [i for i in read(path) if isinstance(i, SessionMeta)]
    assert (session.session_id, session.parent_id, session.cwd) == (sub, SESSION, "/work/app")


def test_a_project_root_that_is_a_link_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    (tmp_path / "elsewhere").write_text("/secret\n")
    (tmp_path / "proj" / ".project_root").symlink_to(tmp_path / "elsewhere")
    [session] = [i for i in read(write(chat(tmp_path), [header()])) if isinstance(i, SessionMeta)]
    assert session.cwd is None


def test_wrong_types_are_not_reported_and_unknown_lines_kept(tmp_path: Path) -> None:
    lines = [
        header(),
        answer("m1", "a", tokens("100", 20, cached=None, thoughts=2.5)),
        answer("m2", 7, tokens=[1, 2]),
        {"id": "n", "timestamp": "t", "type": "hologram", "content": "?"},
        "{broken",
    ]
    items = read(write(chat(tmp_path), lines))
    [(_, usage)] = usages(items)
    assert usage == {
        "input": "not_reported",
        "output": "unknown",  # its thoughts part is not a count
        "cache_read": "not_reported",
        "cache_write": "not_reported",
        "reasoning": "unknown",
    }
    assert {"type": "record", "record_type": "hologram"} in events(items)
    assert [i.line for i in items if isinstance(i, TraceIssue)] == [5]


def test_a_half_written_last_line_is_read_next_time(tmp_path: Path) -> None:
    whole = json.dumps(answer("m2", "b", tokens(20, 2)))
    path = write(chat(tmp_path), [header(), answer("m1", "a", tokens(10, 1)), whole[:30]], end="")
    cursor = Cursor()
    assert len(usages(read(path, cursor))) == 1
    with path.open("a") as handle:
        handle.write(whole[30:])
    assert [k for k, _ in usages(read(path, cursor))] == [f"gemini:{SESSION}:m2"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.one_of(
            st.binary(max_size=80),
            st.sampled_from([b'{"sessionId":1}', b'{"type":"gemini","tokens":{"input":-1}}', b'{"$set":[]}']),
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
            if isinstance(item, TraceEvent) and isinstance(item.event, Record):
                json.loads(item.event.raw)
