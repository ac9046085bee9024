"""Codex rollouts: what the golden files do not show (counters, re-emits, forks, bad lines)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tackroom.families import get_family
from tackroom.trace.events import Record, UsageReport
from tackroom.trace.model import Cursor, SessionMeta, TraceEvent, TraceIssue, TraceItem, TranscriptReader

PARENT = "01a23100-0000-7000-8000-000000000001"
CHILD = "01a23100-0000-7000-8000-000000000002"


def reader() -> TranscriptReader:
    found = get_family("codex").transcripts()
    assert found is not None
    return found


def meta(thread: str, **extra: Any) -> dict[str, Any]:
    payload = {"id": thread, "timestamp": "2026-12-01T10:00:00.000Z", "cwd": "/w", "cli_version": "0.171.0"}
    return {"timestamp": "2026-12-01T10:00:00.000Z", "type": "session_meta", "payload": payload | extra}


def context(model: str = "gpt-5.5") -> dict[str, Any]:
    return {"timestamp": "2026-12-01T10:00:01.000Z", "type": "turn_context", "payload": {"model": model}}


def count(
    i: int, cached: int, o: int, r: int = 0, w: int | None = None, at: str = "10:00:02"
) -> dict[str, Any]:
    total: dict[str, Any] = {
        "input_tokens": i,
        "cached_input_tokens": cached,
        "output_tokens": o,
        "reasoning_output_tokens": r,
        "total_tokens": i + o,
    }
    if w is not None:
        total["cache_write_input_tokens"] = w
    info = {"total_token_usage": total, "last_token_usage": {"input_tokens": -1}, "model_context_window": 1}
    return {
        "timestamp": f"2026-12-01T{at}.000Z",
        "type": "event_msg",
        "payload": {"type": "token_count", "info": info},
    }


def write(path: Path, lines: list[Any], end: str = "\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines)[:-1] + end)
    return path


def rollout(tmp_path: Path, thread: str) -> Path:
    return tmp_path / "2026" / "12" / "01" / f"rollout-2026-12-01T10-00-00-{thread}.jsonl"


def read(path: Path, cursor: Cursor | None = None, usage_only: bool = False) -> list[TraceItem]:
    return list(reader().read(path, cursor or Cursor(), usage_only=usage_only))


def usages(items: list[TraceItem]) -> list[tuple[str | None, dict[str, Any]]]:
    return [
        (i.key, i.event.usage.to_json())
        for i in items
        if isinstance(i, TraceEvent) and isinstance(i.event, UsageReport)
    ]


def report(*files: list[TraceItem]) -> dict[str, int]:
    """What a usage report counts: each key once (its last figures), unkeyed calls as written."""
    calls: dict[Any, dict[str, Any]] = {}
    for n, items in enumerate(files):
        for m, (key, usage) in enumerate(usages(items)):
            calls[key if key is not None else (n, m)] = usage
    total: dict[str, int] = {}
    for usage in calls.values():
        for name, value in usage.items():
            if isinstance(value, int):
                total[name] = total.get(name, 0) + value
    return total


def test_a_running_total_becomes_one_usage_per_call_with_openai_input_made_fresh(tmp_path: Path) -> None:
    path = write(
        rollout(tmp_path, PARENT),
        [meta(PARENT), context(), count(100, 30, 20, 5, w=9), count(300, 90, 60, 12, w=18)],
    )
    items = read(path)
    assert [u for _, u in usages(items)] == [
        {"input": 70, "output": 20, "cache_read": 30, "cache_write": 9, "reasoning": 5},
        {"input": 140, "output": 40, "cache_read": 60, "cache_write": 9, "reasoning": 7},
    ]
    events = [i for i in items if isinstance(i, TraceEvent) and isinstance(i.event, UsageReport)]
    assert {e.model for e in events} == {"gpt-5.5"}
    assert events[0].key == f"codex:{PARENT}:100,30,9,20,5"
    # last_token_usage (here a nonsense -1) is never read beside a total.
    [session] = [i for i in items if isinstance(i, SessionMeta)]
    assert session.models == ["gpt-5.5"] and session.cwd == "/w"


def test_a_re_emitted_total_is_no_call(tmp_path: Path) -> None:
    path = write(
        rollout(tmp_path, PARENT), [meta(PARENT), count(100, 0, 10), count(100, 0, 10), count(150, 0, 15)]
    )
    assert [u["input"] for _, u in usages(read(path))] == [100, 50]


def test_a_token_count_without_info_is_kept_as_a_record(tmp_path: Path) -> None:
    line = {"timestamp": "t", "type": "event_msg", "payload": {"type": "token_count", "info": None}}
    items = read(write(rollout(tmp_path, PARENT), [meta(PARENT), line]))
    assert not usages(items)
    [record] = [i.event for i in items if isinstance(i, TraceEvent) and isinstance(i.event, Record)]
    assert record.record_type == "event_msg/token_count"


def test_a_counter_that_starts_again_counts_whole(tmp_path: Path) -> None:
    path = write(rollout(tmp_path, PARENT), [meta(PARENT), count(500, 0, 50), count(80, 0, 8)])
    assert [u["input"] for _, u in usages(read(path))] == [500, 80]


def test_a_resumed_thread_read_on_from_its_cursor_counts_only_the_new_calls(tmp_path: Path) -> None:
    path = write(rollout(tmp_path, PARENT), [meta(PARENT), context(), count(100, 30, 20), count(300, 90, 60)])
    cursor = Cursor()
    first = read(path, cursor)
    state = json.loads(json.dumps(cursor.state))  # what the index stores between runs
    with path.open("a") as handle:  # `codex exec resume` appends to the same rollout
        handle.write(json.dumps(context()) + "\n" + json.dumps(count(610, 211, 72, at="11:00:00")) + "\n")
    later = read(path, Cursor(cursor.offset, cursor.line, state))
    assert [u["input"] for _, u in usages(later)] == [189]
    assert report(first, later) == report(read(path))
    assert report(read(path)) == {"input": 399, "output": 72, "cache_read": 211, "reasoning": 0}


def test_a_fork_s_copied_history_is_counted_once(tmp_path: Path) -> None:
    """An older fork (no ordinals): the parent's counters copied, then the child's own going on from them."""
    parent = write(rollout(tmp_path, PARENT), [meta(PARENT), context(), count(100, 0, 10), count(250, 0, 25)])
    child = write(
        rollout(tmp_path, CHILD),
        [
            meta(CHILD, forked_from_id=PARENT),
            meta(PARENT),
            context(),
            count(100, 0, 10, at="12:00:00"),  # copied, with the fork's time
            count(250, 0, 25, at="12:00:00"),
            count(400, 0, 40, at="12:01:00"),  # the child's own call
        ],
    )
    child_items = read(child)
    keys = [k for k, _ in usages(child_items)]
    assert keys[:2] == [k for k, _ in usages(read(parent))]
    assert [u["input"] for _, u in usages(child_items)] == [100, 150, 150]
    assert report(read(parent), child_items) == {"input": 400, "output": 40, "reasoning": 0, "cache_read": 0}
    [session] = [i for i in child_items if isinstance(i, SessionMeta)]
    assert session.session_id == CHILD and session.parent_id == PARENT
    # The copied session_meta does not start a session of its own.
    assert [
        i.line for i in child_items if isinstance(i, TraceEvent) and i.event.kind == "session_started"
    ] == [1]


def test_a_fork_without_the_parent_s_meta_copied_is_still_read_as_the_parent_s(tmp_path: Path) -> None:
    parent = write(rollout(tmp_path, PARENT), [meta(PARENT), count(100, 0, 10)])
    child = write(
        rollout(tmp_path, CHILD), [meta(CHILD, forked_from_id=PARENT), count(100, 0, 10), count(180, 0, 18)]
    )
    assert report(read(parent), read(child)) == {"input": 180, "output": 18, "cache_read": 0, "reasoning": 0}


def test_a_subagent_s_own_counter_starts_where_its_meta_says(tmp_path: Path) -> None:
    """0.171.0: subagent_history_start_ordinal; the child's own counter starts from zero there."""

    def at(ordinal: int, line: dict[str, Any]) -> dict[str, Any]:
        return {"ordinal": ordinal, **line}

    spawn = {"subagent": {"thread_spawn": {"parent_thread_id": PARENT, "agent_role": "helper"}}}
    child = write(
        rollout(tmp_path, CHILD),
        [
            at(0, meta(CHILD, source=spawn, subagent_history_start_ordinal=4)),
            at(1, meta(PARENT)),
            at(2, context()),
            at(3, count(100, 0, 10)),  # copied from the parent
            at(4, context()),
            at(5, count(60, 20, 6)),  # the child's first call
        ],
    )
    items = read(child)
    assert usages(items)[0][0] == f"codex:{PARENT}:100,0,-,10,0"
    assert usages(items)[1] == (
        f"codex:{CHILD}:60,20,-,6,0",
        {"input": 40, "output": 6, "cache_read": 20, "cache_write": "not_reported", "reasoning": 0},
    )
    [session] = [i for i in items if isinstance(i, SessionMeta)]
    assert (session.parent_id, session.agent) == (PARENT, "helper")


