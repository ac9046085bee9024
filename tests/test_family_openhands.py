"""The openhands family's edge cases: human lines between events, an error behind exit 0, its state file."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from tackroom.adapters.resolve import Adapter, resolve_builtins
from tackroom.families import get_family
from tackroom.families.openhands.stream import OpenHandsStreamParser
from tackroom.profile.model import Agent, Hook, McpServer, Profile, Rule
from tackroom.profile.render import Scope, import_native, plan_render, write
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


# --- the profile in OpenHands' own files (fixtures in the shapes 1.16.0 writes and documents) ---

FIXTURES = Path(__file__).parent / "fixtures" / "native" / "openhands"


def _adapter() -> Adapter:
    return resolve_builtins()["openhands"]


def _with_mcp() -> Adapter:
    """The built-in with what 1.16.0 has and no probe has proven yet (see openhands.toml): its
    mcp.json through the openhands-mcp engine, and PostToolUse. The engine is held to the files the
    harness writes before the adapter declares it."""
    built_in = _adapter()
    effective = copy.deepcopy(dict(built_in.effective))
    capabilities = effective["capabilities"]
    capabilities["mcp"] = {
        "path": "${OPENHANDS_PERSISTENCE_DIR:-~/.openhands}/mcp.json",
        "render": "openhands-mcp",
        "keys": {"type": "transport", "enabled": "enabled", "cwd": "cwd"},
    }
    capabilities["hooks"]["events"]["after-tool"] = "PostToolUse"
    return Adapter("openhands", effective, built_in.harness, "test", {})


def test_its_own_files_import_with_nothing_unset_dropped() -> None:
    """mcp.json as `openhands mcp add` writes it (every unset field null), hooks.json in the
    documented snake_case form, an agent file: each item comes in, nothing is dropped."""
    found = import_native(_with_mcp(), root=FIXTURES / "home", scope="home")
    assert found.dropped == ()
    profile = found.profile
    servers = {s.name: s for s in profile.mcp}
    assert servers["fetch"] == McpServer(
        "fetch",
        command="uvx",
        args=("mcp-server-fetch", "--verbose"),
        env=(("FETCH_TOKEN", "${FETCH_TOKEN}"),),
    )
    assert servers["docs"] == McpServer(
        "docs", url="https://docs.example.com/mcp", headers=(("Authorization", "Bearer ${DOCS_TOKEN}"),)
    )
    assert servers["events"] == McpServer(
        "events", url="https://events.example.com/sse", transport="sse", disabled=True
    )
    hooks = {h.moment: h for h in profile.hooks}
    assert hooks["before-tool"].command == "./scripts/block_dangerous.sh"
    assert hooks["before-tool"].matcher == ("shell",)
    assert hooks["before-tool"].timeout == 10.0
    assert hooks["after-tool"].matcher == ()
    assert hooks["turn-end"].command == "npm run lint"
    (agent,) = profile.agents
    assert (agent.name, agent.tools) == ("code-reviewer", ("shell", "openhands:file_editor"))


def test_the_project_reads_agents_md_hooks_and_agents() -> None:
    found = import_native(_adapter(), root=FIXTURES / "project", scope="project")
    assert found.dropped == ()
    profile = found.profile
    assert [r.text for r in profile.rules] == ["# Project notes\n\nRun `make test` before you finish.\n"]
    assert sorted(h.moment for h in profile.hooks) == ["prompt-submit", "session-start"]
    assert [a.name for a in profile.agents] == ["explorer"]


@pytest.mark.parametrize("scope", ["home", "project"])
def test_import_renders_back_into_what_imports_the_same(tmp_path: Path, scope: Scope) -> None:
    found = import_native(_adapter(), root=FIXTURES / scope, scope=scope).profile
    rendered = write(plan_render(found, _adapter(), root=tmp_path, scope=scope))
    assert rendered.drops == ()
    again = import_native(_adapter(), root=tmp_path, scope=scope)
    assert again.dropped == ()
    assert again.profile == found


def test_a_rendered_profile_lands_where_openhands_reads_it(tmp_path: Path) -> None:
    profile = Profile(
        rules=(Rule("style", "Use tabs.\n"),),
        agents=(Agent("rev", "Reviews.", "You review.\n", tools=("shell",)),),
        mcp=(McpServer("s", command="srv", args=("--x",)),),
        hooks=(
            Hook("guard", "before-tool", "refuse", text="no", matcher=("shell",)),
            Hook("ctx", "prompt-submit", "inject", text="hello"),
        ),
    )
    rendered = write(plan_render(profile, _adapter(), root=tmp_path))
    assert [(d.kind, d.name, d.reason) for d in rendered.drops] == [("MCP server", "s", "no mcp capability")]
    write(plan_render(profile, _with_mcp(), root=tmp_path))
    assert "Use tabs." in (tmp_path / ".openhands/microagents/rules.md").read_text()
    assert "- terminal" in (tmp_path / ".openhands/agents/rev.md").read_text()
    mcp = json.loads((tmp_path / ".openhands/mcp.json").read_text())
    assert mcp == {"mcpServers": {"s": {"transport": "stdio", "command": "srv", "args": ["--x"]}}}
    hooks = json.loads((tmp_path / ".openhands/hooks.json").read_text())["hooks"]
    assert hooks["PreToolUse"][0]["matcher"] == "terminal"
    assert '"decision":"deny"' in hooks["PreToolUse"][0]["hooks"][0]["command"]
    assert '"additionalContext"' in hooks["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert import_native(_adapter(), root=tmp_path).profile.hooks == tuple(
        sorted(profile.hooks, key=lambda h: h.name)
    )


def test_hooks_outside_the_wrapper_are_never_hidden_behind_one(tmp_path: Path) -> None:
    """OpenHands reads only the {"hooks": ...} wrapper when there is one: adding it to a file of
    top-level events would silence the user's hooks, so nothing is rendered there."""
    home = tmp_path / ".openhands"
    home.mkdir()
    mine = '{"stop": [{"hooks": [{"command": "make lint"}]}]}\n'
    (home / "hooks.json").write_text(mine)
    hook = Hook("tr", "turn-end", "command", command="echo hi")
    rendered = write(plan_render(Profile(hooks=(hook,)), _adapter(), root=tmp_path))
    assert [(d.name, "outside a 'hooks' wrapper" in d.reason) for d in rendered.drops] == [("tr", True)]
    assert (home / "hooks.json").read_text() == mine


def test_a_fractional_hook_timeout_is_dropped_by_name(tmp_path: Path) -> None:
    """HookDefinition.timeout is an int: 1.5 would fail the whole file, so the field goes, said."""
    hook = Hook("slow", "session-start", "command", command="sleep 1", timeout=1.5)
    rendered = write(plan_render(Profile(hooks=(hook,)), _adapter(), root=tmp_path))
    assert [(d.name, d.field) for d in rendered.drops] == [("slow", "timeout")]
    handler = json.loads((tmp_path / ".openhands/hooks.json").read_text())["hooks"]["SessionStart"][0]
    assert "timeout" not in handler["hooks"][0]


def test_project_files_that_run_code_need_trust() -> None:
    project = set(_adapter().spec.trust.project)
    assert {".openhands/hooks.json", ".env", ".openhands/agents", ".agents/agents"} <= project
