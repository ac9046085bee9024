"""Cline's engines, held to what cline 3.0.65 does with the files they write.

MCP servers go to ``cline_mcp_settings.json`` (``cline-mcp``), hooks to one script per event
(``cline-hooks``), commands to workflows (``cline-workflows``) and subagents to ``*.yaml`` files
(``cline-agents``). Each renders and imports back exactly, and what it cannot say is dropped by
name. The hook script is run here with bash, as cline runs it; a workflow's text is expanded the
way cline's bundle expands ``/<name> args``. The real binary proves the rest
(``tests/real/test_cline_real.py``, and the probe).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tackroom.adapters.resolve import Adapter, resolve_builtins
from tackroom.conformance import assert_adapter_conformance, assert_adapter_loads_hooks
from tackroom.families import get_family
from tackroom.profile.model import Agent, Command, Hook, McpServer, Profile
from tackroom.profile.render import Imported, Scope, import_native, plan_render, write

HOME = Path(__file__).parent / "fixtures" / "native" / "cline" / "home"
MCP = Path(".cline/data/settings/cline_mcp_settings.json")
HOOKS = Path(".cline/hooks")
WORKFLOWS = Path(".cline/workflows")
AGENTS = Path(".cline/agents")


@pytest.fixture(scope="module")
def cline() -> Adapter:
    return resolve_builtins()["cline"]


def render(
    adapter: Adapter, root: Path, profile: Profile, scope: Scope = "home"
) -> list[tuple[str, str, str | None]]:
    """Write ``profile`` for cline under ``root``; the drops as (name, reason, field)."""
    rendered = write(plan_render(profile, adapter, root=root, scope=scope, workdir=root))
    return [(d.name, d.reason, d.field) for d in rendered.drops]


def back(adapter: Adapter, root: Path, scope: Scope = "home") -> Imported:
    return import_native(adapter, root=root, scope=scope, workdir=root)


def test_the_family_serves_its_engines_and_the_adapter_conforms(cline: Adapter) -> None:
    engines = [e.name for e in get_family("cline").engines()]
    assert engines == ["cline-mcp", "cline-hooks", "cline-workflows", "cline-agents"]
    assert_adapter_conformance(cline)
    assert_adapter_loads_hooks(cline)


# --- MCP ---------------------------------------------------------------------------------------


def test_servers_are_written_in_clines_shape_and_read_back(cline: Adapter, tmp_path: Path) -> None:
    servers = (
        McpServer("db", command="python3", args=("-m", "db"), env=(("MODE", "ro"),), cwd="/srv", timeout=5.0),
        McpServer("docs", url="https://mcp.example.test/mcp", headers=(("X-Team", "a"),), disabled=True),
        McpServer("old", url="http://127.0.0.1:9/sse", transport="sse"),
    )
    assert render(cline, tmp_path, Profile(mcp=servers)) == []
    written = json.loads((tmp_path / MCP).read_text(encoding="utf-8"))["mcpServers"]
    assert written == {
        "db": {
            "type": "stdio",
            "command": "python3",
            "args": ["-m", "db"],
            "env": {"MODE": "ro"},
            "cwd": "/srv",
            "timeout": 5,
        },
        "docs": {
            "type": "streamableHttp",
            "url": "https://mcp.example.test/mcp",
            "headers": {"X-Team": "a"},
            "disabled": True,
        },
        "old": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
    }
    assert back(cline, tmp_path).profile.mcp == servers


def test_what_cline_has_no_key_for_is_a_field_drop(cline: Adapter, tmp_path: Path) -> None:
    server = McpServer("db", command="db", tool_timeout=30.0, auto_approve=("*",))
    assert render(cline, tmp_path, Profile(mcp=(server,))) == [
        ("db", "no tool-timeout here", "tool_timeout"),
        ("db", "cannot approve these tools here", "auto_approve"),
    ]
    assert back(cline, tmp_path).profile.mcp == (McpServer("db", command="db"),)


def test_an_env_entry_naming_itself_is_left_to_the_environment_cline_hands_on(
    cline: Adapter, tmp_path: Path
) -> None:
    """cline spawns a stdio server with its own environment under the entry's env, and expands nothing:
    ``GITHUB_TOKEN = "${GITHUB_TOKEN}"`` written would override the real token with that text."""
    server = McpServer("gh", command="gh-mcp", env=(("GITHUB_TOKEN", "${GITHUB_TOKEN}"), ("MODE", "x")))
    drops = render(cline, tmp_path, Profile(mcp=(server,)))
    assert [(name, field) for name, _, field in drops] == [("gh", "env")]
    assert "GITHUB_TOKEN is not written" in drops[0][1]
    written = json.loads((tmp_path / MCP).read_text(encoding="utf-8"))["mcpServers"]["gh"]
    assert written["env"] == {"MODE": "x"}
    assert "${" not in json.dumps(written)


@pytest.mark.parametrize(
    "server",
    [
        McpServer("s", command="${TOOLS}/bin/server"),
        McpServer("s", command="server", args=("--token", "${TOKEN}")),
        McpServer("s", command="server", env=(("TOKEN", "${OTHER}"),)),
        McpServer("s", command="server", env=(("TOKEN", "Bearer ${TOKEN}"),)),
        McpServer("s", url="https://${HOST}/mcp"),
        McpServer("s", url="https://mcp.example.test/mcp", headers=(("Authorization", "Bearer ${TOKEN}"),)),
    ],
)
def test_any_other_reference_drops_the_server(cline: Adapter, tmp_path: Path, server: McpServer) -> None:
    drops = render(cline, tmp_path, Profile(mcp=(server,)))
    assert [(name, field) for name, _, field in drops] == [("s", None)]
    assert "expands no ${VAR}" in drops[0][1]
    assert not (tmp_path / MCP).exists()


def test_every_shape_cline_accepts_is_imported(cline: Adapter, tmp_path: Path) -> None:
    servers = {
        "nested": {"transport": {"type": "stdio", "command": "srv", "args": ["-v"]}, "timeout": 30},
        "legacy": {"transportType": "http", "url": "https://a.test/mcp"},
        "bare-url": {"url": "https://b.test/sse"},
        "bad": {"transportType": "carrier-pigeon", "url": "https://c.test/mcp"},
        "signed": {"type": "sse", "url": "https://d.test/sse", "oauth": {"lastError": "expired"}},
    }
    (tmp_path / MCP).parent.mkdir(parents=True)
    (tmp_path / MCP).write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    found = back(cline, tmp_path)
    assert found.profile.mcp == (
        McpServer("bad", url="https://c.test/mcp", transport="sse"),
        McpServer("bare-url", url="https://b.test/sse", transport="sse"),
        McpServer("legacy", url="https://a.test/mcp"),
        McpServer("nested", command="srv", args=("-v",), timeout=30.0),
        McpServer("signed", url="https://d.test/sse", transport="sse"),
    )
    assert sorted((d.name, d.field) for d in found.dropped) == [
        ("bad", "transportType"),
        ("signed", "oauth"),
    ]


# --- hooks -------------------------------------------------------------------------------------

PROFILE_HOOKS = (
    Hook("all-tools", "before-tool", "command", command='echo "any: $(jq -r .tool_call.name)"'),
    Hook("context", "after-tool", "inject", text="Run make test, it's “fine”.", matcher=("shell",)),
    Hook("end", "turn-end", "command", command="echo done >> hooks.log"),
    Hook("reads", "before-tool", "command", command="echo 'read it'", matcher=("read_file", "search")),
    Hook("start", "session-start", "command", command="date"),
)


def test_each_event_is_one_script_read_back_whole(cline: Adapter, tmp_path: Path) -> None:
    assert render(cline, tmp_path, Profile(hooks=PROFILE_HOOKS)) == []
    assert sorted(p.name for p in (tmp_path / HOOKS).iterdir()) == [
        "PostToolUse",
        "PreToolUse",
        "TaskComplete",
        "TaskStart",
    ]
    script = (tmp_path / HOOKS / "PreToolUse").read_text(encoding="utf-8")
    assert script.startswith("#!/usr/bin/env bash\n")
    assert "tackroom_hook reads 'read_files|search_codebase' 'echo '" in script
    assert back(cline, tmp_path).profile.hooks == PROFILE_HOOKS
    assert back(cline, tmp_path).dropped == ()


def test_what_cline_cannot_do_with_a_hook_is_dropped_by_name(cline: Adapter, tmp_path: Path) -> None:
    hooks = (
        Hook("ask", "prompt-submit", "command", command="true"),
        Hook("bye", "session-end", "command", command="true"),
        Hook("guard", "before-tool", "refuse", text="No.", matcher=("shell",)),
        Hook("late", "session-start", "inject", text="Too late to be read."),
        Hook("one", "after-tool", "inject", text="First."),
        Hook("slow", "after-tool", "command", command="sleep 1", timeout=5.0),
        Hook("two", "after-tool", "inject", text="Second."),
    )
    drops = render(cline, tmp_path, Profile(hooks=hooks))
    assert [(name, field) for name, _, field in drops] == [
        ("ask", None),
        ("bye", None),
        ("guard", None),
        ("late", None),
        ("slow", "timeout"),
        ("two", None),
    ]
    assert "'one' already injects" in drops[-1][1]
    assert [h.name for h in back(cline, tmp_path).profile.hooks] == ["one", "slow"]


def run_script(script: Path, payload: dict[str, Any], cwd: Path) -> str:
    done = subprocess.run(
        ["bash", str(script)], input=json.dumps(payload), capture_output=True, text=True, cwd=cwd, timeout=30
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def tool_call(name: str) -> dict[str, Any]:
    """The stdin of a PreToolUse file, as 3.0.65 writes it (abridged)."""
    return {
        "hookName": "tool_call",
        "taskId": "conv_1",
        "tool_call": {"id": "call_1", "name": name, "input": {"commands": "ls"}},
        "preToolUse": {"toolName": name, "parameters": {"commands": "ls"}},
    }


@pytest.mark.skipif(shutil.which("jq") is None, reason="the rendered tool hooks need jq")
def test_the_script_gives_each_hook_the_payload_and_only_its_tools(cline: Adapter, tmp_path: Path) -> None:
    render(cline, tmp_path, Profile(hooks=PROFILE_HOOKS))
    pre = tmp_path / HOOKS / "PreToolUse"
    assert run_script(pre, tool_call("run_commands"), tmp_path) == "any: run_commands\n"
    assert run_script(pre, tool_call("read_files"), tmp_path) == "any: read_files\nread it\n"
    post: dict[str, Any] = {"hookName": "tool_result", "tool_result": {"name": "run_commands", "input": {}}}
    # cline reads the last line starting HOOK_CONTROL<tab> as the hook's control JSON.
    line = run_script(tmp_path / HOOKS / "PostToolUse", post, tmp_path).splitlines()[-1]
    head, _, control = line.partition("\t")
    assert head == "HOOK_CONTROL"
    assert json.loads(control) == {"contextModification": "Run make test, it's “fine”."}
    post["tool_result"]["name"] = "read_files"
    assert run_script(tmp_path / HOOKS / "PostToolUse", post, tmp_path) == ""


def test_hook_files_tackroom_did_not_write_are_named(cline: Adapter, tmp_path: Path) -> None:
    hooks = tmp_path / ".clinerules" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "pretooluse.sh").write_text("#!/bin/bash\necho '{\"cancel\": false}'\n", encoding="utf-8")
    (hooks / "UserPromptSubmit").write_text("true\n", encoding="utf-8")
    (hooks / "README.md").write_text("Our hooks.\n", encoding="utf-8")
    found = back(cline, tmp_path, scope="project")
    assert found.profile.hooks == ()
    reasons = {d.name: d.reason for d in found.dropped}
    assert sorted(reasons) == ["README.md", "UserPromptSubmit", "pretooluse.sh"]
    assert "a hook script tackroom did not write" in reasons["pretooluse.sh"]
    assert "not named after a hook event tackroom maps" in reasons["UserPromptSubmit"]


def test_a_script_whose_hooks_were_edited_past_reading_is_named(cline: Adapter, tmp_path: Path) -> None:
    render(cline, tmp_path, Profile(hooks=PROFILE_HOOKS[2:3]))
    script = tmp_path / HOOKS / "TaskComplete"
    script.write_text(script.read_text(encoding="utf-8") + "tackroom_hook 'unclosed\n", encoding="utf-8")
    found = back(cline, tmp_path)
    assert found.profile.hooks == ()
    assert [d.name for d in found.dropped] == ["TaskComplete"]


COMMANDS = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\r\x85\u2028\u2029")
    | st.sampled_from(["\n", "\t", "'", '"', "\\", "$", "`", "|"]),
    min_size=1,
    max_size=60,
).filter(str.strip)


@settings(max_examples=60, deadline=None)
@given(
    command=COMMANDS,
    moment=st.sampled_from(["session-start", "before-tool", "after-tool", "turn-end"]),
    matcher=st.lists(st.sampled_from(["shell", "read_file", "search", "web_fetch"]), max_size=3, unique=True),
)
def test_any_command_round_trips(cline: Adapter, command: str, moment: str, matcher: list[str]) -> None:
    tools = tuple(matcher) if moment in ("before-tool", "after-tool") else ()
    hook = Hook("h", moment, "command", command=command, matcher=tools)
    with tempfile.TemporaryDirectory() as tmp:
        assert render(cline, Path(tmp), Profile(hooks=(hook,))) == []
        assert back(cline, Path(tmp)).profile.hooks == (hook,)


# --- workflows ---------------------------------------------------------------------------------


def expand(text: str, prompt: str) -> str:
    """What cline 3.0.65 sends for ``/<name> args``: the workflow's text trimmed, then the rest of the
    prompt after the name (its space included); frontmatter is not part of the text."""
    body = text.split("---\n", 2)[2] if text.startswith("---\n") else text
    return body.strip() + prompt[len(prompt.split()[0]) :]


def test_a_final_arguments_placeholder_is_where_cline_puts_the_arguments(
    cline: Adapter, tmp_path: Path
) -> None:
    command = Command("fix", "Fix an issue", "Fix the issue $ARGUMENTS\n")
    assert render(cline, tmp_path, Profile(commands=(command,))) == []
    text = (tmp_path / WORKFLOWS / "fix.md").read_text(encoding="utf-8")
    assert text == "---\ndescription: Fix an issue\ntackroom-arguments: appended\n---\nFix the issue \n"
    assert expand(text, "/fix #42 now") == "Fix the issue #42 now"
    assert back(cline, tmp_path).profile.commands == (command,)


def test_other_bodies_are_written_as_they_are(cline: Adapter, tmp_path: Path) -> None:
    commands = (
        Command("check", "Check it", "Check $ARGUMENTS carefully.\n"),
        Command("plain", "", "Run the linters.\n"),
    )
    assert render(cline, tmp_path, Profile(commands=commands)) == []
    check = (tmp_path / WORKFLOWS / "check.md").read_text(encoding="utf-8")
    # Nothing is substituted: the placeholder stays text, and the arguments still come at the end.
    assert expand(check, "/check src") == "Check $ARGUMENTS carefully. src"
    assert (
        expand((tmp_path / WORKFLOWS / "plain.md").read_text(encoding="utf-8"), "/plain")
        == "Run the linters."
    )
    assert back(cline, tmp_path).profile.commands == commands


@pytest.mark.parametrize(
    ("command", "why"),
    [
        (Command("git:commit", "", "Commit.\n"), "no namespaces"),
        (Command("one", "", "Take $1.\n"), "positional arguments"),
        (Command("sh", "", "Status: !{git status}\n"), "runs a shell command"),
        (Command("inc", "", "See @{README.md}\n"), "includes a file"),
        (Command("bare", "", "$ARGUMENTS\n"), "no workflow without text"),
        (Command("blank", "", "  \n"), "no workflow without text"),
    ],
)
def test_what_a_workflow_cannot_say_drops_the_command(
    cline: Adapter, tmp_path: Path, command: Command, why: str
) -> None:
    drops = render(cline, tmp_path, Profile(commands=(command,)))
    assert [(name, field) for name, _, field in drops] == [(command.name, None)]
    assert why in drops[0][1]


def test_a_users_workflows_are_read_as_cline_reads_them(cline: Adapter, tmp_path: Path) -> None:
    folder = tmp_path / ".clinerules" / "workflows"
    (folder / "drafts").mkdir(parents=True)
    (folder / "release.md").write_text("# Release\n\n1. Bump the version.\n", encoding="utf-8")
    (folder / "triage.txt").write_text("Label the new issues.\n", encoding="utf-8")
    (folder / "deploy.md").write_text("---\nname: ship-it\nauthor: me\n---\nDeploy.\n", encoding="utf-8")
    (folder / "off.md").write_text("---\nenabled: false\n---\nNot yet.\n", encoding="utf-8")
    (folder / "notes.json").write_text("{}\n", encoding="utf-8")
    found = back(cline, tmp_path, scope="project")
    assert found.profile.commands == (
        Command("release", "", "# Release\n\n1. Bump the version.\n"),
        Command("ship-it", "", "Deploy.\n"),
        Command("triage", "", "Label the new issues.\n"),
    )
    assert sorted((d.name, d.field) for d in found.dropped) == [
        ("drafts", None),
        ("notes.json", None),
        ("off", None),
        ("ship-it", "author"),
    ]


BODY = st.lists(
    st.text(
        alphabet=st.characters(
            blacklist_categories=("Cs", "Cc"), blacklist_characters="\r\x85\u2028\u2029$!@{"
        )
        | st.sampled_from("\n\t"),
        max_size=30,
    )
    | st.just("$ARGUMENTS"),
    max_size=4,
).map(lambda parts: " ".join(parts) + "\n")


@settings(max_examples=100, deadline=None)
@given(body=BODY, args=st.text(alphabet="abc -#", min_size=1, max_size=10).filter(str.strip))
def test_a_written_workflow_reads_back_and_expands_as_the_body_says(
    cline: Adapter, body: str, args: str
) -> None:
    command = Command("c", "d", body)
    with tempfile.TemporaryDirectory() as tmp:
        drops = render(cline, Path(tmp), Profile(commands=(command,)))
        if drops:
            assert not body.replace("$ARGUMENTS", "").strip()
            return
        assert back(cline, Path(tmp)).profile.commands == (command,)
        text = (Path(tmp) / WORKFLOWS / "c.md").read_text(encoding="utf-8")
        if body.count("$ARGUMENTS") == 1 and body.endswith("$ARGUMENTS\n"):
            said = body.replace("$ARGUMENTS", args.strip())
            assert " ".join(expand(text, f"/c {args.strip()}").split()) == " ".join(said.split())


# --- subagents ---------------------------------------------------------------------------------


def test_agents_are_yaml_files_with_clines_tool_names(cline: Adapter, tmp_path: Path) -> None:
    agents = (
        Agent("reviewer", "Reviews a change", "You review changes.\n", ("shell", "read_file", "search")),
        Agent("writer", "Writes docs", "You write docs.\n", model="cline:claude-sonnet-4-5"),
    )
    assert render(cline, tmp_path, Profile(agents=agents)) == []
    assert (tmp_path / AGENTS / "reviewer.yaml").read_text(encoding="utf-8") == (
        "---\nname: reviewer\ndescription: Reviews a change\n"
        "tools:\n- run_commands\n- read_files\n- search_codebase\n---\nYou review changes.\n"
    )
    assert "modelId: claude-sonnet-4-5\n" in (tmp_path / AGENTS / "writer.yaml").read_text(encoding="utf-8")
    assert back(cline, tmp_path).profile.agents == agents


def test_an_agent_cline_would_not_load_is_dropped_by_name(cline: Adapter, tmp_path: Path) -> None:
    agents = (
        Agent("mute", "", "You help.\n"),
        Agent("empty", "Does nothing", "\n"),
        Agent("careful", "Thinks", "You think.\n", reasoning="high", temperature=0.2),
    )
    drops = render(cline, tmp_path, Profile(agents=agents))
    assert [(name, field) for name, _, field in drops] == [
        ("mute", None),
        ("empty", None),
        ("careful", "reasoning"),
        ("careful", "temperature"),
    ]
    assert back(cline, tmp_path).profile.agents == (Agent("careful", "Thinks", "You think.\n"),)


def test_a_users_agents_are_read_from_both_yaml_endings(cline: Adapter, tmp_path: Path) -> None:
    folder = tmp_path / AGENTS
    folder.mkdir(parents=True)
    (folder / "tester.yml").write_text(
        "---\nname: tester\ndescription: Runs tests\ntools: bash, read_file\nmaxIterations: 5\n---\nTest.\n",
        encoding="utf-8",
    )
    (folder / "notes.md").write_text("---\nname: notes\ndescription: x\n---\nNot read.\n", encoding="utf-8")
    found = back(cline, tmp_path, scope="project")
    # Old tool names are cline's own (it maps bash to run_commands itself): kept as written.
    assert found.profile.agents == (
        Agent("tester", "Runs tests", "Test.\n", ("cline:bash", "cline:read_file")),
    )
    assert sorted((d.name, d.field) for d in found.dropped) == [
        ("notes.md", None),
        ("tester", "maxIterations"),
    ]


# --- a user's home, as cline leaves it ---------------------------------------------------------


def test_a_users_cline_home_is_imported_with_every_file_accounted_for(cline: Adapter) -> None:
    found = back(cline, HOME)
    profile = found.profile
    assert [r.name for r in profile.rules] == ["tackroom"]
    assert [s.name for s in profile.mcp] == ["filesystem", "linear"]
    assert [c.name for c in profile.commands] == ["pr-review", "standup"]
    assert [a.name for a in profile.agents] == ["explorer"]
    assert profile.hooks == ()
    assert sorted((d.kind, d.name, d.field) for d in found.dropped) == [
        ("MCP server", "linear", "oauth"),  # cline's sign-in state, never copied
        ("hook", "PreToolUse", None),  # the user's own script: cline runs it as it is
        ("skill", ".cline/skills/changelog/SKILL.md", None),
        ("subagent", "explorer", "maxIterations"),
    ]