def test_a_half_written_last_line_is_read_next_time(tmp_path: Path) -> None:
    whole = json.dumps(count(300, 0, 30))
    path = write(rollout(tmp_path, PARENT), [meta(PARENT), count(100, 0, 10), whole[:40]], end="")
    cursor = Cursor()
    first = read(path, cursor)
    assert [u["input"] for _, u in usages(first)] == [100]
    assert not [i for i in first if isinstance(i, TraceIssue)]
    with path.open("a") as handle:
        handle.write(whole[40:] + "\n")
    assert [u["input"] for _, u in usages(read(path, cursor))] == [200]
    assert cursor.offset == path.stat().st_size


def test_wrong_types_are_not_reported_never_zero(tmp_path: Path) -> None:
    bad = count(100, 0, 10)
    bad["payload"]["info"]["total_token_usage"]["output_tokens"] = "10"
    bad["payload"]["info"]["total_token_usage"]["cached_input_tokens"] = True
    odd = {
        "timestamp": 5,
        "type": "event_msg",
        "payload": {"type": "token_count", "info": {"total_token_usage": "x"}},
    }
    items = read(
        write(rollout(tmp_path, PARENT), [meta(PARENT), bad, odd, {"type": "event_msg", "payload": []}])
    )
    [(_, usage)] = usages(items)
    assert usage == {
        "input": 100,
        "output": "not_reported",
        "cache_read": "not_reported",
        "cache_write": "not_reported",
        "reasoning": 0,
    }
    assert not [i for i in items if isinstance(i, TraceIssue)]


