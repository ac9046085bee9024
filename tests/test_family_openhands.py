"""The openhands family's edge cases: human lines between events, an error behind exit 0, its state file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tackroom.adapters.resolve import Adapter, resolve_builtins
from tackroom.families import get_family
from tackroom.families.openhands.stream import OpenHandsStreamParser
from tackroom.profile.model import Agent, Command, Hook, McpServer, Profile, Rule
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


def test_its_own_files_import_with_nothing_unset_dropped() -> None:
    """mcp.json as `openhands mcp add` writes it (every unset field null), hooks.json in the
    documented snake_case form, an agent file: each item comes in, nothing is dropped."""
    found = import_native(_adapter(), root=FIXTURES / "home", scope="home")
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
    assert rendered.drops == ()
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


# --- MCP tools under their bare names (fastmcp names a lone server's tools so) ---


def test_the_mock_calls_a_lone_servers_tool_by_its_own_name() -> None:
    """The probe's one server: fastmcp offers its tool as `tr_echo`, and the mock calls that."""
    from tackroom.run.services import vocabulary

    assert vocabulary(_adapter()).translate("mcp:trprobe/tr_echo").name == "tr_echo"


def test_mcp_tools_in_hook_matchers_and_agent_tools_are_dropped_by_name(tmp_path: Path) -> None:
    """A bare name says no server: `tr_echo` could not be read back as mcp("trprobe/tr_echo"), so
    a matcher or a tool list naming an MCP tool is not written (and a whole server's tools are never
    widened to every tool)."""
    profile = Profile(
        agents=(Agent("rev", "Reviews.", "You review.\n", tools=("shell", 'mcp("trprobe/tr_echo")')),),
        hooks=(
            Hook("one", "after-tool", "command", command="true", matcher=('mcp("trprobe/tr_echo")',)),
            Hook("all", "before-tool", "command", command="true", matcher=('mcp("trprobe")',)),
        ),
    )
    rendered = write(plan_render(profile, _adapter(), root=tmp_path))
    drops = {(d.name, d.field): d.reason for d in rendered.drops}
    assert set(drops) == {("one", None), ("all", None), ("rev", "tools")}
    assert "openhands names an MCP tool without its server" in drops[("one", None)]
    assert "openhands names an MCP tool without its server" in drops[("all", None)]
    assert not (tmp_path / ".openhands/hooks.json").exists()
    assert "- terminal" in (tmp_path / ".openhands/agents/rev.md").read_text()


def test_a_bare_mcp_tool_name_reads_back_as_the_harness_own(tmp_path: Path) -> None:
    """An agent's or a hook's `tr_echo` stays openhands:tr_echo on import, and is written back as it was."""
    agents = tmp_path / ".openhands/agents"
    agents.mkdir(parents=True)
    (agents / "echoer.md").write_text(
        "---\nname: echoer\ndescription: Echoes.\ntools:\n- terminal\n- tr_echo\n---\nYou echo.\n"
    )
    hooks = {
        "hooks": {"PostToolUse": [{"matcher": "tr_echo", "hooks": [{"type": "command", "command": "true"}]}]}
    }
    (tmp_path / ".openhands/hooks.json").write_text(json.dumps(hooks))
    found = import_native(_adapter(), root=tmp_path, scope="home")
    assert found.dropped == ()
    (agent,) = found.profile.agents
    assert agent.tools == ("shell", "openhands:tr_echo")
    (hook,) = found.profile.hooks
    assert (hook.moment, hook.matcher) == ("after-tool", ("openhands:tr_echo",))
    again = tmp_path / "again"
    assert write(plan_render(found.profile, _adapter(), root=again, scope="home")).drops == ()
    assert import_native(_adapter(), root=again, scope="home").profile == found.profile


def test_after_tool_is_post_tool_use(tmp_path: Path) -> None:
    hook = Hook("after", "after-tool", "command", command="echo done")
    assert write(plan_render(Profile(hooks=(hook,)), _adapter(), root=tmp_path)).drops == ()
    groups = json.loads((tmp_path / ".openhands/hooks.json").read_text())["hooks"]["PostToolUse"]
    assert groups[0]["matcher"] == "*"
    assert import_native(_adapter(), root=tmp_path).profile.hooks == (hook,)


def test_a_profiles_commands_are_dropped_by_name_and_the_matrix_says_why(tmp_path: Path) -> None:
    """1.16.0 expands no command (a "/name" skill trigger appends the body, $ARGUMENTS unfilled): no
    commands capability, and the lacks entry says so."""
    openhands = _adapter()
    assert openhands.spec.capabilities.commands is None
    assert "$ARGUMENTS unfilled" in openhands.spec.lacks["commands"]
    command = Command("review", "Review a change.", "Review $ARGUMENTS.\n")
    rendered = plan_render(Profile(commands=(command,)), openhands, root=tmp_path)
    assert [(d.kind, d.name, d.reason) for d in rendered.drops] == [
        ("command", "review", "no commands capability")
    ]
