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

import json
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from tackroom.errors import ProfileError
from tackroom.profile.engines.base import Context, Engine, Kind, Output
from tackroom.profile.engines.settings import HOOK_MARK, hook_groups, native_outputs, parse_hook, read_json
from tackroom.profile.model import Hook, McpServer, McpTransport, Native, Permissions
from tackroom.profile.tools import BadReference, parse_tool

MCP_KEY = "mcpServers"
HOOKS_KEY = "hooks"


class GeminiSettings(Engine):
    name = "gemini-settings"
    kinds: frozenset[Kind] = frozenset({"mcp", "hooks", "permissions", "settings"})

    def render(self, ctx: Context, items: Sequence[Any]) -> list[Output]:
        if ctx.kind == "mcp":
            return render_mcp(ctx, items)
        if ctx.kind == "hooks":
            return render_hooks(ctx, items)
        if ctx.kind == "permissions":
            return render_permissions(ctx, items)
        if ctx.kind == "settings":
            return render_settings(ctx, items)
        raise _wrong_kind(ctx)

    def parse(self, ctx: Context) -> list[Any]:
        if ctx.kind == "mcp":
            return parse_mcp(ctx)
        if ctx.kind == "hooks":
            return parse_hooks(ctx)
        if ctx.kind == "permissions":
            return parse_permissions(ctx)
        if ctx.kind == "settings":
            return parse_settings(ctx)
        raise _wrong_kind(ctx)


def _wrong_kind(ctx: Context) -> Exception:
    return ProfileError(
        f"adapter {ctx.adapter.name!r}: renderer 'gemini-settings' writes mcp, hooks, permissions and "
        f"settings, not {ctx.kind}"
    )


# -- MCP servers ----------------------------------------------------------------------------------

_SERVER_KEYS = frozenset(
    {"command", "args", "env", "cwd", "url", "httpUrl", "type", "headers", "timeout", "trust"}
)
"""Server keys tackroom reads; ``includeTools``/``excludeTools`` narrow a server and drop it (never widen)."""


def render_mcp(ctx: Context, servers: Sequence[McpServer]) -> list[Output]:
    entries = {}
    for server in servers:
        entry = server_entry(ctx, server)
        if entry is not None:
            entries[server.name] = entry | dict(ctx.capability.frontmatter)
    return [Output(ctx.path, data={MCP_KEY: entries}, format="json", merge=True)] if entries else []


def server_entry(ctx: Context, server: McpServer) -> dict[str, Any] | None:
    """One ``mcpServers.<name>`` entry; None after dropping the server by name."""
    if server.disabled:
        # settings.json has no per-server switch: writing it would enable it.
        ctx.drop("MCP server", server.name, "disabled, and a server in settings.json always starts")
        return None
    if server.tool_timeout is not None:
        ctx.drop("MCP server", server.name, "one timeout only, for every request", "tool_timeout")
    entry: dict[str, Any]
    if server.url is not None:
        # httpUrl: Streamable HTTP on gemini and qwen alike; an SSE server says so with type.
        entry = {"url": server.url, "type": "sse"} if server.kind == "sse" else {"httpUrl": server.url}
        entry |= {"headers": dict(server.headers)} if server.headers else {}
    else:
        entry = {"command": server.command, "args": list(server.args)}
        entry |= {"env": dict(server.env)} if server.env else {}
        entry |= {"cwd": server.cwd} if server.cwd is not None else {}
    if server.timeout is not None:
        ms = server.timeout * 1000  # milliseconds
        entry["timeout"] = int(ms) if float(ms).is_integer() else ms
    if server.auto_approve == ("*",):
        entry["trust"] = True  # every tool of the server runs without asking
    elif server.auto_approve:
        ctx.drop("MCP server", server.name, "trust approves every tool of a server or none", "auto_approve")
    return entry


def parse_mcp(ctx: Context) -> list[McpServer]:
    entries = read_json(ctx.path).get(MCP_KEY, {})
    if not isinstance(entries, dict):
        ctx.drop("MCP server", MCP_KEY, f"{ctx.path}: mcpServers is not a map of servers")
        return []
    found = (server_from_entry(ctx, str(name), entry) for name, entry in sorted(entries.items()))
    return [s for s in found if s is not None]