def test_bad_lines_are_issues_and_unknown_records_are_kept(tmp_path: Path) -> None:
    new = {"timestamp": "t", "type": "world_model_v9", "payload": {"type": "dream", "x": 1}}
    path = write(rollout(tmp_path, PARENT), [meta(PARENT), "{not json", "[1, 2]", new, count(10, 0, 1)])
    items = read(path)
    assert [(i.line, i.message[:8]) for i in items if isinstance(i, TraceIssue)] == [
        (2, "not JSON"),
        (3, "a JSON l"),
    ]
    records = [i.event for i in items if isinstance(i, TraceEvent) and isinstance(i.event, Record)]
    assert [r.record_type for r in records] == ["world_model_v9/dream"]
    assert json.loads(records[0].raw)["payload"] == {"type": "dream", "x": 1}
    assert usages(items)


def test_response_items_map_to_events(tmp_path: Path) -> None:
    def item(payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": "t", "type": "response_item", "payload": payload}

    lines = [
        meta(PARENT),
        item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}),
        item({"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "rules"}]}),
        item(
            {"type": "function_call", "name": "exec_command", "arguments": '{"cmd": "ls"}', "call_id": "c1"}
        ),
        item({"type": "function_call", "name": "x", "arguments": "not json", "call_id": "c2"}),
        item(
            {"type": "custom_tool_call", "name": "apply_patch", "input": "*** Begin Patch", "call_id": "c3"}
        ),
        item({"type": "function_call_output", "call_id": "c1", "output": "a.txt\n"}),
        item(
            {
                "type": "custom_tool_call_output",
                "call_id": "c3",
                "output": [{"type": "input_text", "text": "ok"}],
            }
        ),
        item({"type": "function_call_output", "call_id": "c2", "output": {"content": "old shape"}}),
        item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}),
        item({"type": "reasoning", "summary": []}),
        {"timestamp": "t", "type": "event_msg", "payload": {"type": "error", "message": "boom"}},
    ]
    events = [
        i.event.to_json() for i in read(write(rollout(tmp_path, PARENT), lines)) if isinstance(i, TraceEvent)
    ]
    for event in events:
        event.pop("raw", None)
    assert events[1:] == [
        {"type": "user_text", "text": "hi"},
        {"type": "record", "record_type": "response_item/message"},
        {"type": "tool_call", "name": "exec_command", "call_id": "c1", "input": {"cmd": "ls"}},
        {"type": "tool_call", "name": "x", "call_id": "c2", "input": "not json"},
        {"type": "tool_call", "name": "apply_patch", "call_id": "c3", "input": "*** Begin Patch"},
        {"type": "tool_result", "call_id": "c1", "output": "a.txt\n", "is_error": False},
        {"type": "tool_result", "call_id": "c3", "output": "ok", "is_error": False},
        {"type": "tool_result", "call_id": "c2", "output": "old shape", "is_error": False},
        {"type": "assistant_text", "text": "done"},
        {"type": "record", "record_type": "response_item/reasoning"},
        {"type": "error", "message": "boom", "fatal": False},
    ]


