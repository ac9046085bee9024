"""Engine ``codex-toml``: MCP servers as ``[mcp_servers.<name>]`` tables in a TOML config.

The file is shared with every other setting of the harness, so the render
merges: only ``mcp_servers.<name>`` keys are written, the user's keys stay.
The adapter's ``frontmatter`` table holds fixed keys every server entry
carries for this harness (codex needs ``default_tools_approval_mode``).

Codex expands no ``${VAR}`` (0.171.0 started a server with ``K=${VAR}``
literally in its environment; args reach the process without a shell), and
it starts a stdio server with a scrubbed environment. A secret reference
therefore becomes a pass-through by name, each spelled the one way codex has
for it:

- env ``KEY = "${KEY}"``: ``env_vars = ["KEY"]`` (forwarded from codex's own env);
- header ``Authorization = "Bearer ${VAR}"``: ``bearer_token_env_var = "VAR"``;
- any other header ``H = "${VAR}"``: ``env_http_headers = { H = "VAR" }``.

A reference anywhere else has no spelling, and the server is dropped by name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tackroom._toml import tomllib
from tackroom.profile.engines.base import Context, Engine, Kind, Output
from tackroom.profile.engines.settings import server_table
from tackroom.profile.model import McpServer, Native

KEY = "mcp_servers"
_REF = re.compile(r"\$\{[^}]*\}")
_WHOLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_BEARER = re.compile(r"Bearer \$\{([A-Za-z_][A-Za-z0-9_]*)\}")
AUTHORIZATION = "Authorization"


class CodexToml(Engine):
    name = "codex-toml"
    kinds: frozenset[Kind] = frozenset({"mcp"})

    def render(self, ctx: Context, items: Sequence[McpServer]) -> list[Output]:
        servers = server_table(ctx, items, server_entry)
        return [Output(ctx.path, data={KEY: servers}, format="toml", merge=True)] if servers else []

    def parse(self, ctx: Context) -> list[McpServer]:
        if not ctx.path.is_file():
            return []
        tables = read_toml(ctx.path).get(KEY, {})
        if not isinstance(tables, dict):
            ctx.drop("MCP server", KEY, f"{ctx.path}: {KEY} is not a table of servers")
            return []
        found = (_imported(ctx, name, entry) for name, entry in sorted(tables.items()))
        return [s for s in found if s is not None]


def read_toml(path: Path) -> dict[str, Any]:
    return tomllib.loads(path.read_bytes().decode("utf-8"))


def server_entry(ctx: Context, server: McpServer) -> dict[str, Any] | None:
    """One ``[mcp_servers.<name>]`` table, or None after dropping the server by name."""
    problem = _unexpressible(server)
    if problem is not None:
        ctx.drop("MCP server", server.name, problem)
        return None
    if server.transport == "sse":
        ctx.drop("MCP server", server.name, "codex speaks streamable HTTP to a server URL, not SSE")
        return None
    entry = _http_entry(server) if server.url is not None else _stdio_entry(server)
    for field, (key, value) in _optional(server).items():
        if field not in ctx.capability.keys:
            ctx.drop("MCP server", server.name, "not written for this harness", field)
        elif value is not None:
            entry[key] = value
    return entry | dict(ctx.capability.frontmatter)


def _optional(server: McpServer) -> dict[str, tuple[str, Any]]:
    """The optional fields a server sets -> (codex's key, its value; None when it is codex's default)."""
    fields: dict[str, tuple[str, Any]] = {}
    if server.timeout is not None:
        fields["timeout"] = ("startup_timeout_sec", server.timeout)
    if server.tool_timeout is not None:
        fields["tool_timeout"] = ("tool_timeout_sec", server.tool_timeout)
    if server.disabled:
        fields["disabled"] = ("enabled", False)
    if server.cwd is not None:
        fields["cwd"] = ("cwd", server.cwd)
    if server.auto_approve:
        fields["auto_approve"] = ("", None)
    return fields


def _unexpressible(server: McpServer) -> str | None:
    """Why codex cannot be given this server as written (None when it can)."""
    literal = [server.command or "", *server.args, server.url or ""]
    if any(_REF.search(text) for text in literal):
        return "this format expands no ${VAR} in a command, args or URL"
    for key, value in server.env:
        if _REF.search(value) and value != f"${{{key}}}":
            return f'env values are passed literally; only {key} = "${{{key}}}" can pass through (env_vars)'
    for key, value in server.headers:
        if _REF.search(value) and not (_header_ref(key, value) or _WHOLE.fullmatch(value)):
            return (
                f"header {key} is passed literally; only a whole-value ${{VAR}} or "
                'Authorization = "Bearer ${VAR}" can be taken from the environment'
            )
    return None


def _header_ref(key: str, value: str) -> str | None:
    found = _BEARER.fullmatch(value) if key == AUTHORIZATION else None
    return found.group(1) if found else None


def _stdio_entry(server: McpServer) -> dict[str, Any]:
    entry: dict[str, Any] = {"command": server.command}
    literal = {k: v for k, v in server.env if not _REF.search(v)}
    passed = [k for k, v in server.env if _REF.search(v)]
    entry |= {"args": list(server.args)} if server.args else {}
    entry |= {"env": literal} if literal else {}
    return entry | ({"env_vars": passed} if passed else {})


def _http_entry(server: McpServer) -> dict[str, Any]:
    entry: dict[str, Any] = {"url": server.url}
    static: dict[str, str] = {}
    from_env: dict[str, str] = {}
    for key, value in server.headers:
        bearer = _header_ref(key, value)
        whole = _WHOLE.fullmatch(value)
        if bearer is not None:
            entry["bearer_token_env_var"] = bearer
        elif whole is not None:
            from_env[key] = whole.group(1)
        else:
            static[key] = value
    entry |= {"http_headers": static} if static else {}
    return entry | ({"env_http_headers": from_env} if from_env else {})


_READ = {
    "command",
    "args",
    "env",
    "env_vars",
    "url",
    "http_headers",
    "env_http_headers",
    "bearer_token_env_var",
    "startup_timeout_sec",
    "tool_timeout_sec",
    "enabled",
    "cwd",
}
_NARROWING = ("enabled_tools", "disabled_tools")
"""Keys that keep some of a server's tools from the model: without them it would offer more."""


