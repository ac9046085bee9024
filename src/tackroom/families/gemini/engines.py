"""Engine ``gemini-settings``: MCP servers and hooks in a Gemini-style ``settings.json``.

Both merge into a file the harness shares with its other settings (auth,
privacy, ...), touching only ``mcpServers.<name>`` and tackroom's own hook
groups. The same format serves Gemini CLI and its fork Qwen Code.

MCP: a stdio server is ``command``/``args``/``env``; a URL server is
``httpUrl``, the one spelling of Streamable HTTP both read (Qwen 0.15.10 takes
a bare ``url`` as SSE; Gemini 0.61.0 reads ``httpUrl`` as HTTP). ``${VAR}``
references stay as written: both expand them when they load the settings.
Fixed per-harness keys come from the adapter's ``frontmatter`` table.

Hooks: Claude's group shape with a ``name`` on each handler,
``{"BeforeTool": [{"matcher": .., "hooks": [{"type": "command", "name": .., "command": ..}]}]}``,
translated through the adapter's event map and templates by the same helpers
as ``claude-settings``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tackroom.errors import ProfileError
from tackroom.profile.engines.base import Context, Engine, Kind, Output
from tackroom.profile.engines.settings import hook_groups, parse_hook, read_json
from tackroom.profile.model import Hook, McpServer

MCP_KEY = "mcpServers"
HOOKS_KEY = "hooks"


class GeminiSettings(Engine):
    name = "gemini-settings"
    kinds: frozenset[Kind] = frozenset({"mcp", "hooks"})

    def render(self, ctx: Context, items: Sequence[Any]) -> list[Output]:
        if ctx.kind == "mcp":
            return render_mcp(ctx, items)
        if ctx.kind == "hooks":
            return render_hooks(ctx, items)
        raise _wrong_kind(ctx)

    def parse(self, ctx: Context) -> list[Any]:
        if ctx.kind == "mcp":
            return parse_mcp(ctx)
        if ctx.kind == "hooks":
            return parse_hooks(ctx)
        raise _wrong_kind(ctx)


def _wrong_kind(ctx: Context) -> Exception:
    return ProfileError(
        f"adapter {ctx.adapter.name!r}: renderer 'gemini-settings' writes mcp and hooks, not {ctx.kind}"
    )


# -- MCP servers ----------------------------------------------------------------------------------


def render_mcp(ctx: Context, servers: Sequence[McpServer]) -> list[Output]:
    entries = {s.name: server_entry(s) | dict(ctx.capability.frontmatter) for s in servers}
    return [Output(ctx.path, data={MCP_KEY: entries}, format="json", merge=True)] if entries else []


def server_entry(server: McpServer) -> dict[str, Any]:
    if server.url is not None:
        entry: dict[str, Any] = {"httpUrl": server.url}
        return entry | ({"headers": dict(server.headers)} if server.headers else {})
    entry = {"command": server.command, "args": list(server.args)}
    return entry | ({"env": dict(server.env)} if server.env else {})


def parse_mcp(ctx: Context) -> list[McpServer]:
    entries = read_json(ctx.path).get(MCP_KEY, {})
    if not isinstance(entries, dict):
        return []
    found = (server_from_entry(name, entry) for name, entry in sorted(entries.items()))
    return [s for s in found if s is not None]


def server_from_entry(name: str, entry: Any) -> McpServer | None:
    """The neutral server an entry describes; None for one it cannot hold (a websocket ``tcp``)."""
    if not isinstance(entry, dict):
        return None
    url = entry.get("httpUrl") or entry.get("url")
    if url:
        return McpServer(name, url=str(url), headers=_pairs(entry.get("headers")))
    if "command" not in entry:
        return None
    args = tuple(str(a) for a in entry.get("args", ()))
    return McpServer(name, command=str(entry["command"]), args=args, env=_pairs(entry.get("env")))


def _pairs(table: Any) -> tuple[tuple[str, str], ...]:
    # str(): a hand-written file may hold numbers where the harness reads strings.
    return tuple(sorted((str(k), str(v)) for k, v in table.items())) if isinstance(table, dict) else ()


# -- hooks ----------------------------------------------------------------------------------------


def render_hooks(ctx: Context, hooks: Sequence[Hook]) -> list[Output]:
    events = hook_groups(ctx, hooks, shape=_named)
    return [Output(ctx.path, data={HOOKS_KEY: events}, format="json", merge=True)] if events else []


def _named(hook: Hook, group: dict[str, Any]) -> dict[str, Any]:
    # The handler's name is what gemini shows and records when a hook runs.
    return {**group, "hooks": [{**handler, "name": hook.name} for handler in group["hooks"]]}


def parse_hooks(ctx: Context) -> list[Hook]:
    table = read_json(ctx.path).get(HOOKS_KEY, {})
    hooks = []
    # Tolerate what tackroom did not write: non-list values, groups or handlers of other shapes.
    for event, groups in table.items() if isinstance(table, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            for handler in _handlers(group):
                hook = parse_hook(ctx, event, group.get("matcher"), str(handler.get("command", "")))
                if hook is not None:
                    hooks.append(hook)
    return sorted(hooks, key=lambda h: h.name)


def _handlers(group: Any) -> list[dict[str, Any]]:
    if not isinstance(group, dict):
        return []
    return [h for h in group.get("hooks", ()) if isinstance(h, dict)]


ENGINES: list[Engine] = [GeminiSettings()]
