"""The opencode-json (MCP) and opencode-plugin (hooks) engines, against the built-in opencode adapter."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tackroom.adapters.resolve import Adapter, resolve_builtins
from tackroom.families.opencode.engines import read_manifest
from tackroom.profile.engines import engine
from tackroom.profile.engines.base import Context, Kind
from tackroom.profile.model import Hook, McpServer, Profile
from tackroom.profile.render import import_profile, plan_render, write

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
    assert engine("opencode-json").parse(context(adapter, "mcp", path)) == [
        McpServer("local", command="node", args=("s.js",), env=(("K", "${K}"), ("L", "v"))),
        McpServer("remote", url="https://x.test/${PATHPART}"),
    ]


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
