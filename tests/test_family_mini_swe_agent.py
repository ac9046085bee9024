"""The mini-swe-agent family: trajectories among the human transcript, its exits, and hostile trajectories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hostile.fuzz import FUZZ
from hostile.test_streams import VALUES, check, delivered, drop, paths, put
from tackroom.families.base import MAX_TEXT
from tackroom.families.mini_swe_agent import FAMILY
from tackroom.families.mini_swe_agent.stream import MiniStreamParser
from tackroom.run.result import summarize
from tackroom.trace.events import ErrorEvent, Event, ToolCall, ToolResult

GOLDEN = Path(__file__).parent / "golden" / "mini-swe-agent"


def assistant(call_id: str, command: str, usage: dict[str, Any] | None = None) -> dict[str, Any]:
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": "bash", "arguments": json.dumps({"command": command})},
    }
    extra: dict[str, Any] = {"actions": [{"command": command, "tool_call_id": call_id}]}
    if usage is not None:
        extra["response"] = {"usage": usage}
    return {"role": "assistant", "content": None, "tool_calls": [call], "extra": extra}


def tool(call_id: str, output: str, returncode: int = 0) -> dict[str, Any]:
    extra = {"raw_output": output, "returncode": returncode}
    return {"role": "tool", "tool_call_id": call_id, "content": output, "extra": extra}


def exit_message(status: str, submission: str = "", content: str | None = None) -> dict[str, Any]:
    extra = {"exit_status": status, "submission": submission}
    return {"role": "exit", "content": submission if content is None else content, "extra": extra}


def trajectory(messages: list[dict[str, Any]], status: str = "", submission: str = "") -> list[str]:
    data = {
        "info": {"exit_status": status, "submission": submission, "mini_version": "2.4.6"},
        "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": "task"}, *messages],
        "trajectory_format": "mini-swe-agent-1.1",
    }
    return json.dumps(data, indent=2).splitlines()


def parse(lines: list[str], exit_code: int = 0) -> list[Event]:
    parser = MiniStreamParser()
    events = [event for line in lines for event in parser.feed(line)]
    return events + parser.close(exit_code)


USAGE = {
    "prompt_tokens": 321,
    "completion_tokens": 54,
    "prompt_tokens_details": {"cached_tokens": 21},
    "completion_tokens_details": {"reasoning_tokens": 3},
}


def test_each_saved_trajectory_adds_only_its_new_messages() -> None:
    first = [assistant("c1", "echo hi > proof.txt", USAGE), tool("c1", "")]
    submit = "printf '%s\\n' COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && cat <<'E'\nDONE\nE"
    second = [*first, assistant("c2", submit, USAGE), exit_message("Submitted", "DONE\n")]
    lines = [
        "Building agent config",
        "{",  # a transcript line that opens no trajectory
        "mini-swe-agent (step 1, $0.00):",
        *trajectory(first),
        "}",  # nor does this one close one
        *trajectory(second, "Submitted", "DONE\n"),
        "Saved trajectory to '/dev/stdout'",
    ]
    events = parse(lines)
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert len(calls) == 2
    first_call = (calls[0].name, calls[0].call_id, calls[0].input)
    assert first_call == ("bash", "c1", {"command": "echo hi > proof.txt"})
    assert [(r.call_id, r.is_error) for r in events if isinstance(r, ToolResult)] == [("c1", False)]
    summary = summarize(events)
    assert summary.final_text == "DONE\n" and summary.finished and not summary.model_failed
    usage = summary.usage.to_json()
    assert (usage["input"], usage["output"], usage["cache_read"], usage["reasoning"]) == (600, 108, 42, 6)
    assert usage["cache_write"] == "not_reported"


def test_an_exit_other_than_submitted_fails_the_run_whatever_the_exit_code() -> None:
    for status, code in [("RepeatedFormatError", 0), ("BadRequestError", 1), ("LimitsExceeded", 0)]:
        lines = trajectory([exit_message(status, content=f"{status} details")], status)
        events = parse(lines, code)
        errors = [e for e in events if isinstance(e, ErrorEvent)]
        assert errors and errors[0].fatal and status in errors[0].message
        summary = summarize(events)
        assert summary.final_text is None and summary.model_failed


def test_a_submission_behind_a_failed_exit_code_or_no_exit_is_no_answer() -> None:
    done = trajectory([exit_message("Submitted", "DONE")], "Submitted", "DONE")
    assert summarize(parse(done, 1)).final_text is None
    assert summarize(parse(done, 0)).final_text == "DONE"
    cut = trajectory([assistant("c1", "ls")])
    assert not summarize(parse(cut, 0)).finished or summarize(parse(cut, 0)).final_text is None
    assert summarize(parse(done[:-1], 0)).final_text is None  # the trajectory never closed


def test_a_flood_inside_a_trajectory_is_bounded() -> None:
    parser = MiniStreamParser()
    line = "  " + "x" * 1_000_000
    events = [parser.feed("{")] + [parser.feed(line) for _ in range(MAX_TEXT // 1_000_000 + 2)]
    flat = [e for batch in events for e in batch]
    assert len(flat) == 1 and isinstance(flat[0], ErrorEvent) and not flat[0].fatal
    assert parser._block is None


def _trajectories() -> list[dict[str, Any]]:
    found = []
    for stream in sorted(GOLDEN.glob("*/stream.jsonl")):
        lines = stream.read_text(encoding="utf-8").splitlines()
        # The last trajectory saved: from the last "{" line to the next line starting with "}".
        start = max(i for i, line in enumerate(lines) if line == "{")
        end = next(i for i in range(start, len(lines)) if lines[i].startswith("}"))
        found.append(json.loads("\n".join([*lines[start:end], "}"])))
    return found


TRAJECTORIES = _trajectories()


def test_the_golden_streams_hold_trajectories() -> None:
    assert len(TRAJECTORIES) >= 4


@FUZZ
@given(data=st.data(), exit_code=st.sampled_from([0, 1, None]))
def test_a_mutated_trajectory_yields_only_events(data: st.DataObject, exit_code: int | None) -> None:
    value: Any = data.draw(st.sampled_from(TRAJECTORIES))
    for _ in range(data.draw(st.integers(1, 4))):
        depth = data.draw(st.integers(0, 6))
        path = data.draw(st.sampled_from([p for p in paths(value) if len(p) <= depth] or [()]))
        if data.draw(st.booleans()) or not path:
            value = put(value, path, data.draw(VALUES))
        else:
            value = drop(value, path)
    text = json.dumps(value, indent=2, ensure_ascii=data.draw(st.booleans()))
    lines = [delivered(line) for line in text.splitlines()]
    if data.draw(st.booleans()) and lines:
        lines = lines[: data.draw(st.integers(0, len(lines)))]
    parser = FAMILY.parser()
    for line in lines:
        check(parser.feed(line))
    check(parser.close(exit_code))


def test_amp_and_auggie_are_unverified_data_no_real_test_claims(monkeypatch: pytest.MonkeyPatch) -> None:
    from tackroom.adapters.resolve import resolve_builtins
    from tackroom.families import get_family

    monkeypatch.syspath_prepend(str(Path(__file__).parent / "real"))
    from realkit import REAL

    adapters = resolve_builtins()
    for name in ("amp", "auggie"):
        spec = adapters[name].spec
        assert spec.verified_with is None and spec.model_endpoint is None, name
        assert not get_family(adapters[name].family).verified
        assert name not in REAL
    assert "mini-swe-agent" in REAL