def server_from_entry(ctx: Context, name: str, entry: Any) -> McpServer | None:
    """The neutral server an entry describes; None after dropping one it cannot hold, by name."""
    if not isinstance(entry, dict):
        ctx.drop("MCP server", name, f"mcpServers.{name} is not an object")
        return None
    narrowed = [k for k in ("includeTools", "excludeTools") if k in entry]
    if narrowed:
        ctx.drop("MCP server", name, f"{narrowed[0]} limits its tools, which no neutral server says")
        return None
    timeout = entry.get("timeout")
    if timeout is not None and (not _number(timeout) or timeout <= 0):
        ctx.drop("MCP server", name, "timeout is not a number of milliseconds")
        return None
    common: dict[str, Any] = {
        "timeout": timeout / 1000 if timeout is not None else None,
        "auto_approve": ("*",) if entry.get("trust") is True else (),
    }
    url = entry.get("httpUrl") or entry.get("url")
    if not url and "command" not in entry:
        ctx.drop("MCP server", name, "neither a command nor a url (a websocket tcp server?)")
        return None
    for key in sorted(set(entry) - _SERVER_KEYS):
        ctx.drop("MCP server", name, f"{key!r} has no neutral form", key)
    if url:
        sse = not entry.get("httpUrl") and entry.get("type") == "sse"
        transport: McpTransport | None = "sse" if sse else None
        return McpServer(
            name, url=str(url), headers=_pairs(entry.get("headers")), transport=transport, **common
        )
    args = tuple(str(a) for a in entry.get("args", ()))
    cwd = entry.get("cwd")
    return McpServer(
        name,
        command=str(entry["command"]),
        args=args,
        env=_pairs(entry.get("env")),
        cwd=str(cwd) if cwd is not None else None,
        **common,
    )


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _pairs(table: Any) -> tuple[tuple[str, str], ...]:
    # str(): a hand-written file may hold numbers where the harness reads strings.
    return tuple(sorted((str(k), str(v)) for k, v in table.items())) if isinstance(table, dict) else ()


# -- hooks ----------------------------------------------------------------------------------------


def render_hooks(ctx: Context, hooks: Sequence[Hook]) -> list[Output]:
    events = hook_groups(ctx, hooks, shape=_named)
    return [Output(ctx.path, data={HOOKS_KEY: events}, format="json", merge=True)] if events else []


def _named(hook: Hook, group: dict[str, Any]) -> dict[str, Any]:
    # The handler's name is what gemini shows and records when a hook runs; its timeout is in ms.
    extra: dict[str, Any] = {"name": hook.name}
    if hook.timeout is not None:
        ms = hook.timeout * 1000
        extra["timeout"] = int(ms) if float(ms).is_integer() else ms
    return {**group, "hooks": [{**handler, **extra} for handler in group["hooks"]]}


def parse_hooks(ctx: Context) -> list[Hook]:
    """Every hook of the settings: tackroom's by their marker, the user's by their handler name.

    A handler of another type, an event with no neutral moment or a matcher on
    a lifecycle event is dropped by name; a matcher that is not a list of tool
    names stays gemini's own (``gemini:<regex>``).
    """
    table = read_json(ctx.path).get(HOOKS_KEY)
    if table is None:
        return []
    if not isinstance(table, dict):
        ctx.drop("hook", HOOKS_KEY, f"{ctx.path}: hooks is not an object of events")
        return []
    moments = {e: m for m, e in getattr(ctx.capability, "events", {}).items()}
    config = {k: v for k, v in table.items() if k in HOOKS_CONFIG_FIELDS}
    if config:
        ctx.keep_setting("hook", HOOKS_KEY, config)  # hooks.enabled / disabled / notifications
    disabled = config.get("disabled")
    off: list[Any] = disabled if isinstance(disabled, list) else []
    found: dict[str, Hook] = {}
    for event, groups in table.items():
        if event in HOOKS_CONFIG_FIELDS:
            continue
        for n, (group, handler) in enumerate(_pairs_of(groups), start=1):
            hook = _user_hook(ctx, str(event), moments.get(str(event)), group, handler, n)
            if hook is None:
                continue
            if config.get("enabled") is False or hook.name in off:
                ctx.drop("hook", hook.name, f"{ctx.path}: disabled (hooks.enabled or hooks.disabled)")
                continue
            name, k = hook.name, 1
            while name in found:  # two handlers of one name: both kept, the second renamed
                k += 1
                name = f"{hook.name}-{k}"
            found[name] = replace(hook, name=name)
    return sorted(found.values(), key=lambda h: h.name)


HOOKS_CONFIG_FIELDS = ("enabled", "disabled", "notifications")
"""Keys of ``hooks`` that are settings, not events (0.61.0's HOOKS_CONFIG_FIELDS)."""
_PLAIN_TOOL = re.compile(r"^[A-Za-z0-9_.-]+$")
_HOOK_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,127}$")


