"""Kimi CLI's MCP servers: the share dir's mcp.json through the generic mcp-json engine.

The file is fastmcp's MCPConfig as `kimi mcp add` (1.51.0) writes it: a command server as
{command, args, env} with no transport, a URL server as {url, transport: "http", headers}, and
`--auth oauth` as "auth": "oauth".
"""

from __future__ import annotations

import json
from pathlib import Path

from tackroom.adapters.resolve import Adapter, resolve_builtins
from tackroom.profile.model import McpServer, Profile
from tackroom.profile.render import import_native, plan_render, write

ADDED = {
    "mcpServers": {
        "chrome-devtools": {"command": "npx", "args": ["chrome-devtools-mcp@latest"]},
        "fetch": {"command": "uvx", "args": ["mcp-server-fetch"], "env": {"FETCH_TOKEN": "${FETCH_TOKEN}"}},
        "context7": {
            "url": "https://mcp.context7.com/mcp",
            "transport": "http",
            "headers": {"CONTEXT7_API_KEY": "${CONTEXT7_API_KEY}"},
        },
    }
}


def _adapter() -> Adapter:
    return resolve_builtins()["kimi"]


def _home(tmp_path: Path, data: object) -> Path:
    path = tmp_path / ".kimi" / "mcp.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return tmp_path


def test_what_kimi_mcp_add_writes_imports_whole(tmp_path: Path) -> None:
    found = import_native(_adapter(), root=_home(tmp_path, ADDED), scope="home")
    assert found.dropped == ()
    assert {s.name: s for s in found.profile.mcp} == {
        "chrome-devtools": McpServer("chrome-devtools", command="npx", args=("chrome-devtools-mcp@latest",)),
        "fetch": McpServer(
            "fetch", command="uvx", args=("mcp-server-fetch",), env=(("FETCH_TOKEN", "${FETCH_TOKEN}"),)
        ),
        "context7": McpServer(
            "context7",
            url="https://mcp.context7.com/mcp",
            headers=(("CONTEXT7_API_KEY", "${CONTEXT7_API_KEY}"),),
        ),
    }


def test_what_tackroom_has_no_word_for_is_dropped_by_name(tmp_path: Path) -> None:
    data = {
        "mcpServers": {
            "linear": {"url": "https://mcp.linear.app/mcp", "transport": "http", "auth": "oauth"},
            "ws": {"url": "wss://x.example/mcp", "transport": "websocket"},
        }
    }
    found = import_native(_adapter(), root=_home(tmp_path, data), scope="home")
    assert [s.name for s in found.profile.mcp] == ["linear"]
    drops = {(d.name, d.field) for d in found.dropped}
    assert drops == {("linear", "auth"), ("ws", None)}


def test_a_rendered_server_lands_in_the_share_dir_and_reads_back(tmp_path: Path) -> None:
    servers = (
        McpServer("probe", command="python3", args=("server.py",), env=(("LOG", "/tmp/x"),), cwd="/srv"),
        McpServer("events", url="https://events.example.com/sse", transport="sse"),
        McpServer("slow", command="srv", timeout=5.0),
    )
    rendered = write(plan_render(Profile(mcp=servers), _adapter(), root=tmp_path, scope="home"))
    assert [(d.name, d.field) for d in rendered.drops] == [("slow", "timeout")]
    data = json.loads((tmp_path / ".kimi" / "mcp.json").read_text())["mcpServers"]
    assert data["probe"] == {
        "transport": "stdio",
        "command": "python3",
        "args": ["server.py"],
        "env": {"LOG": "/tmp/x"},
        "cwd": "/srv",
    }
    assert data["events"] == {"transport": "sse", "url": "https://events.example.com/sse"}
    back = import_native(_adapter(), root=tmp_path, scope="home")
    assert back.dropped == ()
    assert back.profile.mcp == tuple(
        sorted((*servers[:2], McpServer("slow", command="srv")), key=lambda s: s.name)
    )


def test_its_servers_and_other_keys_are_kept_on_render(tmp_path: Path) -> None:
    """A server the user added with `kimi mcp add` stays beside tackroom's."""
    _home(tmp_path, ADDED)
    write(
        plan_render(
            Profile(mcp=(McpServer("probe", command="srv"),)), _adapter(), root=tmp_path, scope="home"
        )
    )
    data = json.loads((tmp_path / ".kimi" / "mcp.json").read_text())["mcpServers"]
    assert set(data) == {"chrome-devtools", "fetch", "context7", "probe"}


def test_an_mcp_tool_reference_is_not_written_bare() -> None:
    """kimi names an MCP tool without its server: the mock's scripted model calls it by that name,
    but a reference to one (a subagent's tools, a hook's matcher) is never written, since `tr_echo`
    could not be read back as that server's tool; read back, it stays kimi's own."""
    from tackroom.profile.engines.base import Context
    from tackroom.run.services import vocabulary

    adapter = _adapter()
    assert vocabulary(adapter).translate("mcp:probe/tr_echo").name == "tr_echo"
    ctx = Context(adapter, "mcp", adapter.spec.capabilities.mcp, Path("/nowhere"))  # type: ignore[arg-type]
    assert ctx.native_tool('mcp("probe/tr_echo")') is None
    assert ctx.tool_ref("tr_echo") == "kimi:tr_echo"
