"""The acp family: tackroom as an ACP client, driven against a scripted agent (a real subprocess).

The parser's edges are tested on lines; the conversation (what tackroom writes
back, permission answers, closing stdin, stopping an agent that does not
exit) through the runner, against ``fakes/fake_acp_agent.py``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tackroom.adapters.resolve import Adapter, load_adapters
from tackroom.families import get_family
from tackroom.families.acp import AcpClient, prompt_usage, tool_output
from tackroom.run.result import summarize
from tackroom.run.runner import run
from tackroom.trace.events import (
    AssistantText,
    ErrorEvent,
    Event,
    Finished,
    SessionStarted,
    ToolCall,
    ToolResult,
    Usage,
)

FAKE = Path(__file__).parent / "fakes" / "fake_acp_agent.py"


def fake_acp(config_dir: Path, *args: str, name: str = "fake-acp") -> Adapter:
    """An operator adapter of the acp family (extending claude-code-acp) whose agent is the fake."""
    argv = ", ".join(json.dumps(a) for a in [str(FAKE), *args])
    table = (
        f'[adapter.{name}]\nextends = "claude-code-acp"\nexecutable = "{sys.executable}"\n'
        f'one_shot = [{argv}, "{{{{opt.auto_accept}}}}", "{{{{opt.model}}}}"]\n'
    )
    (config_dir / "adapters.d" / f"{name}.toml").write_text(table, encoding="utf-8")
    return load_adapters(config=config_dir)[name]


def rpc(**fields: Any) -> str:
    return json.dumps({"jsonrpc": "2.0", **fields})


def update(body: dict[str, Any]) -> str:
    return rpc(method="session/update", params={"sessionId": "s", "update": body})


def converse(
    lines: list[str], *, auto_accept: bool = False
) -> tuple[list[Event], list[dict[str, Any]], bool]:
    """Events, what the client wrote, and whether it is over, after ``lines`` from the agent."""
    client = AcpClient()
    client.begin("the prompt", Path("/work"), {"auto_accept": auto_accept})
    written = [json.loads(line) for line in client.outgoing()]
    events: list[Event] = []
    for line in lines:
        events += client.feed(line)
        written += [json.loads(out) for out in client.outgoing()]
    return events + client.close(0), written, client.over


HANDSHAKE = [
    rpc(id=0, result={"protocolVersion": 1, "agentCapabilities": {}}),
    rpc(id=1, result={"sessionId": "s-1"}),
]


# --- the parser, line by line ---------------------------------------------------------------------


def test_the_family_is_registered() -> None:
    assert get_family("acp").parser().__class__ is AcpClient


def test_the_handshake_initializes_opens_a_session_in_the_workdir_and_prompts() -> None:
    events, written, over = converse(HANDSHAKE)
    assert [w["method"] for w in written] == ["initialize", "session/new", "session/prompt"]
    assert [w["id"] for w in written] == [0, 1, 2]
    assert written[0]["params"]["protocolVersion"] == 1
    assert written[0]["params"]["clientCapabilities"] == {
        "fs": {"readTextFile": False, "writeTextFile": False},
        "terminal": False,
    }
    assert written[1]["params"] == {"cwd": "/work", "mcpServers": []}
    assert written[2]["params"] == {"sessionId": "s-1", "prompt": [{"type": "text", "text": "the prompt"}]}
    assert events == [SessionStarted(HANDSHAKE[1], session_id="s-1")]
    assert not over


def test_chunks_become_one_message_per_run_of_chunks_and_the_last_is_the_final_text() -> None:
    chunk = {"sessionUpdate": "agent_message_chunk"}
    lines = [
        *HANDSHAKE,
        update({**chunk, "content": {"type": "text", "text": "a"}}),
        update({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "thinking"}}),
        update({**chunk, "content": {"type": "text", "text": "b"}}),
        update({"sessionUpdate": "plan", "entries": []}),
        update({**chunk, "content": {"type": "image", "data": "..."}}),
        update({**chunk, "content": {"type": "text", "text": "c"}}),
        rpc(id=2, result={"stopReason": "end_turn"}),
    ]
    events, _, over = converse(lines)
    assert [e.text for e in events if isinstance(e, AssistantText)] == ["ab", "c"]
    assert events[-1] == Finished(lines[-1], final_text="c", ok=True)
    assert over
    assert summarize(events).usage == Usage()


def test_a_tool_call_is_merged_by_id_into_a_call_and_a_result() -> None:
    call = {"toolCallId": "t1", "title": "Terminal", "kind": "execute", "rawInput": {}}
    lines = [
        *HANDSHAKE,
        update({"sessionUpdate": "tool_call", "status": "pending", **call}),
        update({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "rawInput": {"command": "ls"}}),
        update(
            {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "rawInput": {}, "status": "in_progress"}
        ),
        update(
            {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed", "rawOutput": "x"}
        ),
    ]
    events, _, _ = converse(lines)
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert calls == [ToolCall(lines[4], name="execute", call_id="t1", input={"command": "ls"})]
    assert [e for e in events if isinstance(e, ToolResult)] == [
        ToolResult(lines[5], call_id="t1", output="x", is_error=False)
    ]


def test_a_failed_tool_call_is_an_error_result_with_its_content_text() -> None:
    content = [{"type": "content", "content": {"type": "text", "text": "no"}}, {"type": "diff"}]
    assert tool_output({"content": content}) == "no"
    assert tool_output({"rawOutput": {"not": "text"}}) is None
    lines = [
        *HANDSHAKE,
        update({"sessionUpdate": "tool_call", "toolCallId": "t", "status": "failed", "content": content}),
    ]
    events, _, _ = converse(lines)
    assert [type(e) for e in events[1:]] == [ToolCall, ToolResult]
    assert events[-1] == ToolResult(lines[-1], call_id="t", output="no", is_error=True)


def test_the_agents_own_tool_name_comes_from_its_meta() -> None:
    body = {"sessionUpdate": "tool_call", "toolCallId": "t", "status": "in_progress", "kind": "read"}
    named = {**body, "_meta": {"claudeCode": {"toolName": "Bash"}}}
    events, _, _ = converse([*HANDSHAKE, update(named), update({**body, "toolCallId": "u"})])
    assert [e.name for e in events if isinstance(e, ToolCall)] == ["Bash", "read"]


@pytest.mark.parametrize(
    ("auto_accept", "chosen", "denied"), [(True, "allow", False), (False, "reject", True)]
)
def test_a_permission_request_is_answered_from_the_options(
    auto_accept: bool, chosen: str, denied: bool
) -> None:
    options = [
        {"optionId": "always", "kind": "allow_always"},
        {"optionId": "allow", "kind": "allow_once"},
        {"optionId": "reject", "kind": "reject_once"},
    ]
    tool = {"toolCallId": "t", "title": "rm -rf /", "rawInput": {"command": "rm -rf /"}}
    ask = rpc(
        id=7,
        method="session/request_permission",
        params={"sessionId": "s", "toolCall": tool, "options": options},
    )
    events, written, _ = converse([*HANDSHAKE, ask], auto_accept=auto_accept)
    assert written[-1] == {
        "jsonrpc": "2.0",
        "id": 7,
        "result": {"outcome": {"outcome": "selected", "optionId": chosen}},
    }
    # The call the user was asked about is a call, whatever the answer.
    assert ToolCall(ask, name="other", call_id="t", input={"command": "rm -rf /"}) in events
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert [e.fatal for e in errors] == ([False] if denied else [])
    assert all("'rm -rf /' denied" in e.message and "auto_accept" in e.message for e in errors)


def test_a_permission_request_with_no_fitting_option_is_cancelled() -> None:
    ask = rpc(
        id=3, method="session/request_permission", params={"options": [{"optionId": "x", "kind": "odd"}]}
    )
    _, written, _ = converse([*HANDSHAKE, ask], auto_accept=True)
    assert written[-1]["result"] == {"outcome": {"outcome": "cancelled"}}


def test_requests_tackroom_did_not_offer_get_method_not_found() -> None:
    ask = rpc(id="r", method="terminal/create", params={"command": "ls"})
    events, written, _ = converse([*HANDSHAKE, ask])
    assert written[-1] == {
        "jsonrpc": "2.0",
        "id": "r",
        "error": {"code": -32601, "message": "tackroom does not offer terminal/create"},
    }
    assert events == [SessionStarted(HANDSHAKE[1], session_id="s-1")]


def test_the_prompt_answers_usage_is_the_runs_total() -> None:
    usage = {
        "inputTokens": 3,
        "outputTokens": 4,
        "cachedReadTokens": 5,
        "cachedWriteTokens": 6,
        "thoughtTokens": 1,
    }
    assert prompt_usage(usage) == Usage(input=3, output=4, cache_read=5, cache_write=6, reasoning=1)
    assert prompt_usage({"inputTokens": True, "outputTokens": "4"}) == Usage()
    events, _, _ = converse([*HANDSHAKE, rpc(id=2, result={"stopReason": "end_turn", "usage": usage})])
    assert summarize(events).usage == Usage(input=3, output=4, cache_read=5, cache_write=6, reasoning=1)


@pytest.mark.parametrize(
    ("line", "said"),
    [
        (
            rpc(id=0, error={"code": -32000, "message": "Authentication required"}),
            "initialize failed: Authentication",
        ),
        (rpc(id=0, result={"protocolVersion": 2}), "ACP version 2"),
        (rpc(id=0, result="nope"), "initialize failed: no message"),
    ],
)
def test_a_failed_initialize_ends_the_conversation(line: str, said: str) -> None:
    events, written, over = converse([line])
    assert over and [w["method"] for w in written] == ["initialize"]
    assert isinstance(events[0], ErrorEvent) and events[0].fatal and said in events[0].message
    assert events[-1] == Finished(line, final_text=None, ok=False)
    assert summarize(events).model_failed


def test_a_session_without_an_id_and_a_refused_prompt_fail_the_run() -> None:
    events, _, over = converse([HANDSHAKE[0], rpc(id=1, result={})])
    assert over and "no sessionId" in str(events[0])
    refused = rpc(
        id=2, error={"code": -32603, "message": "Internal error", "data": {"details": "API Error: 400"}}
    )
    events, _, over = converse([*HANDSHAKE, refused])
    assert over and any(
        isinstance(e, ErrorEvent) and "Internal error: API Error: 400" in e.message for e in events
    )
    assert summarize(events).model_failed
    for data in ("as text", {"message": "as text", "codex_error_info": "other"}):
        refused = rpc(id=2, error={"code": -32603, "message": "Internal error", "data": data})
        events, _, _ = converse([*HANDSHAKE, refused])
        assert "session/prompt failed: Internal error: as text" in str(events)


@pytest.mark.parametrize("stop", ["max_tokens", "refusal", "cancelled", None])
def test_a_turn_that_did_not_end_normally_is_a_failure(stop: str | None) -> None:
    events, _, _ = converse([*HANDSHAKE, rpc(id=2, result={"stopReason": stop} if stop else {})])
    assert not summarize(events).finished or summarize(events).model_failed
    assert isinstance(events[-1], Finished) and not events[-1].ok


@pytest.mark.parametrize(
    "line",
    [
        "not json",
        "[1, 2]",
        json.dumps({"id": 0, "result": {}}),  # not JSON-RPC 2.0
        rpc(id=True, result={}),
        rpc(id=99, result={}),
        rpc(method="session/update", params="x"),
        rpc(method="session/update", params={"update": {"sessionUpdate": "tool_call", "toolCallId": 5}}),
        # A status of another type than text (found by the hostile-stream fuzzer): no status at all.
        rpc(
            method="session/update",
            params={"update": {"sessionUpdate": "tool_call", "toolCallId": "t", "status": []}},
        ),
        rpc(method="other/notification"),
        rpc(result={}),
        "{" * 5000,
        "[" * 100 + "]" * 100,
        '{"jsonrpc": "2.0", "method": "session/update", "params": {"update": ' * 80 + "{}" + "}}" * 80,
    ],
)
def test_any_line_is_taken_without_raising(line: str) -> None:
    events, _, over = converse([*HANDSHAKE, line])
    assert not over
    assert all(isinstance(e, SessionStarted | ErrorEvent) for e in events)


def test_answers_after_the_end_are_ignored() -> None:
    end = rpc(id=2, result={"stopReason": "end_turn"})
    events, _, _ = converse([*HANDSHAKE, end, end, rpc(id=1, result={"sessionId": "other"})])
    assert sum(isinstance(e, Finished) for e in events) == 1
    assert sum(isinstance(e, SessionStarted) for e in events) == 1


def test_memory_stays_bounded_whatever_the_agent_streams() -> None:
    client = AcpClient()
    client.begin("p", Path("/w"), {})
    for line in HANDSHAKE:
        client.feed(line)
    for i in range(10_050):
        # Started, never ended.
        client.feed(update({"sessionUpdate": "tool_call", "toolCallId": f"t{i}", "status": "in_progress"}))
    big = "x" * (1024 * 1024)
    for _ in range(10):
        client.feed(
            update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": big}})
        )
    assert len(client._tools) <= 10_000 and len(client._called) <= 10_000
    assert client._message_size <= 8 * 1024 * 1024


# --- the conversation, through the runner -----------------------------------------------------------


def run_fake(config_dir: Path, tmp_path: Path, *args: str, **kwargs: Any) -> Any:
    workdir = tmp_path / "work"
    workdir.mkdir(exist_ok=True)
    kwargs.setdefault("timeout_s", 30.0)
    return run(
        fake_acp(config_dir, *args), "hello agent", workdir=workdir, runs_dir=tmp_path / "runs", **kwargs
    )


def test_a_run_accepts_the_tool_and_the_agent_exits_on_eof(config_dir: Path, tmp_path: Path) -> None:
    result = run_fake(config_dir, tmp_path, options={"auto_accept": True})
    assert result.ok, result.error
    assert result.exit_code == 0 and not result.released
    assert (tmp_path / "work" / "allowed.txt").read_text() == "yes"
    # The prompt went in session/prompt; the file system request tackroom did not offer was refused.
    assert result.final_text == "You said: hello agent (fs answered -32601)"
    assert result.session_id is not None and result.session_id.startswith("fake-session-")
    assert result.usage == Usage(input=11, output=7, cache_read=5, cache_write=2)
    kinds = [e.kind for e in result.events]
    assert kinds == [
        "session_started",
        "assistant_text",
        "tool_call",
        "tool_result",
        "assistant_text",
        "usage",
        "finished",
    ]
    assert [e.name for e in result.events if isinstance(e, ToolCall)] == ["Shell"]


def test_a_run_without_auto_accept_denies_the_tool_with_the_reason(config_dir: Path, tmp_path: Path) -> None:
    result = run_fake(config_dir, tmp_path)
    assert result.ok, result.error
    assert not (tmp_path / "work" / "allowed.txt").exists()
    denied = [e for e in result.events if isinstance(e, ErrorEvent)]
    assert len(denied) == 1 and not denied[0].fatal and "auto_accept is off" in denied[0].message
    results = [e for e in result.events if isinstance(e, ToolResult)]
    assert len(results) == 1 and results[0].is_error and '"optionId": "no"' in (results[0].output or "")


def test_an_agent_that_keeps_serving_is_released_not_failed(config_dir: Path, tmp_path: Path) -> None:
    started = time.monotonic()
    result = run_fake(
        config_dir, tmp_path, "--linger", "--banner", "--no-usage", options={"auto_accept": True}
    )
    assert time.monotonic() - started < 15
    assert result.ok, result.error
    assert result.released and result.exit_code != 0 and not result.timed_out
    assert result.usage == Usage()
    assert json.loads((result.run_dir / "result.json").read_text())["released"] is True
    assert (result.run_dir / "stdout.log").read_text().splitlines()[0] == "fake agent starting"


def test_a_refused_prompt_fails_the_run(config_dir: Path, tmp_path: Path) -> None:
    result = run_fake(config_dir, tmp_path, "--prompt-error")
    assert not result.ok and result.model_failed
    assert result.error is not None and "session/prompt failed: model unreachable" in result.error


def test_a_newer_protocol_is_refused(config_dir: Path, tmp_path: Path) -> None:
    result = run_fake(config_dir, tmp_path, "--version", "2")
    assert not result.ok and result.error is not None and "ACP version 2" in result.error


def test_an_agent_that_never_answers_times_out_and_is_stopped(config_dir: Path, tmp_path: Path) -> None:
    started = time.monotonic()
    result = run_fake(config_dir, tmp_path, "--hang", timeout_s=2.0)
    assert time.monotonic() - started < 2.0 + 3.0 + 3.0
    assert result.timed_out and not result.ok and not result.released
    assert result.session_id is not None


def test_a_run_out_of_time_cancels_the_turn_and_keeps_what_the_agent_answered(
    config_dir: Path, tmp_path: Path
) -> None:
    started = time.monotonic()
    result = run_fake(config_dir, tmp_path, "--cancellable", timeout_s=2.0)
    assert time.monotonic() - started < 2.0 + 3.0
    assert result.timed_out and not result.ok
    asked = (tmp_path / "work" / "cancelled.txt").read_text()
    assert result.session_id is not None and result.session_id in asked
    # The agent ended its turn when asked: its answer (usage so far) is in the result, and it
    # exited on EOF rather than being signalled.
    assert (result.usage.input, result.usage.output) == (3, 1)
    assert any("tackroom cancelled the turn" in e.message for e in result.events if isinstance(e, ErrorEvent))
    assert result.exit_code == 0


def test_cancel_is_said_only_inside_a_session_and_only_once_the_turn_is_open() -> None:
    client = AcpClient()
    client.begin("hi", Path("/w"), {})
    client.outgoing()
    assert client.cancel() == [] and client.outgoing() == []  # no session yet: nothing to cancel
    client.feed(json.dumps({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1}}))
    client.feed(json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s-1"}}))
    client.outgoing()
    client.cancel()
    said = [json.loads(line) for line in client.outgoing()]
    assert said == [{"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s-1"}}]
    events = client.feed(json.dumps({"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "cancelled"}}))
    assert client.over and not events[-1].ok
    client.cancel()
    assert client.outgoing() == []  # over: nothing more is said


# --- the same harness, another transport --------------------------------------------------------------


def two_ways(config_dir: Path) -> None:
    """``fake-stream`` (a claude-code adapter) reaching the fake agent over ACP through ``fake-acp``."""
    fake_acp(config_dir)
    table = (
        '[adapter.fake-stream]\nextends = "claude-code"\n[adapter.fake-stream.transports]\nacp = "fake-acp"\n'
    )
    (config_dir / "adapters.d" / "fake-stream.toml").write_text(table, encoding="utf-8")


def test_a_declared_transport_runs_its_adapter(config_dir: Path, tmp_path: Path) -> None:
    two_ways(config_dir)
    adapters = load_adapters(config=config_dir)
    result = run(
        "fake-stream",
        "over acp",
        transport="acp",
        adapters=adapters,
        workdir=tmp_path,
        runs_dir=tmp_path / "runs",
        options={"auto_accept": True},
        timeout_s=30.0,
    )
    assert result.ok, result.error
    assert result.adapter == "fake-acp" and result.final_text == "You said: over acp (fs answered -32601)"
    # An adapter of that family already is reached that way.
    same = run(
        "fake-acp", "again", transport="acp", adapters=adapters, workdir=tmp_path, runs_dir=tmp_path / "runs"
    )
    assert same.adapter == "fake-acp" and same.ok, same.error


def test_the_built_in_transports_name_adapters_of_that_family() -> None:
    from tackroom.adapters.resolve import resolve_builtins

    builtins = resolve_builtins()
    declared = {
        (name, transport, target)
        for name in builtins
        for transport, target in builtins[name].effective.get("transports", {}).items()
    }
    assert ("claude-code", "acp", "claude-code-acp") in declared
    for name, transport, target in declared:
        assert get_family(builtins[target].family).protocol == transport, (name, transport, target)


@pytest.mark.parametrize(
    ("extends", "table", "said"),
    [
        ("aider", "", "declares no 'acp' transport (it is reached by: aider)"),
        ("claude-code", 'acp = "nowhere"', "through adapter 'nowhere', which does not exist"),
        ("claude-code", 'acp = "codex"', "whose family 'codex' does not speak 'acp'"),
    ],
)
def test_a_transport_not_declared_or_wrongly_declared_is_refused(
    config_dir: Path, tmp_path: Path, extends: str, table: str, said: str
) -> None:
    from tackroom.errors import RunError

    text = f'[adapter.fake-stream]\nextends = "{extends}"\n'
    text += f"[adapter.fake-stream.transports]\n{table}\n" if table else ""
    (config_dir / "adapters.d" / "fake-stream.toml").write_text(text, encoding="utf-8")
    adapters = load_adapters(config=config_dir)
    with pytest.raises(RunError, match=said.replace("(", r"\(").replace(")", r"\)")):
        run(
            "fake-stream",
            "p",
            transport="acp",
            adapters=adapters,
            workdir=tmp_path,
            runs_dir=tmp_path / "runs",
        )
    assert not (tmp_path / "runs").exists()


def test_an_unknown_transport_is_refused_with_the_ways_there_are(config_dir: Path, tmp_path: Path) -> None:
    from tackroom.errors import RunError

    two_ways(config_dir)
    adapters = load_adapters(config=config_dir)
    with pytest.raises(RunError, match=r"declares no 'mcp' transport \(it is reached by: acp, claude-code\)"):
        run(
            "fake-stream",
            "p",
            transport="mcp",
            adapters=adapters,
            workdir=tmp_path,
            runs_dir=tmp_path / "runs",
        )


def test_the_cli_runs_a_transport(config_dir: Path, tmp_path: Path) -> None:
    from clikit import run_cli

    two_ways(config_dir)
    done = run_cli(
        "run", "fake-stream", "from the cli", "--transport", "acp", "--json", "--workdir", str(tmp_path)
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["adapter"] == "fake-acp" and result["final_text"].startswith("You said: from the cli")
    refused = run_cli("run", "fake-stream", "p", "--transport", "mcp", "--workdir", str(tmp_path))
    assert refused.returncode != 0 and "declares no 'mcp' transport" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_each_acp_family_reads_its_agents_usage() -> None:
    answer = {
        "stopReason": "end_turn",
        "usage": {"inputTokens": 3, "outputTokens": 4},
        "_meta": {"quota": {"token_count": {"input_tokens": 30, "output_tokens": 7}}},
    }
    line = rpc(id=2, result=answer)
    found = {}
    for name in ("acp", "acp-codex", "acp-gemini", "acp-qwen", "acp-opencode"):
        family = get_family(name)
        client = family.parser()
        assert isinstance(client, AcpClient)
        client.begin("p", Path("/w"), {})
        events = [e for raw in [*HANDSHAKE, line] for e in client.feed(raw)]
        found[name] = summarize(events).usage
        assert get_family(name).protocol == "acp"  # type: ignore[attr-defined]
    assert found["acp"] == Usage(input=3, output=4)
    assert found["acp-opencode"] == Usage()  # its answer's usage is the last call's, not the turn's
    assert found["acp-qwen"] == Usage(input=3, output=4)  # ACP's own field, where an answer has it
    # Gemini's input_tokens counts cached tokens in, with no cached figure beside it: not reported.
    assert found["acp-gemini"] == Usage(output=7)
    assert get_family("acp-codex").reports_usage == frozenset()
    qwen = get_family("acp-qwen").parser()
    assert isinstance(qwen, AcpClient)
    qwen.begin("p", Path("/w"), {})
    per_call = {"inputTokens": 10, "outputTokens": 2, "thoughtTokens": 0, "cachedReadTokens": 3}
    chunk = {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": ""},
        "_meta": {"usage": per_call},
    }
    events = [
        e
        for raw in [*HANDSHAKE, update(chunk), update(chunk), rpc(id=2, result={"stopReason": "end_turn"})]
        for e in qwen.feed(raw)
    ]
    # Per call, summed; input without the cached part (OpenAI's prompt count includes it).
    assert summarize(events).usage == Usage(input=14, output=4, cache_read=6)
    assert get_family("acp-gemini").reports_usage == {"output"}
