"""The generic ``mcp-json`` engine, and the hook translation every hooks engine shares.

``mcp-json`` and the hooks engines merge into files the harness shares with other settings, touching only
their own keys (``mcpServers.<name>``; hook entries marked ``# tackroom:hook``).

Hooks are translated with the adapter's three maps: neutral moment -> event
name, neutral tools -> the matcher, and the inject/refuse templates. A hook
wanting something the harness lacks is dropped by name, never substituted.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tackroom.errors import ConfigError, Problem
from tackroom.profile.engines.base import Context, Engine, Kind, Output
from tackroom.profile.model import Hook, McpServer

HOOK_MARK = "# tackroom:hook "
TOOL_MOMENTS = ("before-tool", "after-tool")


def mcp_entry(server: McpServer) -> dict[str, Any]:
    """The common JSON shape of one server (Claude's ``.mcp.json``, Gemini, Qwen, Copilot)."""
    if server.url is not None:
        entry: dict[str, Any] = {"type": "http", "url": server.url}
        return entry | ({"headers": dict(server.headers)} if server.headers else {})
    entry = {"type": "stdio", "command": server.command, "args": list(server.args)}
    return entry | ({"env": dict(server.env)} if server.env else {})


def mcp_from_entry(name: str, entry: dict[str, Any]) -> McpServer:
    if "url" in entry:
        return McpServer(name, url=entry["url"], headers=tuple(sorted(entry.get("headers", {}).items())))
    return McpServer(
        name,
        command=entry.get("command"),
        args=tuple(entry.get("args", ())),
        env=tuple(sorted(entry.get("env", {}).items())),
    )


def server_table(
    ctx: Context, items: Sequence[McpServer], entry: Callable[[Context, McpServer], dict[str, Any] | None]
) -> dict[str, Any]:
    """Name -> entry for every server ``entry`` can express (it drops the others by name)."""
    table = {}
    for server in items:
        found = entry(ctx, server)
        if found is not None:
            table[server.name] = found
    return table


def read_json(path: Path) -> dict[str, Any]:
    """A native settings file read as the harnesses read it (comments and trailing commas allowed).

    Missing or empty: ``{}``. Not JSON, not UTF-8: a :class:`ConfigError` naming the file and line.
    """
    from tackroom.profile import jsonc

    if not path.is_file():
        return {}
    raw = path.read_bytes()
    try:
        data = jsonc.loads(raw.decode("utf-8")) if raw.strip() else {}
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError([Problem(str(path), "", "not UTF-8", line)]) from exc
    except jsonc.JsoncError as exc:
        raise ConfigError([Problem(str(path), "", f"not JSON: {exc.message}", exc.line)]) from exc
    return data if isinstance(data, dict) else {}


class McpJson(Engine):
    name = "mcp-json"
    kinds: frozenset[Kind] = frozenset({"mcp"})
    key = "mcpServers"

    def render(self, ctx: Context, items: Sequence[McpServer]) -> list[Output]:
        servers = {s.name: self.entry(ctx, s) for s in items}
        return [Output(ctx.path, data={self.key: servers}, format="json", merge=True)] if servers else []

    def entry(self, ctx: Context, server: McpServer) -> dict[str, Any]:
        return mcp_entry(server)

    def parse(self, ctx: Context) -> list[McpServer]:
        servers = read_json(ctx.path).get(self.key, {})
        return [mcp_from_entry(name, entry) for name, entry in sorted(servers.items())]


HookEntry = Callable[[Context, Hook], tuple[str, dict[str, Any]] | None]
Shape = Callable[[Hook, dict[str, Any]], dict[str, Any]]


def hook_groups(
    ctx: Context,
    hooks: Sequence[Hook],
    entry: HookEntry | None = None,
    shape: Shape | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """Event name -> the settings groups of the hooks that can be expressed (the rest are dropped).

    ``entry`` translates one hook (default :func:`hook_entry`); ``shape`` rewrites its group
    into the engine's own format.
    """
    events: dict[str, list[dict[str, Any]]] = {}
    for hook in hooks:
        found = (entry or hook_entry)(ctx, hook)
        if found is not None:
            event, group = found
            events.setdefault(event, []).append(shape(hook, group) if shape else group)
    return events


def hook_entry(ctx: Context, hook: Hook) -> tuple[str, dict[str, Any]] | None:
    """(event name, the settings group) for one hook, or None after dropping it by name."""
    hooks = ctx.capability
    events = getattr(hooks, "events", {})
    event = events.get(hook.moment)
    if event is None:
        ctx.drop("hook", hook.name, f"{hook.moment} unsupported")
        return None
    command = hook_command(ctx, hook, event)
    if command is None:
        return None
    group: dict[str, Any] = {"hooks": [{"type": "command", "command": command}]}
    if hook.moment in TOOL_MOMENTS:
        names = [ctx.hook_tool_name(t) for t in hook.matcher]
        if None in names:
            ctx.drop(
                "hook",
                hook.name,
                f"no tool {', '.join(t for t, n in zip(hook.matcher, names, strict=True) if not n)} here",
            )
            return None
        group = {"matcher": "|".join(str(n) for n in names) if names else "*", **group}
    return event, group


def hook_command(ctx: Context, hook: Hook, event: str) -> str | None:
    """The shell command a hook runs, ending in its name marker so it parses back."""
    if hook.action == "command":
        return f"{hook.command} {HOOK_MARK}{hook.name}"
    template = getattr(ctx.capability, hook.action, None)
    if template is None or (template.moments is not None and hook.moment not in template.moments):
        ctx.drop("hook", hook.name, f"{hook.moment} {hook.action} unsupported")
        return None
    text = template.template.replace("{{event}}", event).replace("{{text}}", shlex.quote(hook.text or ""))
    return f"{text} {HOOK_MARK}{hook.name}"


def parse_hook(ctx: Context, event: str, matcher: str | None, command: str) -> Hook | None:
    """The neutral hook a rendered command came from (None for hooks tackroom did not write)."""
    body, mark, name = command.rpartition(" " + HOOK_MARK)
    if not mark:
        return None
    events = getattr(ctx.capability, "events", {})
    moment = next((m for m, e in events.items() if e == event), None)
    if moment is None:
        return None
    tools: tuple[str, ...] = ()
    if matcher and matcher != "*":
        tools = tuple(ctx.hook_neutral_tool(n) or n for n in matcher.split("|"))
    for action in ("inject", "refuse"):
        template = getattr(ctx.capability, action, None)
        text = template and _match_template(template.template, event, body)
        if text is not None:
            return Hook(name, moment, action, text=text, matcher=tools)
    return Hook(name, moment, "command", command=body, matcher=tools)


def _match_template(template: str, event: str, command: str) -> str | None:
    parts = template.replace("{{event}}", event).split("{{text}}")
    # One group; a repeated {{text}} must be the same text again. A group per copy made a
    # template that repeats it backtrack exponentially on a command read from a stranger's files.
    copies = [re.escape(part) for part in parts[1:]]
    pattern = re.escape(parts[0]) + "".join(
        ("(?P<text>.*)" if i == 0 else "(?P=text)") + part for i, part in enumerate(copies)
    )
    found = re.fullmatch(pattern, command, re.DOTALL)
    if found is None or not found.groups():
        return None
    words = shlex.split(found.group(1))
    return words[0] if len(words) == 1 else None


ENGINES: list[Engine] = [McpJson()]
