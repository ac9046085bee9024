"""A profile's MCP servers over ACP: rendered in session/new's shape, resolved and sent by the client.

The ``acp-mcp`` engine writes the servers (their ``${VAR}`` references as
written) into a file of the run's home; the acp client reads it before the
agent starts, sends only the transports the agent advertised, resolves the
references from the harness's environment as it sends session/new, and names
every server it left out. The SDK's models referee the message.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import schema

from tackroom.adapters.resolve import Adapter, load_adapters, resolve_builtins
from tackroom.families import get_family
from tackroom.families.acp import AcpClient
from tackroom.families.acp.engines import read_servers
from tackroom.profile.model import McpServer, Profile
from tackroom.profile.render import import_profile, plan_render, write
from tackroom.run.runner import run
from tackroom.trace.events import ErrorEvent, Finished

FAKE = Path(__file__).parent / "fakes" / "fake_acp_agent.py"
ACP_ADAPTERS = ("claude-code-acp", "codex-acp", "gemini-acp", "opencode-acp", "qwen-acp")
SECRET = "s3cret-docs-token-value"

STDIO = McpServer(
    "files", command="npx", args=("-y", "files-server", "${ROOT:-/srv}"), env=(("LOG_LEVEL", "${LEVEL}"),)
)
HTTP = McpServer(
    "docs", url="https://docs.example.test/mcp", headers=(("Authorization", "Bearer ${DOCS_TOKEN}"),)
)
SSE = McpServer("events", url="https://events.example.test/sse", transport="sse")


def rpc(**fields: Any) -> str:
    return json.dumps({"jsonrpc": "2.0", **fields})


def rendered(tmp_path: Path, *servers: McpServer, adapter: str = "claude-code-acp") -> tuple[Path, Any]:
    """Render ``servers`` for ``adapter`` into a home under ``tmp_path``: (the file, the render)."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    done = write(plan_render(Profile(mcp=servers), resolve_builtins()[adapter], root=home, workdir=tmp_path))
    return home / ".tackroom" / "acp-mcp.json", done


def opened(
    path: Path, env: dict[str, str], capabilities: dict[str, Any] | None
) -> tuple[AcpClient, list[Any], list[dict[str, Any]]]:
    """A client begun with the servers file, after the agent's initialize answer: (it, events, sent)."""
    client = AcpClient()
    client.begin("p", Path("/w"), {}, env, {"mcp": path})
    sent = [json.loads(line) for line in client.outgoing()]
    agent = {"mcpCapabilities": capabilities} if capabilities is not None else {}
    events = client.feed(rpc(id=0, result={"protocolVersion": 1, "agentCapabilities": agent}))
    sent += [json.loads(line) for line in client.outgoing()]
    return client, events, sent


# --- the engine ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ACP_ADAPTERS)
def test_every_acp_adapter_renders_its_servers_for_session_new(name: str) -> None:
    capability = resolve_builtins()[name].spec.capabilities.mcp
    assert capability is not None and capability.render == "acp-mcp"
    assert capability.project is None  # a session's servers: nothing a project holds


def test_the_render_writes_acps_shape_with_the_references_unresolved(tmp_path: Path) -> None:
    path, done = rendered(tmp_path, STDIO, HTTP, SSE)
    assert json.loads(path.read_text()) == {
        "mcpServers": [
            {
                "name": "files",
                "command": "npx",
                "args": ["-y", "files-server", "${ROOT:-/srv}"],
                "env": [{"name": "LOG_LEVEL", "value": "${LEVEL}"}],
            },
            {
                "type": "http",
                "name": "docs",
                "url": "https://docs.example.test/mcp",
                "headers": [{"name": "Authorization", "value": "Bearer ${DOCS_TOKEN}"}],
            },
            {"type": "sse", "name": "events", "url": "https://events.example.test/sse", "headers": []},
        ]
    }
    assert done.drops == ()
    # Each entry is the protocol's own server, as the SDK reads it.
    for entry in json.loads(path.read_text())["mcpServers"]:
        schema.NewSessionRequest.model_validate({"cwd": "/w", "mcpServers": [entry]})
    # Import reads back what render wrote.
    back = import_profile(resolve_builtins()["claude-code-acp"], root=tmp_path / "home", workdir=tmp_path)
    assert sorted(back.mcp, key=lambda s: s.name) == [HTTP, SSE, STDIO]


