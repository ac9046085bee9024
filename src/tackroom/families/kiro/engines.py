"""Engines ``kiro-mcp`` (MCP servers in Kiro's ``settings/mcp.json``) and ``kiro-agents`` (``agents/*.json``).

UNVERIFIED (no installable binary): from kiro.dev/docs/cli/mcp/configuration.
``{"mcpServers": {name: {"command", "args", "env", "disabled", "autoApprove"}}}``
for a local server, ``url`` and ``headers`` for a remote one; ``${VAR}`` is
expanded by Kiro, so references stay as written. ``autoApprove`` lists the
server's tools that run without asking; ``disabledTools`` takes tools away,
which no neutral server says, so such a server is dropped on import (importing
it would widen it). Other keys are dropped by name, field by field.

A custom agent is one JSON file, ``{"name", "description", "prompt", "tools",
"model", ...}`` (kiro.dev/docs/cli/custom-agents/configuration-reference);
``tools`` lists what it may use (``"*"``: everything), so a denied tool can be
said only beside a list of allowed ones. ``allowedTools`` (run without asking),
``resources``, ``hooks``, ``mcpServers`` and the rest have no neutral form and
are dropped by field; a prompt kept in a file (``file://``) drops the agent.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tackroom.profile.engines import tree
from tackroom.profile.engines.base import Context, Engine, Kind, Output
from tackroom.profile.engines.settings import read_json
from tackroom.profile.model import Agent, McpServer

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


_AGENT_KEYS = frozenset({"name", "description", "prompt", "tools", "model"})


def agent_file(ctx: Context, agent: Agent) -> dict[str, Any] | None:
    """One agent's JSON, or None after dropping it by name."""
    tools = [ctx.native_tool(t) for t in agent.tools]
    if None in tools:
        missing = [t for t, n in zip(agent.tools, tools, strict=True) if n is None]
        ctx.drop("subagent", agent.name, f"no tool {', '.join(missing)} here")
        return None
    if agent.disallowed_tools and (not agent.tools or set(agent.disallowed_tools) & set(agent.tools)):
        ctx.drop("subagent", agent.name, "a denied tool needs a list of allowed ones (tools) without it")
        return None
    if agent.disallowed_tools:  # denied by being left out of tools: said, but not read back as a list
        ctx.drop("subagent", agent.name, "denied by leaving them out of tools", "disallowed_tools")
    for field in ("temperature", "reasoning"):
        if getattr(agent, field) is not None:
            ctx.drop("subagent", agent.name, f"no {field} setting", field)
    data: dict[str, Any] = {"name": agent.name, "description": agent.description, "prompt": agent.body}
    data["tools"] = [str(t) for t in tools] if tools else ["*"]
    model = ctx.model(agent.model, "subagent", agent.name)
    return data | ({"model": model} if model is not None else {})


def agent_from(ctx: Context, name: str, data: Any) -> Agent | None:
    if not isinstance(data, dict):
        ctx.drop("subagent", name, "not a JSON object")
        return None
    prompt, tools = data.get("prompt", ""), data.get("tools", ["*"])
    if not isinstance(prompt, str) or prompt.startswith("file://"):
        ctx.drop("subagent", name, "its prompt is kept in a file (file://), which tackroom does not read")
        return None
    if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
        ctx.drop("subagent", name, "tools is not a list of tool names")
        return None
    for key in sorted(set(data) - _AGENT_KEYS):
        ctx.drop("subagent", name, f"{key!r} has no neutral form", key)
    model = data.get("model")
    refs = () if "*" in tools else tuple(ctx.tool_ref(t) for t in tools)
    return Agent(
        name,
        str(data.get("description") or ""),
        prompt,
        refs,
        ctx.neutral_model(model) if isinstance(model, str) else None,
    )


class KiroAgents(Engine):
    name = "kiro-agents"
    kinds: frozenset[Kind] = frozenset({"subagents"})

    def render(self, ctx: Context, items: Sequence[Agent]) -> list[Output]:
        out = []
        for agent in items:
            data = agent_file(ctx, agent)
            if data is not None:
                out.append(Output(ctx.path / f"{agent.name}.json", data=data, format="json"))
        return out

    def parse(self, ctx: Context) -> list[Agent]:
        if not ctx.path.is_dir():
            return []
        agents = []
        for path in (
            p for p in tree.entries(ctx, ctx.path, "subagent") if p.is_file() and p.suffix == ".json"
        ):
            try:
                data = json.loads(path.read_bytes().decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                ctx.drop("subagent", path.stem, f"{path}: not JSON ({exc})")
                continue
            name = data.get("name", path.stem) if isinstance(data, dict) else path.stem
            if name != path.stem:
                ctx.drop("subagent", path.stem, f"{path}: named {str(name)[:80]!r}, not after its file")
                continue
            agent = agent_from(ctx, path.stem, data)
            if agent is not None:
                agents.append(ctx.read_from(agent, path))
        return agents


ENGINES: list[Engine] = [KiroMcp(), KiroAgents()]
