"""Engine ``kiro-mcp``: MCP servers in Kiro's ``settings/mcp.json``.

UNVERIFIED (no installable binary): from kiro.dev/docs/cli/mcp/configuration.
``{"mcpServers": {name: {"command", "args", "env", "disabled", "autoApprove"}}}``
for a local server, ``url`` and ``headers`` for a remote one; ``${VAR}`` is
expanded by Kiro, so references stay as written. ``autoApprove`` lists the
server's tools that run without asking; ``disabledTools`` takes tools away,
which no neutral server says, so such a server is dropped on import (importing
it would widen it). Other keys are dropped by name, field by field.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tackroom.profile.engines.base import Context, Engine, Kind, Output
from tackroom.profile.engines.settings import read_json
from tackroom.profile.model import McpServer

KEY = "mcpServers"
_KEYS = frozenset({"command", "args", "env", "url", "headers", "disabled", "autoApprove"})
_UNSAID = (
    ("timeout", "no documented startup timeout"),
    ("tool_timeout", "no documented tool timeout"),
    ("cwd", "no working directory setting"),
)


def server_entry(ctx: Context, server: McpServer) -> dict[str, Any]:
    for field, why in _UNSAID:
        if getattr(server, field) is not None:
            ctx.drop("MCP server", server.name, why, field)
    if server.transport == "sse":
        ctx.drop("MCP server", server.name, "one url; Kiro picks the transport", "transport")
    entry: dict[str, Any]
    if server.url is not None:
        entry = {"url": server.url}
        entry |= {"headers": dict(server.headers)} if server.headers else {}
    else:
        entry = {"command": server.command, "args": list(server.args)}
        entry |= {"env": dict(server.env)} if server.env else {}
    entry |= {"disabled": True} if server.disabled else {}
    entry |= {"autoApprove": list(server.auto_approve)} if server.auto_approve else {}
    return entry


def server_from_entry(ctx: Context, name: str, entry: Any) -> McpServer | None:
    if not isinstance(entry, dict):
        ctx.drop("MCP server", name, f"mcpServers.{name} is not an object")
        return None
    if entry.get("disabledTools"):
        ctx.drop("MCP server", name, "disabledTools takes tools away, which no neutral server says")
        return None
    approve = entry.get("autoApprove", [])
    disabled = entry.get("disabled", False)
    if not isinstance(approve, list) or not all(isinstance(t, str) for t in approve):
        ctx.drop("MCP server", name, "autoApprove is not a list of tool names")
        return None
    if not isinstance(disabled, bool):
        ctx.drop("MCP server", name, "disabled is not true or false")
        return None
    url, command = entry.get("url"), entry.get("command")
    if not isinstance(url, str) and not isinstance(command, str):
        ctx.drop("MCP server", name, "neither a command nor a url")
        return None
    for key in sorted(set(entry) - _KEYS - {"disabledTools"}):
        ctx.drop("MCP server", name, f"{key!r} has no neutral form", key)
    common: dict[str, Any] = {"disabled": disabled, "auto_approve": tuple(approve)}
    if isinstance(url, str):
        return McpServer(name, url=url, headers=_pairs(entry.get("headers")), **common)
    args = tuple(str(a) for a in entry.get("args", ()) or ())
    return McpServer(name, command=command, args=args, env=_pairs(entry.get("env")), **common)


def _pairs(table: Any) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((str(k), str(v)) for k, v in table.items())) if isinstance(table, dict) else ()


class KiroMcp(Engine):
    name = "kiro-mcp"
    kinds: frozenset[Kind] = frozenset({"mcp"})

    def render(self, ctx: Context, items: Sequence[McpServer]) -> list[Output]:
        servers = {s.name: server_entry(ctx, s) for s in items}
        return [Output(ctx.path, data={KEY: servers}, format="json", merge=True)] if servers else []

    def parse(self, ctx: Context) -> list[McpServer]:
        entries = read_json(ctx.path).get(KEY, {})
        if not isinstance(entries, dict):
            ctx.drop("MCP server", KEY, f"{ctx.path}: mcpServers is not a map of servers")
            return []
        found = (server_from_entry(ctx, str(name), entry) for name, entry in sorted(entries.items()))
        return [s for s in found if s is not None]


ENGINES: list[Engine] = [KiroMcp()]