def test_what_acp_cannot_say_is_dropped_by_name(tmp_path: Path) -> None:
    tuned = McpServer(
        "tuned", command="srv", cwd="/srv", timeout=5.0, tool_timeout=9.0, auto_approve=("read",)
    )
    off = McpServer("off", command="srv", disabled=True)
    path, done = rendered(tmp_path, tuned, off)
    said = {(d.name, d.field) for d in done.drops}
    assert said == {
        ("tuned", "cwd"),
        ("tuned", "timeout"),
        ("tuned", "tool_timeout"),
        ("tuned", "auto_approve"),
        ("off", None),
    }
    assert [s["name"] for s in json.loads(path.read_text())["mcpServers"]] == ["tuned"]
    assert "ACP's session/new has no disabled server" in next(str(d) for d in done.drops if d.name == "off")


def test_a_file_that_is_not_acps_shape_is_refused_by_name() -> None:
    from tackroom.profile.engines.settings import BadEntry

    for data, why in (
        ({"mcpServers": [{"name": "x", "command": "c", "cwd": "/"}]}, "'cwd': not a field"),
        ({"mcpServers": [{"type": "ws", "name": "x", "url": "u"}]}, "no transport ACP has"),
        ({"mcpServers": [{"name": "x", "command": "c", "env": {"A": "1"}}]}, "env: not a list"),
        ({"mcpServers": [{"name": "x", "command": "c"}, {"name": "x", "command": "d"}]}, "a second server"),
        ({"mcpServers": {}, "other": 1}, "holding only"),
    ):
        with pytest.raises(BadEntry, match=why):
            read_servers(data)


# --- the client ------------------------------------------------------------------------------------


def test_session_new_carries_the_servers_resolved_from_the_run_env_and_the_sdk_reads_it(
    tmp_path: Path,
) -> None:
    path, _ = rendered(tmp_path, STDIO, HTTP)
    env = {"LEVEL": "debug", "DOCS_TOKEN": SECRET, "UNRELATED_KEY": "never-sent"}
    _, events, sent = opened(path, env, {"http": True, "sse": False})
    assert events == []
    new = next(m for m in sent if m.get("method") == "session/new")
    assert new["params"] == {
        "cwd": "/w",
        "mcpServers": [
            {
                "name": "files",
                "command": "npx",
                "args": ["-y", "files-server", "/srv"],
                "env": [{"name": "LOG_LEVEL", "value": "debug"}],
            },
            {
                "type": "http",
                "name": "docs",
                "url": "https://docs.example.test/mcp",
                "headers": [{"name": "Authorization", "value": f"Bearer {SECRET}"}],
            },
        ],
    }
    parsed = schema.NewSessionRequest.model_validate(new["params"])
    assert parsed.model_dump(by_alias=True, exclude_unset=True, mode="json") == new["params"]
    assert "never-sent" not in json.dumps(sent)
    # The file keeps the reference: the secret lives only in the message to the agent.
    assert SECRET not in path.read_text() and "${DOCS_TOKEN}" in path.read_text()


@pytest.mark.parametrize(
    ("capabilities", "sent_names"),
    [
        (None, ["files"]),  # no mcpCapabilities at all: stdio only (every agent takes it)
        ({}, ["files"]),
        ({"http": True, "sse": False}, ["files", "docs"]),  # codex-acp 0.16.0's answer
        ({"http": True, "sse": True}, ["files", "docs", "events"]),
        ({"http": "yes", "sse": 1}, ["files"]),  # only true is true
    ],
)
def test_a_transport_the_agent_did_not_advertise_is_dropped_by_name(
    tmp_path: Path, capabilities: dict[str, Any] | None, sent_names: list[str]
) -> None:
    path, _ = rendered(tmp_path, STDIO, HTTP, SSE)
    client, events, sent = opened(path, {"LEVEL": "1", "DOCS_TOKEN": SECRET}, capabilities)
    new = next(m for m in sent if m.get("method") == "session/new")
    assert [s["name"] for s in new["params"]["mcpServers"]] == sent_names
    left_out = {"docs": "http", "events": "sse"}
    expected = [n for n in ("docs", "events") if n not in sent_names]
    assert all(isinstance(e, ErrorEvent) and not e.fatal for e in events)
    assert [e.message for e in events] == [
        f"dropped MCP server {n!r}: the agent does not take {left_out[n]} MCP servers (its initialize "
        f"answer's agentCapabilities.mcpCapabilities.{left_out[n]} is not true)"
        for n in expected
    ]
    assert not client.over
    if "docs" not in sent_names:
        assert SECRET not in json.dumps(sent)