def _pairs_of(groups: Any) -> list[tuple[dict[str, Any], Any]]:
    pairs: list[tuple[dict[str, Any], Any]] = []
    for group in groups if isinstance(groups, list) else [groups]:
        if not isinstance(group, dict):
            pairs.append(({}, group))
            continue
        handlers = group.get("hooks")
        pairs += [(group, h) for h in (handlers if isinstance(handlers, list) else [handlers])]
    return pairs


def _user_hook(
    ctx: Context, event: str, moment: str | None, group: dict[str, Any], handler: Any, n: int
) -> Hook | None:
    where = f"{event} in {ctx.path}"
    label = re.sub(r"[^a-z0-9]+", "-", re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", event).lower()).strip("-")
    label = f"{label or 'hook'}-{n}"
    if not isinstance(handler, dict):
        ctx.drop("hook", label, f"{where}: a hook handler is an object with type and command")
        return None
    command = handler.get("command")
    given = handler.get("name")
    name = given if isinstance(given, str) and _HOOK_NAME.match(given) else label
    if isinstance(command, str) and HOOK_MARK in command:
        name = command.rpartition(HOOK_MARK)[2]
    if moment is None:
        ctx.drop("hook", name, f"{where}: event {event} has no neutral moment here")
        return None
    if handler.get("type", "command") != "command" or not isinstance(command, str) or not command.strip():
        ctx.drop("hook", name, f"{where}: only a command handler has a neutral form")
        return None
    matcher = group.get("matcher")
    refs: tuple[str, ...] = ()
    if isinstance(matcher, str) and matcher.strip() not in ("", "*"):
        if moment not in ("before-tool", "after-tool"):
            ctx.drop("hook", name, f"{where}: matcher {matcher!r} selects what no neutral hook can")
            return None
        parts = matcher.split("|")
        if all(_PLAIN_TOOL.match(p) for p in parts):
            refs = tuple(ctx.hook_neutral_tool(p) or ctx.tool_ref(p) for p in parts)
        else:
            refs = (f"{ctx.adapter.harness}:{matcher}",)
    elif matcher is not None and not isinstance(matcher, str):
        ctx.drop("hook", name, f"{where}: the matcher is not a string")
        return None
    timeout = handler.get("timeout")
    seconds = None
    if timeout is not None:
        if isinstance(timeout, int | float) and _number(timeout) and timeout > 0:
            seconds = timeout / 1000
        else:
            ctx.drop("hook", name, f"{where}: timeout {timeout!r} is not milliseconds", "timeout")
    ours = parse_hook(ctx, event, None, command) if HOOK_MARK in command else None
    if ours is not None:
        return replace(ours, matcher=refs, timeout=seconds)
    return Hook(name, moment, "command", command=command, matcher=refs, timeout=seconds)


# -- permissions ----------------------------------------------------------------------------------

TOOLS_KEY = "tools"
PERMISSION_KEYS = {"allow": "allowed", "ask": "confirmationRequired", "deny": "exclude"}
"""Verdict -> the ``tools`` list that says it. 0.61.0 turns them into policy rules of priority
exclude > confirmationRequired > allowed: the neutral deny over ask over allow."""
_SHELL_PREFIX = re.compile(r"^([A-Za-z0-9_-]+)\((.*)\)$")


def render_permissions(ctx: Context, items: Sequence[Permissions]) -> list[Output]:
    lists: dict[str, list[str]] = {}
    for permissions in items:
        for verdict, key in PERMISSION_KEYS.items():
            for ref in getattr(permissions, verdict):
                native = _permission_entry(ctx, verdict, ref)
                if native is not None:
                    lists.setdefault(key, []).append(native)
    return [Output(ctx.path, data={TOOLS_KEY: lists}, format="json", merge=True)] if lists else []


def _permission_entry(ctx: Context, verdict: str, ref: str) -> str | None:
    name = f"{verdict} {ref}"
    try:
        parsed = parse_tool(ref)
    except BadReference as exc:
        ctx.drop("permission rule", name, str(exc))
        return None
    if parsed.pattern is not None and parsed.tool not in ("mcp",):
        shell = ctx.tool_name("shell")
        # Only tools.allowed narrows, and only the shell, by a command prefix: "run_shell_command(git)".
        if verdict == "allow" and parsed.tool == "shell" and shell and parsed.pattern.endswith(":*"):
            return f"{shell}({parsed.pattern[:-2]})"
        ctx.drop("permission rule", name, f"gemini's tools.{PERMISSION_KEYS[verdict]} takes no pattern here")
        return None
    if parsed.tool == "mcp" and parsed.mcp_tool is None:
        ref = f'mcp("{parsed.server}/*")'
    native = ctx.native_tool(ref)
    if native is None:
        ctx.drop("permission rule", name, "no such tool here")
    return native


def parse_permissions(ctx: Context) -> list[Permissions]:
    table = read_json(ctx.path).get(TOOLS_KEY)
    if table is None:
        return []
    if not isinstance(table, dict):
        ctx.keep_setting("native setting", TOOLS_KEY, table)
        return []
    found: dict[str, list[str]] = {}
    rest = {k: v for k, v in table.items() if k not in PERMISSION_KEYS.values()}
    for verdict, key in PERMISSION_KEYS.items():
        entries = table.get(key)
        if entries is None:
            continue
        if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
            ctx.drop("permission rule", f"tools.{key}", f"{ctx.path}: not a list of tool names")
            continue
        found[verdict] = list(dict.fromkeys(_permission_ref(ctx, e) for e in entries))
    if rest:
        ctx.keep_setting("native setting", TOOLS_KEY, rest)
    permissions = Permissions(*(tuple(found.get(v, ())) for v in PERMISSION_KEYS))
    return [permissions] if permissions else []


def _permission_ref(ctx: Context, entry: str) -> str:
    narrowed = _SHELL_PREFIX.match(entry)
    if narrowed is not None:
        ref = ctx.tool_ref(narrowed.group(1))
        if ref == "shell":
            return f"shell({json.dumps(narrowed.group(2) + ':*')})"
        return ref  # 0.61.0 reads "read_file(x)" as read_file, whatever the parentheses say
    ref = ctx.tool_ref(entry)
    return ref.replace('/*")', '")') if ref.startswith("mcp(") else ref


# -- passthrough settings -------------------------------------------------------------------------


def _claimed(ctx: Context) -> set[str]:
    """The top-level keys this adapter's capabilities read from the settings file."""
    caps = ctx.adapter.spec.capabilities
    claimed = {MCP_KEY} if caps.mcp is not None and caps.mcp.render == GeminiSettings.name else set()
    claimed |= {HOOKS_KEY} if caps.hooks is not None and caps.hooks.render == GeminiSettings.name else set()
    if caps.permissions is not None and caps.permissions.render == GeminiSettings.name:
        claimed.add(TOOLS_KEY)
    return claimed


def render_settings(ctx: Context, items: Sequence[Native]) -> list[Output]:
    return native_outputs(ctx, items)


def parse_settings(ctx: Context) -> list[Native]:
    claimed = _claimed(ctx)
    for key, value in read_json(ctx.path).items():
        if key not in claimed:
            ctx.keep_setting("native setting", key, value)
    return []


# -- session environment: an env file ---------------------------------------------------------------

_ENV_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*?)\s*$")


