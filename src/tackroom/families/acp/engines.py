"""Engine ``acp-mcp``: the profile's MCP servers in ACP's own ``session/new`` shape.

An ACP agent is given its MCP servers by its client, in ``session/new``'s
``mcpServers``, not through a file of its own. So the render writes them,
already in the protocol's shape, into a file of the run's home that tackroom
owns whole (where: the adapter's ``capabilities.mcp.path``), and the acp
family's client reads it when it opens the session::

    {"mcpServers": [
      {"name": "files", "command": "npx", "args": ["-y", "server"], "env": [{"name": "LOG", "value": "1"}]},
      {"type": "http", "name": "docs", "url": "https://docs.example/mcp",
       "headers": [{"name": "Authorization", "value": "Bearer ${DOCS_TOKEN}"}]}
    ]}

Values keep their ``${VAR}`` references: the file never holds a secret. The
client resolves them from the run's own environment only as it sends
``session/new`` (:func:`resolve`), and sends only the transports the agent
advertised in ``initialize`` (stdio always: every agent must take it).

ACP's server has no field for a working directory, a startup or tool
timeout, or tools approved in advance: each is dropped by name (the server is
still sent). A disabled server is not sent at all, and is dropped by name.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from tackroom.adapters.templates import ENV_REF
from tackroom.profile.engines.base import Context, Engine, Kind, Output
from tackroom.profile.engines.settings import BadEntry, hook_groups, read_json
from tackroom.profile.model import Hook, McpServer

KEY = "mcpServers"
"""The file's one key: session/new's own field."""

_NO_FIELD = {
    "cwd": "ACP's session/new has no working directory for a server",
    "timeout": "ACP's session/new has no startup timeout",
    "tool_timeout": "ACP's session/new has no tool timeout",
    "auto_approve": "ACP's session/new cannot approve tools in advance (the client answers each request)",
}


def session_entry(server: McpServer) -> dict[str, Any]:
    """One server as ACP's ``McpServer`` (stdio, ``http`` or ``sse``), with its values as written."""
    kind = server.kind
    if kind == "stdio":
        return {
            "name": server.name,
            "command": server.command,
            "args": list(server.args),
            "env": [{"name": k, "value": v} for k, v in server.env],
        }
    return {
        "type": kind,
        "name": server.name,
        "url": server.url,
        "headers": [{"name": k, "value": v} for k, v in server.headers],
    }


def server_of(entry: Any) -> McpServer:
    """The neutral server one ``mcpServers`` entry describes (the inverse of :func:`session_entry`).

    Anything else (a key ACP's server does not have, a value of the wrong type)
    is :class:`BadEntry`: the file is tackroom's own, so a change to it is not guessed at.
    """
    if not isinstance(entry, dict):
        raise BadEntry("not an object")
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise BadEntry("name: not a string")
    kind = entry.get("type", "stdio")
    if kind == "stdio" and "type" not in entry:
        keys = {"name", "command", "args", "env"}
    elif kind in ("http", "sse"):
        keys = {"type", "name", "url", "headers"}
    else:
        raise BadEntry(f"type: {str(kind)[:40]!r} is no transport ACP has")
    unknown = sorted(set(entry) - keys)
    if unknown:
        raise BadEntry(f"{str(unknown[0])[:60]!r}: not a field of ACP's {kind} server")
    if kind == "stdio":
        command = entry.get("command")
        args = entry.get("args", [])
        if not isinstance(command, str) or not command:
            raise BadEntry("command: not a string")
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise BadEntry("args: not a list of strings")
        env = _pairs(entry.get("env", []), "env")
        return McpServer(name, command=command, args=tuple(args), env=tuple(sorted(env)))
    url = entry.get("url")
    if not isinstance(url, str) or not url:
        raise BadEntry("url: not a string")
    headers = _pairs(entry.get("headers", []), "headers")
    return McpServer(
        name, url=url, headers=tuple(sorted(headers)), transport="sse" if kind == "sse" else None
    )


def _pairs(value: Any, key: str) -> list[tuple[str, str]]:
    """ACP's ``[{"name": ..., "value": ...}]`` list, as (name, value) pairs; each name once."""
    if not isinstance(value, list):
        raise BadEntry(f"{key}: not a list")
    found: dict[str, str] = {}
    for item in value:
        if (
            not isinstance(item, dict)
            or set(item) != {"name", "value"}
            or not all(isinstance(v, str) for v in item.values())
        ):
            raise BadEntry(f'{key}: each entry is {{"name": ..., "value": ...}} (strings)')
        if item["name"] in found:
            raise BadEntry(f"{key}: {item['name'][:60]!r} is given twice")
        found[item["name"]] = item["value"]
    return list(found.items())


def read_servers(data: Any) -> list[McpServer]:
    """The servers of the file's content (``{"mcpServers": [...]}``); :class:`BadEntry` naming the first
    entry that is not ACP's, or a second server of the same name."""
    if not isinstance(data, dict) or set(data) - {KEY}:
        raise BadEntry(f"not an object holding only {KEY!r}")
    entries = data.get(KEY, [])
    if not isinstance(entries, list):
        raise BadEntry(f"{KEY}: not a list")
    servers: list[McpServer] = []
    for n, entry in enumerate(entries):
        try:
            server = server_of(entry)
        except BadEntry as exc:
            raise BadEntry(f"{KEY}[{n}]: {exc}") from None
        if any(s.name == server.name for s in servers):
            raise BadEntry(f"{KEY}[{n}]: a second server named {server.name[:80]!r}")
        servers.append(server)
    return servers