def test_a_server_whose_variable_the_run_lacks_is_not_sent_and_named(tmp_path: Path) -> None:
    path, _ = rendered(tmp_path, STDIO, HTTP)
    # An empty value is no value (as the harnesses read ${VAR}); a default stands in for one.
    _, events, sent = opened(path, {"LEVEL": "info", "DOCS_TOKEN": ""}, {"http": True})
    new = next(m for m in sent if m.get("method") == "session/new")
    assert [s["name"] for s in new["params"]["mcpServers"]] == ["files"]
    assert len(events) == 1 and isinstance(events[0], ErrorEvent) and not events[0].fatal
    assert "'docs'" in events[0].message and "${DOCS_TOKEN}" in events[0].message


def test_no_file_means_no_servers_and_a_broken_one_ends_the_run_before_a_session(tmp_path: Path) -> None:
    _, _, sent = opened(tmp_path / "none.json", {}, {})
    assert next(m for m in sent if m.get("method") == "session/new")["params"]["mcpServers"] == []
    broken = tmp_path / "broken.json"
    for text in (
        '{"mcpServers": [{"name": "x"}]}',
        "not json",
        '{"mcpServers": [{"name": "x", "command": 1}]}',
    ):
        broken.write_text(text)
        client, events, sent = opened(broken, {}, {})
        assert [m.get("method") for m in sent] == ["initialize"]
        assert client.over and isinstance(events[-1], Finished) and not events[-1].ok
        fatal = [e for e in events if isinstance(e, ErrorEvent) and e.fatal]
        assert len(fatal) == 1 and str(broken) in fatal[0].message


def test_every_acp_family_sends_the_servers(tmp_path: Path) -> None:
    path, _ = rendered(tmp_path, STDIO)
    for family in ("acp", "acp-codex", "acp-gemini", "acp-opencode", "acp-qwen"):
        client = get_family(family).parser()
        assert isinstance(client, AcpClient)
        client.begin("p", Path("/w"), {}, {"LEVEL": "x"}, {"mcp": path})
        client.outgoing()
        client.feed(rpc(id=0, result={"protocolVersion": 1}))
        new = json.loads(client.outgoing()[0])
        assert [s["name"] for s in new["params"]["mcpServers"]] == ["files"], family


# --- through the runner ------------------------------------------------------------------------------


def fake_with_mcp(config_dir: Path, log: Path) -> Adapter:
    """An operator adapter extending claude-code-acp (its mcp capability) whose agent is the fake."""
    argv = ", ".join(json.dumps(a) for a in [str(FAKE), "--mcp-log", str(log), "--mcp-caps", "http"])
    table = (
        f'[adapter.fake-acp-mcp]\nextends = "claude-code-acp"\nexecutable = "{sys.executable}"\n'
        f'one_shot = [{argv}, "{{{{opt.auto_accept}}}}"]\n'
        '[adapter.fake-acp-mcp.env]\npass = ["DOCS_TOKEN", "LEVEL"]\n'
    )
    (config_dir / "adapters.d" / "fake-acp-mcp.toml").write_text(table, encoding="utf-8")
    return load_adapters(config=config_dir)["fake-acp-mcp"]


def test_a_run_passes_the_profiles_servers_in_session_new_and_writes_no_secret(
    config_dir: Path, tmp_path: Path
) -> None:
    import os

    log = tmp_path / "mcp-servers.json"
    workdir = tmp_path / "work"
    workdir.mkdir()
    environ = {**os.environ, "DOCS_TOKEN": SECRET, "LEVEL": "warn"}
    result = run(
        fake_with_mcp(config_dir, log),
        "hello agent",
        workdir=workdir,
        runs_dir=tmp_path / "runs",
        profile=Profile(mcp=(STDIO, HTTP, SSE)),
        options={"auto_accept": True},
        environ=environ,
        timeout_s=30.0,
    )
    assert result.ok, result.error
    sent = json.loads(log.read_text())
    assert [s["name"] for s in sent] == ["files", "docs"]
    assert sent[0]["env"] == [{"name": "LOG_LEVEL", "value": "warn"}]
    assert sent[1]["headers"] == [{"name": "Authorization", "value": f"Bearer {SECRET}"}]
    dropped = [e.message for e in result.events if isinstance(e, ErrorEvent)]
    assert any("'events'" in m and "sse" in m for m in dropped)
    # The secret reached the agent's stdin and nothing tackroom wrote.
    for path in result.run_dir.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def test_a_file_larger_than_tackroom_writes_is_not_read(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_text(json.dumps({"mcpServers": [{"name": "x", "command": "c" * (1024 * 1024)}]}))
    client, events, sent = opened(big, {}, {})
    assert [m.get("method") for m in sent] == ["initialize"] and client.over
    assert any(isinstance(e, ErrorEvent) and e.fatal and "larger" in e.message for e in events)