def _imported(ctx: Context, name: str, entry: Any) -> McpServer | None:
    """One server table read for import; what cannot be read is dropped by name with the reason."""
    where = f"{ctx.path}: [{KEY}.{name}]"
    server = server_from_entry(name, entry)
    if server is None:
        ctx.drop("MCP server", name, f"{where} is neither a command nor a url")
        return None
    narrowing = [k for k in _NARROWING if k in entry]
    if narrowing:
        ctx.drop("MCP server", name, f"{where}: {', '.join(narrowing)} has no neutral form (never widened)")
        return None
    for key in ("startup_timeout_sec", "tool_timeout_sec"):
        if key in entry and _seconds(entry[key]) is None:
            ctx.drop("MCP server", name, f"{where}: {key} is not a number of seconds", key)
    if "enabled" in entry and not isinstance(entry["enabled"], bool):
        ctx.drop("MCP server", name, f"{where}: enabled is not true or false", "enabled")
    fixed = ctx.capability.frontmatter
    for key in sorted(set(entry) - _READ):
        if key in fixed and entry[key] == fixed[key]:
            continue  # what tackroom writes on every server
        ctx.drop("MCP server", name, f"{where}: {key} has no neutral form", key)
    return server


def _seconds(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return None
    return float(value)


def server_from_entry(name: str, entry: Any) -> McpServer | None:
    """The neutral server one table describes (None for one that is neither stdio nor HTTP)."""
    if not isinstance(entry, dict):
        return None
    if "url" in entry:
        headers = dict(entry.get("http_headers", {}))
        headers |= {k: f"${{{v}}}" for k, v in entry.get("env_http_headers", {}).items()}
        if "bearer_token_env_var" in entry:
            headers[AUTHORIZATION] = f"Bearer ${{{entry['bearer_token_env_var']}}}"
        server = McpServer(name, url=str(entry["url"]), headers=tuple(sorted(headers.items())))
        return _with_options(server, entry)
    if "command" not in entry:
        return None
    # str(): a hand-written file may hold numbers where codex reads strings.
    env = {str(k): str(v) for k, v in entry.get("env", {}).items()}
    env |= {n: f"${{{n}}}" for n in map(_env_var_name, entry.get("env_vars", ())) if n}
    args = tuple(str(a) for a in entry.get("args", ()))
    server = McpServer(name, command=str(entry["command"]), args=args, env=tuple(sorted(env.items())))
    return _with_options(server, entry)


def _with_options(server: McpServer, entry: dict[str, Any]) -> McpServer:
    from dataclasses import replace

    cwd = entry.get("cwd")
    return replace(
        server,
        timeout=_seconds(entry.get("startup_timeout_sec")),
        tool_timeout=_seconds(entry.get("tool_timeout_sec")),
        disabled=entry.get("enabled") is False,
        cwd=str(cwd) if cwd is not None else None,
    )


def _env_var_name(item: Any) -> str | None:
    """An ``env_vars`` entry: a name, or ``{ name, source }`` (codex 0.171.0 accepts both)."""
    if isinstance(item, str):
        return item
    return str(item["name"]) if isinstance(item, dict) and "name" in item else None


class CodexNative(Engine):
    """Every ``config.toml`` key tackroom has no word for (model, approval_policy, profiles, agents, ...),
    kept as codex wrote it and merged back into the same file."""

    name = "codex-native"
    kinds: frozenset[Kind] = frozenset({"settings"})

    def render(self, ctx: Context, items: Sequence[Native]) -> list[Output]:
        data = {k: v for native in items for k, v in native.settings}
        for native in items:
            for rel, _ in native.files:
                ctx.drop("native setting", rel, "codex keeps no native files")
        return [Output(ctx.path, data=data, format="toml", merge=True)] if data else []

    def parse(self, ctx: Context) -> list[Native]:
        if not ctx.path.is_file():
            return []
        mcp = ctx.adapter.spec.capabilities.mcp
        shared = mcp is not None and (mcp.path, mcp.project) == (ctx.capability.path, ctx.capability.project)
        for key, value in read_toml(ctx.path).items():
            if key == KEY and shared:
                continue
            ctx.keep_setting("native setting", key, value)
        return []


ENGINES: list[Engine] = [CodexToml(), CodexNative()]
