"""The codex-toml engine (MCP servers in config.toml), against the built-in codex adapter."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from tackroom.adapters.resolve import Adapter, resolve_builtins
from tackroom.profile.engines import engine
from tackroom.profile.engines.base import Context
from tackroom.profile.model import McpServer, Native, Profile
from tackroom.profile.render import import_native, import_profile, plan_render, write

CONFIG = Path(".codex/config.toml")


@pytest.fixture
def adapter() -> Adapter:
    return resolve_builtins()["codex"]


def context(adapter: Adapter, path: Path, **changes: Any) -> Context:
    capability = adapter.spec.capabilities.mcp
    assert capability is not None
    return Context(adapter, "mcp", capability.model_copy(update=changes), path)


def render(ctx: Context, *servers: McpServer) -> dict[str, Any]:
    [out] = engine("codex-toml").render(ctx, list(servers))
    assert (out.path, out.format, out.merge) == (ctx.path, "toml", True)
    assert out.data is not None
    return dict(out.data)


def test_stdio_server_passes_secret_references_through_by_name(adapter: Adapter, tmp_path: Path) -> None:
    server = McpServer(
        "fs",
        command="npx",
        args=("-y", "server"),
        env=(("API_TOKEN", "${API_TOKEN}"), ("MODE", "fast")),
    )
    data = render(context(adapter, tmp_path / "c.toml", frontmatter={"fixed": "yes"}), server)
    assert data == {
        "mcp_servers": {
            "fs": {
                "command": "npx",
                "args": ["-y", "server"],
                "env": {"MODE": "fast"},
                "env_vars": ["API_TOKEN"],
                "fixed": "yes",
            }
        }
    }


def test_http_server_headers_take_their_one_spelling_each(adapter: Adapter, tmp_path: Path) -> None:
    server = McpServer(
        "web",
        url="https://mcp.example.test/mcp",
        headers=(("Authorization", "Bearer ${TOKEN}"), ("X-Key", "${KEY}"), ("X-Plain", "v")),
    )
    data = render(context(adapter, tmp_path / "c.toml", frontmatter={}), server)
    assert data["mcp_servers"]["web"] == {
        "url": "https://mcp.example.test/mcp",
        "bearer_token_env_var": "TOKEN",
        "http_headers": {"X-Plain": "v"},
        "env_http_headers": {"X-Key": "KEY"},
    }


def test_every_server_carries_the_adapters_fixed_keys(adapter: Adapter, tmp_path: Path) -> None:
    servers = [McpServer("a", command="a"), McpServer("b", url="https://b.test/mcp")]
    data = render(context(adapter, tmp_path / "c.toml"), *servers)
    assert {e["default_tools_approval_mode"] for e in data["mcp_servers"].values()} == {"approve"}


@pytest.mark.parametrize(
    ("server", "why"),
    [
        (McpServer("renamed", command="x", env=(("KEY", "${OTHER}"),)), "env values are passed literally"),
        (McpServer("inline", command="x", env=(("KEY", "pre-${KEY}"),)), "env values are passed literally"),
        (McpServer("default", command="x", env=(("KEY", "${KEY:-d}"),)), "env values are passed literally"),
        (McpServer("arg", command="x", args=("--token=${T}",)), "command, args or URL"),
        (McpServer("url", url="https://x.test/${PART}"), "command, args or URL"),
        (McpServer("hdr", url="https://x.test", headers=(("X-Key", "Token ${T}"),)), "header X-Key"),
        (McpServer("lower", url="https://x.test", headers=(("authorization", "Bearer ${T}"),)), "header"),
    ],
)
def test_a_reference_codex_cannot_pass_drops_the_server_by_name(
    adapter: Adapter, tmp_path: Path, server: McpServer, why: str
) -> None:
    ctx = context(adapter, tmp_path / "c.toml")
    kept = McpServer("kept", command="ok")
    [out] = engine("codex-toml").render(ctx, [server, kept])
    assert out.data is not None and list(out.data["mcp_servers"]) == ["kept"]
    [drop] = ctx.drops
    assert (drop.kind, drop.name) == ("MCP server", server.name) and why in drop.reason


def test_nothing_to_render_writes_nothing(adapter: Adapter, tmp_path: Path) -> None:
    ctx = context(adapter, tmp_path / "c.toml")
    assert engine("codex-toml").render(ctx, [McpServer("x", command="x", args=("${A}",))]) == []


def test_render_merges_into_the_users_config_and_keeps_their_keys(adapter: Adapter, tmp_path: Path) -> None:
    users = {
        "model": "o3",
        "profiles": {"fast": {"model": "gpt-5.5"}},
        "mcp_servers": {"mine": {"command": "mine", "startup_timeout_sec": 30}},
    }
    (tmp_path / CONFIG).parent.mkdir(parents=True)
    (tmp_path / CONFIG).write_text(tomli_w.dumps(users), encoding="utf-8")
    ours = McpServer("tr", command="python3", args=("s.py",), env=(("TOKEN", "${TOKEN}"),))
    for _ in range(2):  # re-rendering over what tackroom wrote changes nothing
        write(plan_render(Profile(mcp=(ours,)), adapter, root=tmp_path))
    data = tomllib.loads((tmp_path / CONFIG).read_text(encoding="utf-8"))
    assert data["model"] == "o3" and data["profiles"] == users["profiles"]
    assert data["mcp_servers"]["mine"] == {"command": "mine", "startup_timeout_sec": 30}
    assert data["mcp_servers"]["tr"]["env_vars"] == ["TOKEN"]
    imported = import_native(adapter, root=tmp_path)
    assert imported.profile.mcp == (McpServer("mine", command="mine", timeout=30.0), ours)
    # Every other key is kept as native passthrough, and renders back into the same file.
    [native] = imported.profile.native
    assert dict(native.settings) == {"model": "o3", "profiles": {"fast": {"model": "gpt-5.5"}}}


def test_parse_reads_a_config_tackroom_did_not_write(adapter: Adapter, tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        """
model = "o3"

