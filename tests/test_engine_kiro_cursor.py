"""Cursor's CLI config (permissions, passthrough, commands) and Kiro's MCP servers, from fixtures.

Both harnesses are unverified (no installable binary): the fixtures follow their documented shapes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tackroom.adapters.resolve import Adapter, resolve_builtins
from tackroom.profile.engines import engine
from tackroom.profile.engines.base import Context, Kind
from tackroom.profile.model import McpServer, Permissions
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