class GeminiEnv(Engine):
    """The session environment as gemini's ``.env`` file (read with dotenv, which expands nothing).

    gemini loads the nearest one (``.gemini/.env`` of a trusted project, up to
    ``~/.gemini/.env``) and sets only variables not already set. tackroom owns
    the file whole: ``NAME='value'``. A value dotenv cannot hold single-quoted
    (a ``'`` or a line break) or a ``${VAR}`` it would not expand is dropped by name.
    """

    name = "gemini-env"
    kinds: frozenset[Kind] = frozenset({"env"})

    def render(self, ctx: Context, items: Sequence[tuple[str, str]]) -> list[Output]:
        lines = []
        for name, value in items:
            if "'" in value or "\n" in value or "\r" in value:
                ctx.drop("env variable", name, "a quote or line break dotenv cannot hold single-quoted")
            elif "${" in value:
                ctx.drop("env variable", name, "gemini's .env expands no ${VAR}")
            else:
                lines.append(f"{name}='{value}'\n")
        return [Output(ctx.path, "".join(lines))] if lines else []

    def parse(self, ctx: Context) -> list[tuple[str, str]]:
        if not ctx.path.is_file():
            return []
        found: dict[str, str] = {}
        text = ctx.path.read_bytes().decode("utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            match = _ENV_LINE.match(line)
            if match is None:
                ctx.drop("env variable", f"line {number}", f"{ctx.path}:{number}: not NAME=value")
                continue
            name, raw = match.groups()
            value = _env_value(raw)
            if value is None:
                ctx.drop("env variable", name, f"{ctx.path}:{number}: a quoted value tackroom does not read")
                continue
            found[name] = value  # dotenv: a later line wins
        return sorted(found.items())


def _env_value(raw: str) -> str | None:
    if raw[:1] in ("'", '"', "`"):
        end = raw.find(raw[0], 1)
        if end < 0 or (raw[0] == '"' and "\\" in raw[1:end]):
            return None  # multi-line, or escapes dotenv would expand
        return raw[1:end]
    return raw.split(" #", 1)[0].rstrip()


ENGINES: list[Engine] = [GeminiSettings(), GeminiEnv()]