def test_a_total_missing_falls_back_to_the_call_s_own_figures_unkeyed(tmp_path: Path) -> None:
    last = {"input_tokens": 50, "cached_input_tokens": 20, "output_tokens": 5}
    line = {
        "timestamp": "t",
        "type": "event_msg",
        "payload": {"type": "token_count", "info": {"last_token_usage": last}},
    }
    assert usages(read(write(rollout(tmp_path, PARENT), [meta(PARENT), line]))) == [
        (
            None,
            {
                "input": 30,
                "output": 5,
                "cache_read": 20,
                "cache_write": "not_reported",
                "reasoning": "not_reported",
            },
        )
    ]


def test_a_rollout_from_before_the_payload_lines_is_read(tmp_path: Path) -> None:
    lines = [
        {"id": PARENT, "timestamp": "2025-05-01T10:00:00.000Z", "instructions": None},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {"type": "function_call", "name": "shell", "arguments": '{"command": ["ls"]}', "call_id": "c1"},
        {"record_type": "state"},
    ]
    items = read(write(tmp_path / f"rollout-2025-05-01T10-00-00-{PARENT}.jsonl", lines))
    assert [e["type"] for e in (i.event.to_json() for i in items if isinstance(i, TraceEvent))] == [
        "session_started",
        "user_text",
        "tool_call",
        "record",
    ]
    [session] = [i for i in items if isinstance(i, SessionMeta)]
    assert session.session_id == PARENT and session.started == "2025-05-01T10:00:00.000Z"


def test_the_totals_a_cursor_keeps_are_bounded(tmp_path: Path) -> None:
    lines: list[Any] = [meta(PARENT)]
    for n in range(40):
        lines += [meta(f"01a23100-0000-7000-8000-0000000001{n:02d}"), count(100 + n, 0, 10)]
    cursor = Cursor()
    assert len(usages(read(write(rollout(tmp_path, CHILD), lines), cursor))) == 40
    assert len(cursor.state["totals"]) <= 16


def test_a_cursor_state_that_is_not_ours_does_not_crash(tmp_path: Path) -> None:
    path = write(rollout(tmp_path, PARENT), [meta(PARENT), count(100, 0, 10)])
    cursor = Cursor(state={"totals": {PARENT: ["a", None, 3, {}, 1]}, "session": PARENT, "lineage": 7})
    assert [u["input"] for _, u in usages(read(path, cursor))] == [100]
    cursor = Cursor(state={"totals": [1, 2], "own_from": "x", "model": 3})
    assert [u["input"] for _, u in usages(read(path, cursor))] == [100]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.one_of(
            st.binary(max_size=80),
            st.sampled_from(
                [
                    b'{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":-5}}}}',
                    b'{"type":"session_meta","payload":{"id":3}}',
                    b'{"payload":null}',
                ]
            ),
        ),
        max_size=8,
    )
)
def test_any_bytes_give_items_never_a_crash(tmp_path: Path, chunks: list[bytes]) -> None:
    path = rollout(tmp_path, PARENT)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\n".join(chunks))
    for usage_only in (False, True):
        for item in read(path, usage_only=usage_only):
            assert isinstance(item, TraceEvent | SessionMeta | TraceIssue)


def test_a_50_mb_line_is_read_and_the_rest_too(tmp_path: Path) -> None:
    output = {"type": "function_call_output", "call_id": "c", "output": "x" * (50 * 1024 * 1024)}
    big = {"timestamp": "t", "type": "response_item", "payload": output}
    path = write(rollout(tmp_path, PARENT), [meta(PARENT), big, count(10, 0, 1)])
    items = read(path, usage_only=True)
    assert [u["input"] for _, u in usages(items)] == [10]
    assert not [i for i in items if isinstance(i, TraceIssue)]
