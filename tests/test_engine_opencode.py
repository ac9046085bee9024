"""The opencode-json (MCP) and opencode-plugin (hooks) engines, against the built-in opencode adapter."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tackroom.adapters.resolve import Adapter, resolve_builtins
from tackroom.families.opencode.engines import read_manifest
from tackroom.profile.engines import engine
from tackroom.profile.engines.base import Context, Kind
from tackroom.profile.model import Agent, Hook, McpServer, Permissions, Profile
from tackroom.profile.render import import_native, import_profile, plan_render, write

CONFIG = Path(".config/opencode/opencode.json")
PLUGIN = Path(".config/opencode/plugin/tackroom.js")
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not on PATH")


@pytest.fixture
def adapter() -> Adapter:
    return resolve_builtins()["opencode"]


def context(adapter: Adapter, kind: Kind, path: Path, **changes: Any) -> Context:
    capability = getattr(adapter.spec.capabilities, kind)
    return Context(adapter, kind, capability.model_copy(update=changes), path)


# opencode-json


def test_servers_render_in_opencode_shape_with_env_references(adapter: Adapter, tmp_path: Path) -> None:
    local = McpServer("fs", command="npx", args=("-y", "server"), env=(("TOKEN", "${FS_TOKEN}"),))
    remote = McpServer("web", url="https://mcp.example.test/mcp", headers=(("Authorization", "Bearer ${T}"),))
    [out] = engine("opencode-json").render(context(adapter, "mcp", tmp_path / "o.json"), [local, remote])
    assert out.merge and out.format == "json"
    assert out.data == {
        "mcp": {
            "fs": {
                "type": "local",
                "command": ["npx", "-y", "server"],
                "enabled": True,
                "environment": {"TOKEN": "{env:FS_TOKEN}"},
            },
            "web": {
                "type": "remote",
                "url": "https://mcp.example.test/mcp",
                "enabled": True,
                "headers": {"Authorization": "Bearer {env:T}"},
            },
        }
    }


def test_render_merges_into_the_users_config_and_keeps_their_keys(adapter: Adapter, tmp_path: Path) -> None:
    users = {"model": "anthropic/x", "mcp": {"mine": {"type": "local", "command": ["mine"]}}}
    (tmp_path / CONFIG).parent.mkdir(parents=True)
    (tmp_path / CONFIG).write_text(json.dumps(users), encoding="utf-8")
    ours = McpServer("tr", command="python3", args=("s.py",))
    write(plan_render(Profile(mcp=(ours,)), adapter, root=tmp_path))
    data = json.loads((tmp_path / CONFIG).read_text(encoding="utf-8"))
    assert data["model"] == "anthropic/x"
    assert data["mcp"]["mine"] == {"type": "local", "command": ["mine"]}
    assert data["mcp"]["tr"]["command"] == ["python3", "s.py"]
    assert import_profile(adapter, root=tmp_path).mcp == (McpServer("mine", command="mine"), ours)


def test_parse_reads_a_config_tackroom_did_not_write(adapter: Adapter, tmp_path: Path) -> None:
    path = tmp_path / "opencode.json"
    entries = {
        "local": {"type": "local", "command": ["node", "s.js"], "environment": {"K": "{env:K}", "L": "v"}},
        "remote": {"type": "remote", "url": "https://x.test/{env:PATHPART}"},
        "off": {"type": "local", "command": ["x"], "enabled": False},
        "empty": {"type": "local", "command": []},
        "odd": "not an entry",
    }
    path.write_text(json.dumps({"theme": "dark", "mcp": entries}), encoding="utf-8")
    ctx = context(adapter, "mcp", path)
    assert engine("opencode-json").parse(ctx) == [
        McpServer("local", command="node", args=("s.js",), env=(("K", "${K}"), ("L", "v"))),
        McpServer("off", command="x", disabled=True),
        McpServer("remote", url="https://x.test/${PATHPART}"),
    ]
    assert sorted(d.name for d in ctx.drops) == ["empty", "odd"]  # each dropped by name, none skipped


@pytest.mark.parametrize(
    ("server", "reason"),
    [
        (McpServer("dflt", command="x", env=(("K", "${K:-none}"),)), "no ${VAR:-default}"),
        (McpServer("subst", command="x", args=("{file:secret}",)), "would substitute"),
        (McpServer("envlit", url="https://x.test/{env:A}"), "would substitute"),
    ],
)
def test_servers_opencode_would_misread_are_dropped_by_name(
    adapter: Adapter, tmp_path: Path, server: McpServer, reason: str
) -> None:
    ctx = context(adapter, "mcp", tmp_path / "o.json")
    kept = McpServer("kept", command="ok")
    [out] = engine("opencode-json").render(ctx, [server, kept])
    assert out.data is not None and list(out.data["mcp"]) == ["kept"]
    [drop] = ctx.drops
    assert (drop.kind, drop.name) == ("MCP server", server.name) and reason in drop.reason


# opencode-plugin

REFUSE = Hook("no-shell", "before-tool", "refuse", text="shell is off", matcher=("shell",))
FIRE = Hook("mark", "session-start", "command", command="echo started > started.txt")


def render_plugin(adapter: Adapter, path: Path, hooks: list[Hook], **changes: Any) -> tuple[str, Context]:
    ctx = context(adapter, "hooks", path, **changes)
    outputs = engine("opencode-plugin").render(ctx, hooks)
    for out in outputs:
        out.path.parent.mkdir(parents=True, exist_ok=True)
        out.path.write_text(str(out.text), encoding="utf-8")
    return (path.read_text(encoding="utf-8") if outputs else ""), ctx


def test_hooks_render_into_one_plugin_whose_manifest_holds_them(adapter: Adapter, tmp_path: Path) -> None:
    source, ctx = render_plugin(adapter, tmp_path / "tackroom.js", [REFUSE, FIRE])
    manifest = read_manifest(source)
    assert sorted(manifest) == ["event:session.created", "tool.execute.before"]
    [group] = manifest["tool.execute.before"]
    assert group["matcher"] == "bash"
    assert group["hooks"][0]["command"].startswith("printf '%s\\n' 'shell is off' >&2; exit 2")
    assert 'const TOOL_NAME = "input.tool";' in source and not ctx.drops
    assert engine("opencode-plugin").parse(ctx) == [FIRE, REFUSE]


@needs_node
def test_the_generated_plugin_is_valid_javascript(adapter: Adapter, tmp_path: Path) -> None:
    tricky = Hook("q", "after-tool", "command", command='echo "it\'s" `x` ${y} \u2028 */ __TOOL_NAME__')
    _, ctx = render_plugin(adapter, tmp_path / "tackroom.js", [REFUSE, FIRE, tricky])
    assert engine("opencode-plugin").parse(ctx) == [FIRE, REFUSE, tricky]
    checked = subprocess.run([str(NODE), "--check", str(tmp_path / "tackroom.js")], capture_output=True)
    assert checked.returncode == 0, checked.stderr.decode()


DRIVE = """
const mod = await import(process.argv[1]);
const hooks = await mod.TackroomHooks({ directory: process.argv[2] });
const outcome = async (f) => { try { await f(); return "ran"; } catch (e) { return "threw: " + e.message; } };
const result = {
  handlers: Object.keys(hooks).sort(),
  bash: await outcome(() => hooks["tool.execute.before"]({ tool: "bash" }, { args: { command: "ls" } })),
  read: await outcome(() => hooks["tool.execute.before"]({ tool: "read" }, { args: { filePath: "x" } })),
  created: await outcome(() => hooks.event({ event: { type: "session.created", properties: {} } })),
  other: await outcome(() => hooks.event({ event: { type: "session.updated", properties: {} } })),
};
console.log(JSON.stringify(result));
"""


@needs_node
def test_the_plugin_blocks_matching_tools_and_runs_event_hooks(adapter: Adapter, tmp_path: Path) -> None:
    payload = Hook("payload", "before-tool", "command", command="cat > payload.json")
    render_plugin(adapter, tmp_path / "tackroom.mjs", [REFUSE, FIRE, payload])
    work = tmp_path / "work"
    work.mkdir()
    driven = subprocess.run(
        [str(NODE), "--input-type=module", "-e", DRIVE, str(tmp_path / "tackroom.mjs"), str(work)],
        capture_output=True,
        timeout=30,
    )
    assert driven.returncode == 0, driven.stderr.decode()
    assert json.loads(driven.stdout) == {
        "handlers": ["event", "tool.execute.before"],
        "bash": "threw: shell is off",
        "read": "ran",
        "created": "ran",
        "other": "ran",
    }
    assert (work / "started.txt").read_text() == "started\n"
    # Every command gets the handler's arguments as JSON on stdin.
    assert json.loads((work / "payload.json").read_text()) == {
        "input": {"tool": "read"},
        "output": {"args": {"filePath": "x"}},
    }


INJECT_DRIVE = """
const mod = await import(process.argv[1]);
const hooks = await mod.TackroomHooks({ directory: process.argv[2] });
const message = { id: "msg_1", sessionID: "ses_1", role: "user" };
const prompt = { id: "prt_0123456789abZZ", sessionID: "ses_1", messageID: "msg_1", type: "text", text: "hi" };
const output = { message, parts: [prompt] };
await hooks["chat.message"]({ sessionID: "ses_1" }, output);
const tool = { args: { command: "ls" } };
await hooks["tool.execute.after"]({ tool: "bash" }, tool);
console.log(JSON.stringify({ parts: output.parts, tool }));
"""


@needs_node
def test_what_a_chat_message_hook_prints_joins_the_prompt(adapter: Adapter, tmp_path: Path) -> None:
    """The inject channel: chat.message's output holds the user message's parts, which opencode saves
    after its hooks ran; what a hook prints there becomes a synthetic text part after the prompt."""
    inject = Hook("ctx", "prompt-submit", "inject", text="Run make test; it's quick.")
    loud = Hook("loud", "after-tool", "command", command="yes | head -c 200000")
    quiet = Hook("quiet", "prompt-submit", "command", command="echo side > side.txt")
    _, ctx = render_plugin(adapter, tmp_path / "tackroom.mjs", [inject, loud, quiet])
    assert ctx.drops == []
    assert engine("opencode-plugin").parse(ctx) == [inject, loud, quiet]
    work = tmp_path / "work"
    work.mkdir()
    driven = subprocess.run(
        [str(NODE), "--input-type=module", "-e", INJECT_DRIVE, str(tmp_path / "tackroom.mjs"), str(work)],
        capture_output=True,
        timeout=30,
    )
    assert driven.returncode == 0, driven.stderr.decode()
    result = json.loads(driven.stdout)
    prompt, added = result["parts"]
    assert added == {
        "id": prompt["id"] + "0",  # past the prompt's, so it is read after it
        "sessionID": "ses_1",
        "messageID": "msg_1",
        "type": "text",
        "text": "Run make test; it's quick.",
        "synthetic": True,
    }
    assert result["tool"] == {"args": {"command": "ls"}}  # a tool hook has no parts: nothing added
    assert (work / "side.txt").read_text() == "side\n"


def test_inject_is_only_where_the_message_is(adapter: Adapter, tmp_path: Path) -> None:
    for name in ("opencode", "kilo"):
        hooks = resolve_builtins()[name].spec.capabilities.hooks
        assert hooks is not None and hooks.inject is not None
        assert hooks.inject.moments == ["prompt-submit"] and hooks.events["prompt-submit"] == "chat.message"
    late = Hook("late", "after-tool", "inject", text="x")
    _, ctx = render_plugin(adapter, tmp_path / "tackroom.js", [late, FIRE])
    assert [(d.name, d.reason) for d in ctx.drops] == [("late", "after-tool inject unsupported")]


def test_hooks_opencode_cannot_express_are_dropped_by_name(adapter: Adapter, tmp_path: Path) -> None:
    advise = Hook("advise", "before-tool", "inject", text="careful")
    ending = Hook("bye", "session-end", "command", command="echo bye")
    elsewhere = Hook("search", "before-tool", "refuse", text="no", matcher=("web_search",))
    _, ctx = render_plugin(adapter, tmp_path / "tackroom.js", [advise, ending, elsewhere, FIRE])
    assert {(d.name, d.reason) for d in ctx.drops} == {
        ("advise", "before-tool inject unsupported"),
        ("bye", "session-end unsupported"),
        ("search", "no tool web_search here"),
    }
    assert engine("opencode-plugin").parse(ctx) == [FIRE]


def test_tool_matchers_need_a_tool_name_field(adapter: Adapter, tmp_path: Path) -> None:
    anyone = Hook("any-tool", "before-tool", "refuse", text="no")
    _, ctx = render_plugin(adapter, tmp_path / "tackroom.js", [REFUSE, anyone], fields={})
    assert [(d.name, d.reason) for d in ctx.drops] == [("no-shell", "no tool-name field to match tools with")]
    assert engine("opencode-plugin").parse(ctx) == [anyone]


@pytest.mark.parametrize(
    "source",
    [
        'export const Mine = async () => ({ "tool.execute.before": async () => {} });\n',
        "const HOOKS = {not json};\n",
        'const HOOKS = {"tool.execute.before": "nope", "chat.message": [1, {"hooks": [{"command": 2}]}]};\n',
    ],
)
def test_parse_of_a_plugin_tackroom_did_not_write_finds_no_hooks(
    adapter: Adapter, tmp_path: Path, source: str
) -> None:
    path = tmp_path / "plugin.js"
    path.write_text(source, encoding="utf-8")
    assert engine("opencode-plugin").parse(context(adapter, "hooks", path)) == []


# opencode.json beyond MCP: agents, commands, permissions, passthrough (fixture: a project config)

FIXTURE = Path(__file__).parent / "fixtures" / "native" / "opencode" / "project"


def test_a_project_config_imports_every_item_or_says_why(adapter: Adapter, tmp_path: Path) -> None:
    shutil.copytree(FIXTURE, tmp_path, dirs_exist_ok=True)
    (tmp_path / ".opencode/agents/bad.md").write_bytes(b"---\ndescription: \xff\n---\nbody\n")
    found = import_native(adapter, root=tmp_path, scope="project")
    agents = {a.name: a for a in found.profile.agents}
    # Never widen: tools switched off, and an agent-level deny, stay denied.
    assert agents["reviewer"].disallowed_tools == ("write_file", "edit_file", "shell", "web_fetch")
    assert agents["reviewer"].tools == () and agents["reviewer"].temperature == 0.1
    writer = agents["docs-writer"]
    # webfetch: true without "*": false only says what opencode does anyway: no allow-list
    assert (writer.tools, writer.disallowed_tools) == ((), ("shell",))
    assert writer.model == "opencode:ollama/qwen2.5-coder:7b" and writer.body.startswith("You write")
    test = {c.name: c for c in found.profile.commands}["test"]  # from opencode.json
    assert test.body == "Run the tests for $ARGUMENTS and report:\n!{npm test}\nSee @{package.json}\n"
    assert found.profile.permissions == Permissions(
        allow=("shell",),
        ask=("edit_file", 'shell("git push:*")', "write_file"),
        deny=('shell("rm -rf:*")', "web_fetch"),
    )
    servers = {s.name: s for s in found.profile.mcp}
    assert servers["docs"].timeout == 10.0 and servers["local-db"].disabled
    [native] = found.profile.native
    settings = dict(native.settings)
    assert settings["theme"] == "tokyonight" and settings["plugin"] == ["opencode-notify"]
    assert settings["agent"] == {"build": {"model": "anthropic/claude-opus-4-1"}}  # a built-in's override
    assert settings["permission"] == {"external_directory": {"~/scratch/**": "allow"}}
    dropped = {(d.kind, d.name, d.field) for d in found.dropped}
    assert dropped == {
        ("MCP server", "broken", None),
        ("command", "test", "agent"),
        ("subagent", "lead", None),  # a primary agent
        ("subagent", "bad", None),  # not UTF-8
    }


def test_render_of_an_import_reproduces_it(adapter: Adapter, tmp_path: Path) -> None:
    found = import_native(adapter, root=FIXTURE, scope="project").profile
    rendered = write(plan_render(found, adapter, root=tmp_path, scope="project"))
    assert rendered.drops == ()
    assert import_native(adapter, root=tmp_path, scope="project").profile == found
    data = json.loads((tmp_path / "opencode.json").read_text(encoding="utf-8"))
    assert data["permission"]["bash"] == {"*": "allow", "git push*": "ask", "rm -rf*": "deny"}
    assert data["theme"] == "tokyonight" and data["mcp"]["local-db"]["enabled"] is False
    # The agent file comes back where it was, as it was; rendered afresh (no origins), it is written
    # in opencode's own shape.
    agent = ".opencode/agents/reviewer.md"
    assert (tmp_path / agent).read_bytes() == (FIXTURE / agent).read_bytes()
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    write(plan_render(replace(found, origins=()), adapter, root=fresh, scope="project"))
    head = (fresh / ".opencode/agent/reviewer.md").read_text(encoding="utf-8")
    assert "  bash: false\n" in head and "mode: subagent\n" in head


def test_permissions_render_in_neutral_precedence(adapter: Adapter, tmp_path: Path) -> None:
    rules = Permissions(
        allow=("shell", "read_file", 'mcp("github")'),
        ask=('shell("git push:*")', 'write_file("src/**")', 'edit_file("src/**")'),
        deny=('shell("rm:*")', "write_file", "opencode:external_directory"),
    )
    ctx = context(adapter, "permissions", tmp_path / "o.json")
    [out] = engine("opencode-permissions").render(ctx, [rules])
    assert out.data == {
        "permission": {
            "bash": {"*": "allow", "git push*": "ask", "rm*": "deny"},  # last match wins
            "read": "allow",
            "github_*": "allow",
            "edit": {"src/**": "ask"},
            "external_directory": "deny",
        }
    }
    # edit covers write and edit together: a deny on write_file alone cannot be said
    assert [(d.name, d.reason) for d in ctx.drops] == [
        ("deny write_file", "opencode's edit permission covers edit_file too")
    ]


def test_a_permission_order_with_no_neutral_precedence_stays_native(adapter: Adapter, tmp_path: Path) -> None:
    path = tmp_path / "opencode.json"
    table = {"bash": {"*": "deny", "git *": "allow"}, "edit": "maybe", "read": "allow"}
    path.write_text(json.dumps({"permission": table}), encoding="utf-8")
    ctx = context(adapter, "permissions", path)
    assert engine("opencode-permissions").parse(ctx) == [Permissions(allow=("read_file",))]
    assert ctx.native_settings == {"permission": {"bash": {"*": "deny", "git *": "allow"}, "edit": "maybe"}}


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ({"tools": {"write": False}}, ((), ("write_file",))),
        ({"tools": {"write": False, "read": True}}, ((), ("write_file",))),
        ({"tools": {"*": False, "read": True, "grep": True}}, (("read_file", "search"), ())),
        ({"tools": {"mystery": False}}, ((), ("opencode:mystery",))),
        ({"permission": {"bash": {"*": "deny"}, "edit": "deny"}}, ((), ("shell", "write_file", "edit_file"))),
    ],
)
def test_agent_tools_never_widen(
    adapter: Adapter, tmp_path: Path, entry: dict[str, Any], expected: tuple[tuple[str, ...], ...]
) -> None:
    path = tmp_path / "opencode.json"
    agent = {"description": "d", "prompt": "p", "mode": "subagent", **entry}
    path.write_text(json.dumps({"agent": {"a": agent}}), encoding="utf-8")
    [parsed] = engine("opencode-agents").parse(context(adapter, "subagents", path))
    assert (parsed.tools, parsed.disallowed_tools) == expected
    [out] = engine("opencode-agents").render(context(adapter, "subagents", tmp_path / "agent"), [parsed])
    assert isinstance(out.text, str)
    (tmp_path / "agent").mkdir()
    out.path.write_text(out.text, encoding="utf-8")
    assert engine("opencode-agents").parse(context(adapter, "subagents", tmp_path / "agent")) == [parsed]


def test_an_agent_tool_opencode_cannot_name_drops_the_agent(adapter: Adapter, tmp_path: Path) -> None:
    ctx = context(adapter, "subagents", tmp_path / "agent")
    agent = Agent("a", "d", "p", disallowed_tools=('shell("rm:*")',))
    assert engine("opencode-agents").render(ctx, [agent]) == []
    assert [d.name for d in ctx.drops] == ["a"]


def test_mcp_timeout_and_disabled_render_and_read_back(adapter: Adapter, tmp_path: Path) -> None:
    server = McpServer("s", command="x", timeout=2.5, disabled=True, cwd="/w", tool_timeout=9)
    ctx = context(adapter, "mcp", tmp_path / "o.json")
    [out] = engine("opencode-json").render(ctx, [server])
    assert out.data == {"mcp": {"s": {"type": "local", "command": ["x"], "enabled": False, "timeout": 2500}}}
    assert sorted(d.field or "" for d in ctx.drops) == ["cwd", "tool_timeout"]
    (tmp_path / "o.json").write_text(json.dumps(out.data), encoding="utf-8")
    assert engine("opencode-json").parse(ctx) == [McpServer("s", command="x", timeout=2.5, disabled=True)]


def test_a_hook_timeout_the_plugin_cannot_keep_is_dropped_by_field(adapter: Adapter, tmp_path: Path) -> None:
    ctx = context(adapter, "hooks", tmp_path / "tackroom.js")
    slow = Hook("slow", "session-start", "command", command="x", timeout=5)
    [out] = engine("opencode-plugin").render(ctx, [slow])
    assert [(d.name, d.field) for d in ctx.drops] == [("slow", "timeout")]
    assert "tackroom:hook slow" in str(out.text)


def test_an_agents_permission_patterns_keep_it_from_the_tool_never_widen_it(
    adapter: Adapter, tmp_path: Path
) -> None:
    """An agent whose bash is denied but for some commands, or whose web fetches ask, cannot say that
    in neutral words: it keeps no shell and no fetch at all (narrower), and the drops say so; kept
    without the field, it would run any command unasked."""
    agent = {
        "description": "Reviews code",
        "mode": "subagent",
        "permission": {"edit": "deny", "bash": {"*": "deny", "ls *": "allow"}, "webfetch": "ask"},
    }
    (tmp_path / "opencode.json").write_text(json.dumps({"agent": {"reviewer": agent}}), encoding="utf-8")
    found = import_native(adapter, root=tmp_path, scope="project")
    [reviewer] = found.profile.agents
    assert {"shell", "web_fetch", "edit_file", "write_file"} <= set(reviewer.disallowed_tools)
    why = {d.reason for d in found.dropped if d.name == "reviewer"}
    assert any("permission.bash" in r and "kept without bash" in r for r in why), why
    assert any("permission.webfetch" in r for r in why), why
    out = tmp_path / "out"
    write(plan_render(found.profile, adapter, root=out, scope="project"))
    again = import_native(adapter, root=out, scope="project").profile.agents
    assert {"shell", "web_fetch"} <= set(again[0].disallowed_tools)