[mcp_servers.local]
command = "node"
args = ["s.js"]
env = { LEVEL = "debug" }
env_vars = ["GH_TOKEN", { name = "REMOTE_ONLY", source = "remote" }]
enabled_tools = ["a"]

[mcp_servers.remote]
url = "https://x.test/mcp"
bearer_token_env_var = "TOKEN"
http_headers = { "X-Plain" = "v" }
env_http_headers = { "X-Key" = "KEY" }

[mcp_servers.broken]
startup_timeout_sec = 5
""",
        encoding="utf-8",
    )
    ctx = context(adapter, path)
    assert engine("codex-toml").parse(ctx) == [
        McpServer(
            "remote",
            url="https://x.test/mcp",
            headers=(("Authorization", "Bearer ${TOKEN}"), ("X-Key", "${KEY}"), ("X-Plain", "v")),
        ),
    ]
    # A server that is neither a command nor a url, and one whose tools are narrowed, by name.
    assert {d.name: d.reason for d in ctx.drops}.keys() == {"broken", "local"}
    assert "enabled_tools has no neutral form" in {d.name: d.reason for d in ctx.drops}["local"]


def test_parse_keeps_the_optional_server_fields(adapter: Adapter, tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        """
[mcp_servers.local]
command = "node"
args = ["s.js"]
env = { LEVEL = "debug" }
env_vars = ["GH_TOKEN", { name = "REMOTE_ONLY", source = "remote" }]
startup_timeout_sec = 20
tool_timeout_sec = 90.5
enabled = false
cwd = "/srv/tools"
default_tools_approval_mode = "approve"
startup_readiness = "lazy"
""",
        encoding="utf-8",
    )
    ctx = context(adapter, path)
    assert engine("codex-toml").parse(ctx) == [
        McpServer(
            "local",
            command="node",
            args=("s.js",),
            env=(("GH_TOKEN", "${GH_TOKEN}"), ("LEVEL", "debug"), ("REMOTE_ONLY", "${REMOTE_ONLY}")),
            timeout=20.0,
            tool_timeout=90.5,
            disabled=True,
            cwd="/srv/tools",
        ),
    ]
    # The approval mode tackroom writes on every server is no loss; an unknown key is reported.
    assert [(d.name, d.field) for d in ctx.drops] == [("local", "startup_readiness")]


def test_optional_fields_render_in_codex_spelling_and_read_back(adapter: Adapter, tmp_path: Path) -> None:
    server = McpServer("s", command="x", timeout=15.0, tool_timeout=60.0, disabled=True, cwd="/w")
    rendered = write(plan_render(Profile(mcp=(server,)), adapter, root=tmp_path))
    assert rendered.drops == ()
    data = tomllib.loads((tmp_path / CONFIG).read_text(encoding="utf-8"))["mcp_servers"]["s"]
    assert (data["startup_timeout_sec"], data["tool_timeout_sec"], data["enabled"], data["cwd"]) == (
        15.0,
        60.0,
        False,
        "/w",
    )
    assert import_profile(adapter, root=tmp_path).mcp == (server,)


def test_what_codex_cannot_say_of_a_server_is_dropped_by_name(adapter: Adapter, tmp_path: Path) -> None:
    servers = (
        McpServer("sse", url="http://127.0.0.1:9/sse", transport="sse"),
        McpServer("picky", command="x", auto_approve=("read",)),
    )
    rendered = plan_render(Profile(mcp=servers), adapter, root=tmp_path)
    assert sorted((d.name, d.field) for d in rendered.drops) == [("picky", "auto_approve"), ("sse", None)]


def test_native_settings_render_back_into_config_toml(adapter: Adapter, tmp_path: Path) -> None:
    native = Native("codex", (("approval_policy", "on-request"), ("agents", {"max_threads": 4})))
    profile = Profile(native=(native,))
    write(plan_render(profile, adapter, root=tmp_path))
    write(plan_render(profile, adapter, root=tmp_path))  # tackroom's own keys are replaced, not refused
    data = tomllib.loads((tmp_path / CONFIG).read_text(encoding="utf-8"))
    assert data == {"approval_policy": "on-request", "agents": {"max_threads": 4}}
    assert import_native(adapter, root=tmp_path).profile.native == (
        Native("codex", (("agents", {"max_threads": 4}), ("approval_policy", "on-request"))),
    )


def test_parse_without_a_config_finds_nothing(adapter: Adapter, tmp_path: Path) -> None:
    assert engine("codex-toml").parse(context(adapter, tmp_path / "absent.toml")) == []
