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
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tackroom.profile.engines.base import Context, Engine, Kind, Output
from tackroom.profile.engines.settings import server_table
from tackroom.profile.model import McpServer

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
        found = (server_from_entry(name, entry) for name, entry in sorted(tables.items()))
        return [s for s in found if s is not None]


def read_toml(path: Path) -> dict[str, Any]:
    return tomllib.loads(path.read_bytes().decode("utf-8"))


def server_entry(ctx: Context, server: McpServer) -> dict[str, Any] | None:
    """One ``[mcp_servers.<name>]`` table, or None after dropping the server by name."""
    problem = _unexpressible(server)
    if problem is not None:
        ctx.drop("MCP server", server.name, problem)
        return None
    entry = _http_entry(server) if server.url is not None else _stdio_entry(server)
    return entry | dict(ctx.capability.frontmatter)


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


def server_from_entry(name: str, entry: Any) -> McpServer | None:
    """The neutral server one table describes (None for one that is neither stdio nor HTTP)."""
    if not isinstance(entry, dict):
        return None
    if "url" in entry:
        headers = dict(entry.get("http_headers", {}))
        headers |= {k: f"${{{v}}}" for k, v in entry.get("env_http_headers", {}).items()}
        if "bearer_token_env_var" in entry:
            headers[AUTHORIZATION] = f"Bearer ${{{entry['bearer_token_env_var']}}}"
        return McpServer(name, url=str(entry["url"]), headers=tuple(sorted(headers.items())))
    if "command" not in entry:
        return None
    # str(): a hand-written file may hold numbers where codex reads strings.
    env = {str(k): str(v) for k, v in entry.get("env", {}).items()}
    env |= {n: f"${{{n}}}" for n in map(_env_var_name, entry.get("env_vars", ())) if n}
    args = tuple(str(a) for a in entry.get("args", ()))
    return McpServer(name, command=str(entry["command"]), args=args, env=tuple(sorted(env.items())))


def _env_var_name(item: Any) -> str | None:
    """An ``env_vars`` entry: a name, or ``{ name, source }`` (codex 0.171.0 accepts both)."""
    if isinstance(item, str):
        return item
    return str(item["name"]) if isinstance(item, dict) and "name" in item else None


ENGINES: list[Engine] = [CodexToml()]