class Unresolved(ValueError):
    """A ``${VAR}`` a server references that the run's environment does not hold."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def resolve(entry: Mapping[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
    """``entry`` with every ``${VAR}`` (``${VAR:-default}``) in its command, arguments, URL and
    env and header values taken from ``env``; :class:`Unresolved` for one it lacks and has no default.

    The result holds secrets: it is for the agent's stdin only, never for a log.
    """

    def one(text: str) -> str:
        def value(match: Any) -> str:
            found = env.get(match.group(1))
            if found:
                return found
            if match.group(2) is not None:
                return str(match.group(2))
            raise Unresolved(match.group(1))

        return ENV_REF.sub(value, text)

    out = dict(entry)
    for key in ("command", "url"):
        if isinstance(out.get(key), str):
            out[key] = one(out[key])
    if isinstance(out.get("args"), list):
        out["args"] = [one(a) for a in out["args"]]
    for key in ("env", "headers"):
        if isinstance(out.get(key), list):
            out[key] = [{"name": p["name"], "value": one(p["value"])} for p in out[key]]
    return out


class AcpMcp(Engine):
    """MCP servers for ``session/new``: one file, tackroom's own, written whole."""

    name = "acp-mcp"
    kinds: frozenset[Kind] = frozenset({"mcp"})

    def render(self, ctx: Context, items: Sequence[McpServer]) -> list[Output]:
        entries = [e for e in (self.entry(ctx, s) for s in items) if e is not None]
        return [Output(ctx.path, data={KEY: entries}, format="json")] if entries else []

    def entry(self, ctx: Context, server: McpServer) -> dict[str, Any] | None:
        if server.disabled:
            ctx.drop("MCP server", server.name, "ACP's session/new has no disabled server: it is not sent")
            return None
        for field, why in _NO_FIELD.items():
            if getattr(server, field) not in (None, ()):
                ctx.drop("MCP server", server.name, why, field)
        if server.kind == "stdio" and server.headers:
            ctx.drop("MCP server", server.name, "a command server has no headers", "headers")
        if server.kind != "stdio" and server.env:
            ctx.drop("MCP server", server.name, "a remote server has no environment", "env")
        return session_entry(server)

    def parse(self, ctx: Context) -> list[McpServer]:
        if not ctx.path.is_file():
            return []
        try:
            return read_servers(read_json(ctx.path))
        except BadEntry as exc:
            ctx.drop("MCP server", KEY, f"{ctx.path}: {exc}")
            return []


CODEX_HOOK_TIMEOUT_S = 600
"""codex's timeout for a command hook that names none: part of the hook's trust identity."""


def codex_hook_hash(event: str, group: Mapping[str, Any]) -> str:
    """The hash codex trusts one command hook by (codex-core's ``command_hook_hash``): its snake_case
    event and its group, holding the one handler with its timeout filled in, as canonical JSON."""
    (handler,) = group["hooks"]
    normal = {
        "type": "command",
        "command": handler["command"],
        "timeout": int(handler.get("timeout", CODEX_HOOK_TIMEOUT_S)),
        "async": False,
    }
    identity: dict[str, Any] = {"event_name": snake_event(event), "hooks": [normal]}
    if group.get("matcher") is not None:
        identity["matcher"] = group["matcher"]
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def snake_event(event: str) -> str:
    """``PreToolUse`` -> ``pre_tool_use``: how codex names an event in a hook's key and identity."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


class CodexAcpHooks(Engine):
    """Codex's hooks.json, with each hook trusted in the config.toml beside it.

    codex-acp runs codex-core, which runs a hook of the user's only when its
    config.toml trusts that hook (``[hooks.state."<hooks.json>:<event>:<group>:<handler>"]``
    ``trusted_hash``), and, unlike ``codex exec``, has no flag that bypasses this. The
    profile's hooks are the user's own (a project's come only after ``tackroom trust``),
    so a render into a home trusts exactly the hooks it writes (a project's render does not: its
    config.toml would pre-trust them for whoever clones it): hooks.json is tackroom's whole,
    each group holds one handler, and each is keyed by its place in that file. Import
    reads hooks.json only (as ``claude-settings`` does); the trust is render's alone.
    """

    name = "codex-acp-hooks"
    kinds: frozenset[Kind] = frozenset({"hooks"})
    sources = True

    def render(self, ctx: Context, items: Sequence[Hook]) -> list[Output]:
        from tackroom.families.claude_code.engines import hook_entry

        events = hook_groups(ctx, items, entry=hook_entry)
        if not events:
            return []
        hooks = Output(ctx.path, data={"hooks": events}, format="json")
        if ctx.scope == "project":
            # A project's own config.toml never trusts its hooks: a clone would run them unasked.
            return [hooks]
        state = {
            f"{ctx.path}:{snake_event(event)}:{n}:0": {"trusted_hash": codex_hook_hash(event, group)}
            for event, groups in events.items()
            for n, group in enumerate(groups)
        }
        trust = Output(
            ctx.path.with_name("config.toml"), data={"hooks": {"state": state}}, format="toml", merge=True
        )
        return [hooks, trust]

    def parse(self, ctx: Context) -> list[Hook]:
        from tackroom.families.claude_code.engines import parse_hooks

        return parse_hooks(ctx, read_json(ctx.path).get("hooks"))


ENGINES = [AcpMcp(), CodexAcpHooks()]
