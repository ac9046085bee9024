"""The gemini-settings engine (MCP servers and hooks in settings.json), against gemini and qwen."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tackroom.adapters.resolve import Adapter, resolve_builtins
from tackroom.errors import ProfileError
from tackroom.profile.engines import engine
from tackroom.profile.engines.base import Context, Kind
from tackroom.profile.engines.settings import HOOK_MARK
from tackroom.profile.model import Hook, McpServer, Permissions, Profile
from tackroom.profile.render import import_native, import_profile, plan_render, write

SETTINGS = Path(".gemini/settings.json")


@pytest.fixture
def adapter() -> Adapter:
    return resolve_builtins()["gemini"]


def context(adapter: Adapter, kind: Kind, path: Path, **changes: Any) -> Context:
    capability = getattr(adapter.spec.capabilities, kind)
    return Context(adapter, kind, capability.model_copy(update=changes), path)


def render(ctx: Context, *items: Any) -> dict[str, Any]:
    [out] = engine("gemini-settings").render(ctx, list(items))
    assert (out.path, out.format, out.merge) == (ctx.path, "json", True)
    assert out.data is not None
    return dict(out.data)


# MCP servers


def test_servers_render_in_settings_shape_with_references_kept(adapter: Adapter, tmp_path: Path) -> None:
    local = McpServer("fs", command="npx", args=("-y", "server"), env=(("TOKEN", "${FS_TOKEN}"),))
    remote = McpServer("web", url="https://mcp.example.test/mcp", headers=(("Authorization", "Bearer ${T}"),))
    ctx = context(adapter, "mcp", tmp_path / "s.json", frontmatter={"fixed": "yes"})
    assert render(ctx, local, remote) == {
        "mcpServers": {
            "fs": {
                "command": "npx",
                "args": ["-y", "server"],
                "env": {"TOKEN": "${FS_TOKEN}"},
                "fixed": "yes",
            },
            # httpUrl: Streamable HTTP on gemini and qwen alike (qwen reads a bare url as SSE).
            "web": {
                "httpUrl": "https://mcp.example.test/mcp",
                "headers": {"Authorization": "Bearer ${T}"},
                "fixed": "yes",
            },
        }
    }


def test_parse_reads_servers_tackroom_did_not_write(adapter: Adapter, tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    servers = {
        "sse": {"url": "https://x.test/sse", "trust": True},
        "typed": {"type": "http", "url": "https://x.test/mcp", "headers": {"K": "v"}},
        "local": {"command": "node", "env": {"L": "1"}, "timeout": 5000},
        "socket": {"tcp": "localhost:9"},
        "junk": "not a table",
    }
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    ctx = context(adapter, "mcp", path)
    assert engine("gemini-settings").parse(ctx) == [
        McpServer("local", command="node", env=(("L", "1"),), timeout=5.0),
        McpServer("sse", url="https://x.test/sse", auto_approve=("*",)),  # trust: every tool approved
        McpServer("typed", url="https://x.test/mcp", headers=(("K", "v"),)),
    ]
    assert sorted(d.name for d in ctx.drops) == ["junk", "socket"]  # each dropped by name, none skipped


# hooks


def test_hooks_render_in_gemini_shape_with_a_name_on_each_handler(adapter: Adapter, tmp_path: Path) -> None:
    start = Hook("log-start", "session-start", "command", command="echo hi")
    guard = Hook("no-rm", "before-tool", "refuse", text="no", matcher=("shell",))
    deny = """jq -nc --arg m no '{"decision":"deny","reason":$m}'"""
    data = render(context(adapter, "hooks", tmp_path / "s.json"), start, guard)
    assert data == {
        "hooks": {
            "SessionStart": [
                {
                    "hooks": [
                        {"type": "command", "command": f"echo hi {HOOK_MARK}log-start", "name": "log-start"}
                    ]
                }
            ],
            "BeforeTool": [
                {
                    "matcher": "run_shell_command",
                    "hooks": [
                        {
                            "type": "command",
                            "command": f"{deny} {HOOK_MARK}no-rm",
                            "name": "no-rm",
                        }
                    ],
                }
            ],
        }
    }


def test_hooks_the_harness_cannot_express_are_dropped_by_name(adapter: Adapter, tmp_path: Path) -> None:
    capability = adapter.spec.capabilities.hooks
    assert capability is not None
    events = {m: e for m, e in capability.events.items() if m != "session-end"}
    ctx = context(adapter, "hooks", tmp_path / "s.json", events=events, inject=None)
    hooks = [
        Hook("bye", "session-end", "command", command="true"),
        Hook("advise", "prompt-submit", "inject", text="be brief"),
        Hook("kept", "turn-end", "command", command="true"),
    ]
    data = render(ctx, *hooks)
    assert list(data["hooks"]) == ["AfterAgent"]
    assert [(d.kind, d.name, d.reason) for d in ctx.drops] == [
        ("hook", "bye", "session-end unsupported"),
        ("hook", "advise", "prompt-submit inject unsupported"),
    ]


def test_parse_reads_every_hook_and_says_why_for_the_rest(adapter: Adapter, tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    ours = f"echo hi {HOOK_MARK}log-start"
    table = {
        "enabled": True,  # settings of the hooks, not events: kept as written
        "disabled": ["muted"],
        "SessionStart": [
            {"hooks": [{"type": "command", "name": "mine", "command": "echo mine", "timeout": 3000}]},
            {"hooks": [{"type": "command", "command": ours}, "junk"]},
            {"hooks": [{"type": "command", "name": "muted", "command": "echo off"}]},
            "junk",
        ],
        "BeforeTool": [
            {
                "matcher": "run_shell_command|write_file",
                "hooks": [{"type": "command", "command": "./guard.sh"}],
            },
            {"matcher": "read_.*", "hooks": [{"type": "command", "name": "regex", "command": "./r.sh"}]},
        ],
        "Unknown": [{"hooks": [{"type": "command", "command": f"true {HOOK_MARK}x"}]}],
    }
    path.write_text(json.dumps({"hooks": table}), encoding="utf-8")
    ctx = context(adapter, "hooks", path)
    assert engine("gemini-settings").parse(ctx) == [
        Hook(
            "before-tool-1", "before-tool", "command", command="./guard.sh", matcher=("shell", "write_file")
        ),
        Hook("log-start", "session-start", "command", command="echo hi"),
        Hook("mine", "session-start", "command", command="echo mine", timeout=3.0),
        Hook("regex", "before-tool", "command", command="./r.sh", matcher=("gemini:read_.*",)),
    ]
    assert ctx.native_settings == {"hooks": {"enabled": True, "disabled": ["muted"]}}
    assert sorted(d.name for d in ctx.drops) == ["muted", "session-start-3", "session-start-5", "x"]


# both, in one shared file


def test_render_merges_into_the_users_settings_and_keeps_their_keys(adapter: Adapter, tmp_path: Path) -> None:
    users = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "mcpServers": {"mine": {"command": "mine"}},
        "hooks": {"AfterAgent": [{"hooks": [{"type": "command", "name": "m", "command": "mine"}]}]},
    }
    (tmp_path / SETTINGS).parent.mkdir(parents=True)
    (tmp_path / SETTINGS).write_text(json.dumps(users), encoding="utf-8")
    server = McpServer("tr", command="python3", args=("s.py",))
    hook = Hook("done", "turn-end", "command", command="echo done")
    profile = Profile(mcp=(server,), hooks=(hook,))
    for _ in range(2):  # re-rendering replaces tackroom's own entries, never duplicates them
        write(plan_render(profile, adapter, root=tmp_path))
    data = json.loads((tmp_path / SETTINGS).read_text(encoding="utf-8"))
    assert data["security"] == users["security"]
    assert data["mcpServers"]["mine"] == {"command": "mine"}
    assert [h["hooks"][0]["command"] for h in data["hooks"]["AfterAgent"]] == [
        "mine",
        f"echo done {HOOK_MARK}done",
    ]
    imported = import_profile(adapter, root=tmp_path)
    users_hook = Hook("m", "turn-end", "command", command="mine")  # the user's, by its handler name
    assert (imported.mcp, imported.hooks) == ((McpServer("mine", command="mine"), server), (hook, users_hook))


def test_qwen_reads_the_same_server_table(tmp_path: Path) -> None:
    qwen = resolve_builtins()["qwen"]
    server = McpServer("web", url="https://x.test/mcp")
    write(plan_render(Profile(mcp=(server,)), qwen, root=tmp_path))
    data = json.loads((tmp_path / ".qwen" / "settings.json").read_text(encoding="utf-8"))
    assert data == {"mcpServers": {"web": {"httpUrl": "https://x.test/mcp"}}}
    assert import_profile(qwen, root=tmp_path).mcp == (server,)


def test_a_kind_it_does_not_write_is_an_error(adapter: Adapter, tmp_path: Path) -> None:
    rules = adapter.spec.capabilities.rules
    assert rules is not None
    ctx = Context(adapter, "rules", rules, tmp_path / "GEMINI.md")
    with pytest.raises(ProfileError, match="writes mcp, hooks, permissions and settings, not rules"):
        engine("gemini-settings").render(ctx, [])


# settings.json beyond MCP and hooks: permissions, passthrough, the env file (fixture: a project)

FIXTURE = Path(__file__).parent / "fixtures" / "native" / "gemini" / "project"


def test_a_project_imports_every_item_or_says_why(adapter: Adapter) -> None:
    found = import_native(adapter, root=FIXTURE, scope="project")
    assert found.profile.permissions == Permissions(
        allow=('shell("git status:*")', 'shell("npm test:*")', "read_file"),
        ask=("write_file",),
        deny=("web_fetch", 'mcp("github/delete_repo")'),
    )
    servers = {s.name: s for s in found.profile.mcp}
    assert (servers["github"].timeout, servers["github"].auto_approve) == (30.0, ("*",))
    assert servers["events"].transport == "sse" and servers["github"].kind == "http"
    assert servers["fs"].cwd == "./tools"
    assert found.profile.env == (
        ("GEMINI_MODEL", "gemini-2.5-pro"),
        ("LOG_LEVEL", "debug"),
        ("QUOTED", "single quoted value"),
    )
    [native] = found.profile.native
    assert dict(native.settings) == {
        "context": {"fileName": ["GEMINI.md", "AGENTS.md"]},
        "general": {"vimMode": False},
        "tools": {"sandbox": False},  # the rest of tools, beside the permission lists
        "ui": {"theme": "GitHub", "hideBanner": True},
    }
    assert {(d.kind, d.name, d.field) for d in found.dropped} == {
        ("MCP server", "narrow", None),  # excludeTools: importing it would widen it
        ("MCP server", "described", "description"),
        ("env variable", "line 5", None),
    }


def test_render_of_an_import_reproduces_it_and_rerenders_in_place(adapter: Adapter, tmp_path: Path) -> None:
    found = import_native(adapter, root=FIXTURE, scope="project").profile
    assert write(plan_render(found, adapter, root=tmp_path, scope="project")).drops == ()
    first = (tmp_path / SETTINGS).read_bytes()
    write(plan_render(found, adapter, root=tmp_path, scope="project"))
    assert (tmp_path / SETTINGS).read_bytes() == first  # lists are not appended to twice
    assert import_native(adapter, root=tmp_path, scope="project").profile == found
    data = json.loads(first)
    assert data["tools"]["allowed"][0] == "run_shell_command(git status)"
    assert data["mcpServers"]["events"] == {"url": "http://localhost:8080/sse", "type": "sse"}


def test_permissions_gemini_cannot_say_are_dropped_by_name(adapter: Adapter, tmp_path: Path) -> None:
    deny = ('write_file("src/**")', "todo")
    rules = Permissions(allow=('shell("git:*")',), ask=('shell("rm:*")',), deny=deny)
    ctx = context(adapter, "permissions", tmp_path / "s.json")
    expected = {"allowed": ["run_shell_command(git)"], "exclude": ["write_todos"]}
    assert render(ctx, rules) == {"tools": expected}
    assert sorted(d.name for d in ctx.drops) == ['ask shell("rm:*")', 'deny write_file("src/**")']


@pytest.mark.parametrize(
    ("server", "field"),
    [
        (McpServer("s", command="x", tool_timeout=3), "tool_timeout"),
        (McpServer("s", command="x", auto_approve=("read",)), "auto_approve"),
        (McpServer("s", command="x", disabled=True), None),  # writing it would start it
    ],
)
def test_server_fields_gemini_cannot_say_are_dropped(
    adapter: Adapter, tmp_path: Path, server: McpServer, field: str | None
) -> None:
    ctx = context(adapter, "mcp", tmp_path / "s.json")
    engine("gemini-settings").render(ctx, [server])
    assert [(d.name, d.field) for d in ctx.drops] == [("s", field)]


def test_env_values_dotenv_would_misread_are_dropped(adapter: Adapter, tmp_path: Path) -> None:
    ctx = context(adapter, "env", tmp_path / ".env")
    items = [("A", "plain value"), ("B", "it's"), ("C", "${SECRET}"), ("D", "two\nlines")]
    [out] = engine("gemini-env").render(ctx, items)
    assert out.text == "A='plain value'\n"
    assert [d.name for d in ctx.drops] == ["B", "C", "D"]
    out.path.write_text(str(out.text), encoding="utf-8")
    assert engine("gemini-env").parse(ctx) == [("A", "plain value")]


def test_hook_timeouts_are_milliseconds_on_the_handler(adapter: Adapter, tmp_path: Path) -> None:
    hook = Hook("slow", "session-start", "command", command="./warm.sh", timeout=2.5)
    ctx = context(adapter, "hooks", tmp_path / "s.json")
    data = render(ctx, hook)
    assert data["hooks"]["SessionStart"][0]["hooks"][0]["timeout"] == 2500
    ctx.path.write_text(json.dumps(data), encoding="utf-8")
    assert engine("gemini-settings").parse(ctx) == [hook]


def test_more_moments_map_to_gemini_events(adapter: Adapter, tmp_path: Path) -> None:
    moments = ["pre-compact", "notification"]
    hooks = [Hook(f"h{i}", m, "command", command="true") for i, m in enumerate(moments)]
    ctx = context(adapter, "hooks", tmp_path / "s.json")
    assert sorted(render(ctx, *hooks)["hooks"]) == ["Notification", "PreCompress"]
    assert ctx.drops == []
