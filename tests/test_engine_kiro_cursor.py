"""Cursor's CLI config (permissions, passthrough, commands) and hooks, and Kiro's MCP servers, from fixtures.

Both harnesses are unverified (no installable binary): the fixtures follow their documented shapes.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tackroom.adapters.resolve import Adapter, resolve_builtins
from tackroom.profile.engines import engine
from tackroom.profile.engines.base import Context, Kind
from tackroom.profile.model import Hook, McpServer, Permissions
from tackroom.profile.render import import_native, plan_render, write

FIXTURES = Path(__file__).parent / "fixtures" / "native"


def adapter(name: str) -> Adapter:
    return resolve_builtins()[name]


def context(name: str, kind: Kind, path: Path) -> Context:
    found = adapter(name)
    return Context(found, kind, getattr(found.spec.capabilities, kind), path)


def reproduces(name: str, root: Path, tmp_path: Path) -> Any:
    """The import of ``root``, checked to render back (nothing dropped) into what imports the same."""
    found = import_native(adapter(name), root=root, scope="project")
    rendered = write(plan_render(found.profile, adapter(name), root=tmp_path, scope="project"))
    assert rendered.drops == ()
    write(plan_render(found.profile, adapter(name), root=tmp_path, scope="project"))  # again, in place
    assert import_native(adapter(name), root=tmp_path, scope="project").profile == found.profile
    return found


# cursor


def test_cursor_cli_config_imports_every_token_or_keeps_it(tmp_path: Path) -> None:
    found = reproduces("cursor", FIXTURES / "cursor" / "project", tmp_path)
    assert found.profile.permissions == Permissions(
        allow=(
            'shell("ls:*")',
            'shell("git:*")',
            'read_file("src/**/*.ts")',
            'write_file("package.json")',
            'edit_file("package.json")',
            'web_fetch("domain:docs.example.com")',
            'mcp("linear")',
        ),
        deny=(
            'shell("rm:*")',
            'read_file(".env*")',
            'write_file("**/*.key")',
            'edit_file("**/*.key")',
            'mcp("github/delete_repo")',
        ),
    )
    [native] = found.profile.native
    assert dict(native.settings) == {
        "editor": {"vimMode": False},
        "permissions": {"allow": ["Shell(npm run *)"]},  # a token with no neutral form, kept as written
        "version": 1,
    }
    [review] = found.profile.commands
    assert review.description == "Review the current branch"
    data = json.loads((tmp_path / ".cursor/cli.json").read_text(encoding="utf-8"))
    assert (
        data["permissions"]["deny"][0] == "Shell(rm)" and "Shell(npm run *)" in data["permissions"]["allow"]
    )
    assert data["permissions"]["allow"].count("Shell(git)") == 1


def test_cursor_rules_it_cannot_say_are_dropped_by_name(tmp_path: Path) -> None:
    ctx = context("cursor", "permissions", tmp_path / "cli.json")
    rules = Permissions(
        allow=("shell", 'shell("git push:*")', "write_file"),
        ask=("read_file",),
        deny=("read_file", 'web_fetch("https://x.test")'),
    )
    [out] = engine("cursor-permissions").render(ctx, [rules])
    assert out.data == {"permissions": {"allow": ["Shell(*)"], "deny": ["Read(**)"]}}
    assert sorted(d.name for d in ctx.drops) == [
        'allow shell("git push:*")',  # a one-word command base only
        "allow write_file",  # Write covers edit_file too
        "ask read_file",  # no ask
        'deny web_fetch("https://x.test")',
    ]


def test_cursor_hooks_import_each_event_or_name_why_not(tmp_path: Path) -> None:
    """A project's hooks.json as repositories write it: the generic events by the adapter's table, a
    one-tool event as a tool moment on that tool, a matcher over Cursor's own tool names kept as
    its own; the MCP and response events, a prompt hook and a fail-closed one named with why."""
    found = import_native(adapter("cursor"), root=FIXTURES / "cursor" / "hooks", scope="project")
    hooks = {h.name: h for h in found.profile.hooks}
    assert hooks == {
        "session-start-1": Hook("session-start-1", "session-start", "command",
                                "./scripts/hooks/load-context.sh", timeout=10.0),
        "before-submit-prompt-1": Hook("before-submit-prompt-1", "prompt-submit", "command",
                                       "node .cursor/hooks/redact-prompt.mjs"),
        "before-shell-execution-1": Hook("before-shell-execution-1", "before-tool", "command",
                                         "./scripts/hooks/block-force-push.sh", matcher=("shell",),
                                         timeout=5.0),
        "before-shell-execution-2": Hook("before-shell-execution-2", "before-tool", "command",
                                         "./scripts/hooks/audit.sh", matcher=("shell",)),
        "pre-tool-use-1": Hook("pre-tool-use-1", "before-tool", "command", "./scripts/hooks/guard-writes.sh",
                               matcher=("cursor:Write|StrReplace",)),
        "after-file-edit-1": Hook("after-file-edit-1", "after-tool", "command",
                                  'npx prettier --write "$CURSOR_FILE"', matcher=("edit_file", "write_file")),
        "stop-1": Hook("stop-1", "turn-end", "command", "./scripts/hooks/notify.sh"),
    }  # fmt: skip
    why = {(d.name, d.field): d.reason for d in found.dropped}
    assert set(why) == {
        ("before-mcp-execution-1", None),
        ("after-agent-response-1", None),
        ("stop-1", "loop_limit"),
        ("stop-2", None),
        ("post-tool-use-1", None),
    }
    assert "no neutral moment" in why["before-mcp-execution-1", None]
    assert "'prompt' hook" in why["stop-2", None]
    assert "fails open" in why["post-tool-use-1", None]


def test_cursor_hooks_render_back_and_import_the_same(tmp_path: Path) -> None:
    """What imported renders into hooks.json again (each one-tool event as itself), and reads back
    the same; the file holds only the events it had."""
    found = import_native(adapter("cursor"), root=FIXTURES / "cursor" / "hooks", scope="project")
    ours = found.profile.hooks
    target = plan_render(found.profile, adapter("cursor"), root=tmp_path, scope="project")
    assert not [d for d in target.drops if d.kind == "hook"]
    write(target)
    written = json.loads((tmp_path / ".cursor" / "hooks.json").read_text(encoding="utf-8"))
    assert written["version"] == 1
    assert sorted(written["hooks"]) == [
        "afterFileEdit", "beforeShellExecution", "beforeSubmitPrompt", "preToolUse", "sessionStart", "stop"
    ]  # fmt: skip
    assert written["hooks"]["preToolUse"][0]["matcher"] == "Write|StrReplace"
    assert written["hooks"]["sessionStart"][0]["timeout"] == 10
    again = import_native(adapter("cursor"), root=tmp_path, scope="project").profile.hooks
    assert again == ours


def test_hooks_from_claude_code_reach_cursor_as_its_events_or_are_named(tmp_path: Path) -> None:
    """Claude Code's PreToolUse on Bash is Cursor's beforeShellExecution, Edit|Write after a tool its
    afterFileEdit; a hook on one file tool alone (afterFileEdit fires for both), on a start source
    Cursor cannot tell apart, or on a Claude tool name is dropped by name, never widened."""
    settings = {
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}],
            "PostToolUse": [
                {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "./fmt.sh"}]},
                {"matcher": "Write", "hooks": [{"type": "command", "command": "./only-writes.sh"}]},
                {"matcher": "NotebookEdit", "hooks": [{"type": "command", "command": "./nb.sh"}]},
            ],
            "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "./hi.sh"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "./bye.sh", "timeout": 30}]}],
        }
    }
    source = tmp_path / "claude"
    (source / ".claude").mkdir(parents=True)
    (source / ".claude" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    profile = import_native(adapter("claude-code"), root=source, scope="project").profile
    target = plan_render(profile, adapter("cursor"), root=tmp_path / "cursor", scope="project")
    dropped = {d.name for d in target.drops if d.kind == "hook"}
    assert dropped == {"post-tool-use-2", "post-tool-use-3", "session-start-1"}
    write(target)
    events = json.loads((tmp_path / "cursor" / ".cursor" / "hooks.json").read_text(encoding="utf-8"))["hooks"]
    assert {e: [h["command"].split(" #")[0] for h in hs] for e, hs in events.items()} == {
        "beforeShellExecution": ["./guard.sh"],
        "afterFileEdit": ["./fmt.sh"],
        "stop": ["./bye.sh"],
    }
    assert events["stop"][0]["timeout"] == 30


def test_cursor_hooks_are_merged_beside_the_users_own(tmp_path: Path) -> None:
    """hooks.json is the user's file too: a render adds tackroom's entries beside theirs, and both
    import back."""
    (tmp_path / ".cursor").mkdir()
    mine = {"version": 1, "hooks": {"stop": [{"command": "./mine.sh"}]}}
    (tmp_path / ".cursor" / "hooks.json").write_text(json.dumps(mine), encoding="utf-8")
    hook = Hook("lint", "after-tool", "command", "make lint", matcher=("edit_file", "write_file"))
    found = import_native(adapter("cursor"), root=tmp_path, scope="project").profile
    profile = replace(found, hooks=(*found.hooks, hook))
    write(plan_render(profile, adapter("cursor"), root=tmp_path, scope="project"))
    data = json.loads((tmp_path / ".cursor" / "hooks.json").read_text(encoding="utf-8"))
    assert data["hooks"]["stop"] == [{"command": "./mine.sh"}]
    back = import_native(adapter("cursor"), root=tmp_path, scope="project").profile.hooks
    assert {h.name for h in back} == {"lint", "stop-1"}


# kiro


def test_kiro_mcp_imports_auto_approve_and_disabled(tmp_path: Path) -> None:
    found = reproduces("kiro", FIXTURES / "kiro" / "project", tmp_path)
    servers = {s.name: s for s in found.profile.mcp}
    assert servers["aws-docs"].auto_approve == ("search_documentation", "read_documentation")
    assert servers["aws-docs"].env == (("FASTMCP_LOG_LEVEL", "ERROR"),)
    assert servers["paused"] == McpServer("paused", command="node", args=("paused.js",), disabled=True)
    assert servers["remote-api"].headers == (("Authorization", "Bearer ${API_TOKEN}"),)
    # disabledTools narrows a server: importing it without would widen it
    assert {(d.name, d.field) for d in found.dropped if d.kind == "MCP server"} == {
        ("narrowed", None),
        ("odd", None),
    }


@pytest.mark.parametrize("field", ["timeout", "tool_timeout", "cwd"])
def test_kiro_server_fields_it_cannot_say_are_dropped(tmp_path: Path, field: str) -> None:
    ctx = context("kiro", "mcp", tmp_path / "mcp.json")
    server = McpServer("s", command="x", **{field: "/w" if field == "cwd" else 5.0})
    [out] = engine("kiro-mcp").render(ctx, [server])
    assert out.data == {"mcpServers": {"s": {"command": "x", "args": []}}}
    assert [(d.name, d.field) for d in ctx.drops] == [("s", field)]


def test_kiro_agents_import_tools_and_drop_what_has_no_neutral_form(tmp_path: Path) -> None:
    found = import_native(adapter("kiro"), root=FIXTURES / "kiro" / "project", scope="project")
    [agent] = found.profile.agents
    assert agent.tools == ("read_file", "write_file", "shell", "kiro:@git")
    assert agent.model == "kiro:claude-sonnet-4" and agent.body.startswith("You are a backend")
    agents_dropped = {(d.name, d.field) for d in found.dropped if d.kind == "subagent"}
    assert agents_dropped == {
        ("from-file", None),
        ("backend-specialist", "allowedTools"),
        ("backend-specialist", "resources"),
    }


def test_kiro_agent_denied_tools_need_an_allowed_list(tmp_path: Path) -> None:
    from tackroom.profile.model import Agent

    ctx = context("kiro", "subagents", tmp_path / "agents")
    agents = [
        Agent("open", "d", "p", disallowed_tools=("shell",)),  # no list to leave it out of: dropped
        Agent("listed", "d", "p", tools=("read_file",), disallowed_tools=("shell",)),
    ]
    [out] = engine("kiro-agents").render(ctx, agents)
    assert out.data == {"name": "listed", "description": "d", "prompt": "p", "tools": ["fs_read"]}
    assert [(d.name, d.field) for d in ctx.drops] == [("open", None), ("listed", "disallowed_tools")]
