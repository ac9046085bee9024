"""The openhands family's edge cases: human lines between events, an error behind exit 0, its state file."""

from __future__ import annotations

import json
from pathlib import Path

from tackroom.families import get_family
from tackroom.families.openhands.stream import OpenHandsStreamParser
from tackroom.run.result import summarize
from tackroom.trace.events import Event, SessionStarted, ToolCall, ToolResult

CONVERSATION = "79f4773fa3ca4e87914dee2fc524be61"


def agent(text: object) -> str:
    content = [{"type": "text", "text": text}]
    return json.dumps({"kind": "MessageEvent", "source": "agent", "llm_message": {"content": content}})


def parse(lines: list[str], exit_code: int = 0) -> list[Event]:
    parser = OpenHandsStreamParser()
    events = [event for line in lines for event in parser.feed(line)]
    return events + parser.close(exit_code)


def test_events_among_human_lines() -> None:
    lines = [
        "Initializing agent...",
        json.dumps({"kind": "MessageEvent", "source": "user", "llm_message": {"content": "go"}}),
        json.dumps(
            {
                "kind": "ActionEvent",
                "tool_name": "terminal",
                "tool_call_id": "c1",
                "action": {"command": "ls"},
            }
        ),
        json.dumps(
            {
                "kind": "ObservationEvent",
                "tool_call_id": "c1",
                "observation": {"content": [{"type": "text", "text": "a"}]},
            }
        ),
        agent("DONE"),
        "│ Agent finished │",
        f"Conversation ID: {CONVERSATION[:8]}-{CONVERSATION[8:]}",
        f"Conversation ID: {'f' * 32}",
    ]
    events = parse(lines)
    assert [(e.name, e.input) for e in events if isinstance(e, ToolCall)] == [("terminal", {"command": "ls"})]
    assert [e.output for e in events if isinstance(e, ToolResult)] == ["a"]
    assert [e.session_id for e in events if isinstance(e, SessionStarted)] == [CONVERSATION]
    summary = summarize(events)
    assert summary.final_text == "DONE" and not summary.model_failed


def test_a_conversation_error_fails_the_run_despite_exit_0() -> None:
    error = {"kind": "ConversationErrorEvent", "code": "LLMBadRequestError", "detail": "BadRequest - BOOM"}
    summary = summarize(parse([agent("partial"), json.dumps(error)], exit_code=0))
    assert summary.model_failed and summary.error == "BadRequest - BOOM"
    summary = summarize(parse([json.dumps({"kind": "ConversationErrorEvent", "detail": 5})]))
    assert summary.model_failed and summary.error == "openhands reported an error"


def test_garbage_is_ignored() -> None:
    lines = ["", "{", "[1]", '{"kind": 3}', "{" * 200 + "}" * 200, agent(7), agent("ok")]
    assert summarize(parse(lines)).final_text == "ok"


def state(home: Path, conversation: str, data: object) -> None:
    path = home / ".openhands" / "conversations" / conversation / "base_state.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(data), encoding="utf-8")


def test_usage_comes_from_the_named_conversation(tmp_path: Path) -> None:
    figures = {"prompt_tokens": 321, "completion_tokens": 54, "cache_read_tokens": 21, "reasoning_tokens": 3}
    state(
        tmp_path,
        CONVERSATION,
        {"stats": {"usage_to_metrics": {"agent": {"accumulated_token_usage": figures}}}},
    )
    family = get_family("openhands")
    events = family.after_exit(tmp_path, {}, [SessionStarted(session_id=CONVERSATION)])
    assert summarize(events).usage.to_json() == {
        "input": 300,
        "output": 54,
        "cache_read": 21,
        "cache_write": "not_reported",
        "reasoning": 3,
    }
    # No conversation named, one that is no id, or a state that is not JSON: nothing is invented.
    assert family.after_exit(tmp_path, {}, []) == []
    assert family.after_exit(tmp_path, {}, [SessionStarted(session_id="../x")]) == []
    state(tmp_path, "a" * 32, "not a dict")
    assert family.after_exit(tmp_path, {}, [SessionStarted(session_id="a" * 32)]) == []
