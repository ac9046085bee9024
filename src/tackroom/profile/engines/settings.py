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
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from tackroom.errors import ConfigError, Problem
from tackroom.profile.engines.base import Context, Engine, Kind, Output
from tackroom.profile.model import Hook, McpServer, Native

HOOK_MARK = "# tackroom:hook "
TOOL_MOMENTS = ("before-tool", "after-tool")


TRANSPORTS = ("stdio", "sse", "http")
_OPTIONAL = ("cwd", "timeout", "tool_timeout", "disabled", "auto_approve")


def _seconds(keys: dict[str, str], field: str) -> tuple[str | None, float]:
    """(this harness's key for a duration field, its units per second): ``timeout:ms`` is milliseconds."""
    spelled = keys.get(field)
    if spelled is None:
        return None, 1.0
    key, _, unit = spelled.partition(":")
    return key, 1000.0 if unit == "ms" else 1.0


def mcp_entry(server: McpServer, ctx: Context | None = None) -> dict[str, Any]:
    """The common JSON shape of one server (Claude's ``.mcp.json``, Gemini, Qwen, Copilot, Kiro, Cursor).

    With ``ctx``, the capability's ``keys`` spell it: ``type`` (the transport's key; ``""`` writes
    none), ``type.<transport>`` (its value), ``url.<transport>`` (the URL's key: Gemini's ``url``
    is SSE, ``httpUrl`` streamable HTTP), ``env``, ``headers``, and ``cwd``, ``timeout`` /
    ``tool_timeout`` (``:ms`` for milliseconds), ``disabled`` (or ``enabled``, inverted),
    ``auto_approve`` (a list) or ``auto_approve.all`` (a flag meaning every tool). A field the
    harness has no key for is dropped by name (the server is still written).
    """
    keys: dict[str, str] = dict(ctx.capability.keys) if ctx is not None else {}

    def lost(field: str, why: str = "") -> None:
        if ctx is not None:
            ctx.drop("MCP server", server.name, why or f"no {field.replace('_', '-')} here", field)

    kind = server.kind
    entry: dict[str, Any] = {}
    type_key = keys.get("type", "type")
    if type_key:
        entry[type_key] = keys.get(f"type.{kind}", kind)
    if kind == "stdio":
        entry |= {"command": server.command, "args": list(server.args)}
        if server.env:
            entry[keys.get("env", "env")] = dict(server.env)
        if server.headers:
            lost("headers", "a command server has no headers")
    else:
        entry[keys.get(f"url.{kind}", "url")] = server.url
        if server.headers:
            entry[keys.get("headers", "headers")] = dict(server.headers)
        if server.env:
            lost("env", "a remote server has no environment")
    if server.cwd is not None:
        if "cwd" in keys and kind == "stdio":
            entry[keys["cwd"]] = server.cwd
        else:
            lost("cwd")
    for field in ("timeout", "tool_timeout"):
        value = getattr(server, field)
        key, unit = _seconds(keys, field)
        if value is None:
            continue
        if key is None:
            lost(field)
        else:
            scaled = value * unit
            entry[key] = int(scaled) if scaled == int(scaled) else scaled
    if server.disabled:
        if "disabled" in keys:
            entry[keys["disabled"]] = True
        elif "enabled" in keys:
            entry[keys["enabled"]] = False
        else:
            lost("disabled")
    if server.auto_approve:
        if "auto_approve" in keys:
            entry[keys["auto_approve"]] = list(server.auto_approve)
        elif "auto_approve.all" in keys and server.auto_approve == ("*",):
            entry[keys["auto_approve.all"]] = True
        else:
            lost("auto_approve", "cannot approve these tools here")
    return entry


class BadEntry(ValueError):
    """An MCP server entry tackroom cannot read; the message says why."""


def mcp_from_entry(name: str, entry: Any, ctx: Context | None = None) -> McpServer:
    """The neutral server one native entry describes (the inverse of :func:`mcp_entry`).

    A shape tackroom cannot read is :class:`BadEntry`; with ``ctx``, a key it
    has no word for is a field drop by name.
    """
    keys: dict[str, str] = dict(ctx.capability.keys) if ctx is not None else {}
    if not isinstance(entry, dict):
        raise BadEntry("not an object")
    known: set[str] = {"command", "args"}
    type_key = keys.get("type", "type")
    spelled = {keys.get(f"type.{t}", t): t for t in TRANSPORTS}
    transport: str | None = None
    if type_key:
        known.add(type_key)
        if type_key in entry:
            transport = spelled.get(entry[type_key]) if isinstance(entry[type_key], str) else None
            if transport is None:
                raise BadEntry(f"{type_key}: {str(entry[type_key])[:40]!r} is no transport tackroom knows")
    url_keys = {t: keys.get(f"url.{t}", "url") for t in ("sse", "http")}
    known |= set(url_keys.values())
    url_key = next((k for k in url_keys.values() if k in entry), None)
    if transport is None and url_key is not None:
        found = [t for t, k in url_keys.items() if k == url_key]
        transport = "http" if "http" in found else found[0]
    if transport is None and "command" in entry:
        transport = "stdio"
    if transport is None:
        raise BadEntry("neither a command nor a URL")
    env_key, headers_key = keys.get("env", "env"), keys.get("headers", "headers")
    known |= {env_key, headers_key}
    fields: dict[str, Any] = {}
    if transport == "stdio":
        fields["command"] = _string(entry.get("command"), "command")
        fields["args"] = tuple(_strings(entry.get("args", []), "args"))
        fields["env"] = tuple(sorted(_mapping(entry.get(env_key, {}), env_key).items()))
    else:
        if url_key is None:
            raise BadEntry(f"a {transport} server without a URL")
        fields["url"] = _string(entry[url_key], url_key)
        fields["headers"] = tuple(sorted(_mapping(entry.get(headers_key, {}), headers_key).items()))
        fields["transport"] = "sse" if transport == "sse" else None
    for field in ("timeout", "tool_timeout"):
        key, unit = _seconds(keys, field)
        if key is not None and key in entry:
            known.add(key)
            value = entry[key]
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                _lost(ctx, name, field, f"{key}: not a number of {'milliseconds' if unit > 1 else 'seconds'}")
            else:
                fields[field] = float(value) / unit
    for field, key in (
        ("cwd", keys.get("cwd")),
        ("disabled", keys.get("disabled")),
        ("enabled", keys.get("enabled")),
    ):
        if key is None or key not in entry:
            continue
        known.add(key)
        value = entry[key]
        if field == "cwd":
            if isinstance(value, str):
                fields["cwd"] = value
            else:
                _lost(ctx, name, "cwd", f"{key}: not a string")
        elif isinstance(value, bool):
            fields["disabled"] = value if field == "disabled" else not value
        else:
            _lost(ctx, name, "disabled", f"{key}: not true or false")
    for key, every in ((keys.get("auto_approve"), False), (keys.get("auto_approve.all"), True)):
        if key is None or key not in entry:
            continue
        known.add(key)
        value = entry[key]
        if every and isinstance(value, bool):
            fields["auto_approve"] = ("*",) if value else ()
        elif not every and isinstance(value, list) and all(isinstance(v, str) for v in value):
            fields["auto_approve"] = tuple(value)
        else:
            _lost(ctx, name, "auto_approve", f"{key}: not what tackroom reads")
    for key in entry:
        if key not in known:
            _lost(ctx, name, str(key), f"tackroom has no word for {str(key)[:60]!r}")
    return McpServer(name, **fields)


def _lost(ctx: Context | None, name: str, field: str, why: str) -> None:
    if ctx is not None:
        ctx.drop("MCP server", name, why, field)


def _string(value: Any, key: str) -> str:
    if not isinstance(value, str) or not value:
        raise BadEntry(f"{key}: not a string")
    return value


def _strings(value: Any, key: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise BadEntry(f"{key}: not a list of strings")
    return value


def _mapping(value: Any, key: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise BadEntry(f"{key}: not an object of strings")
    return {str(k): v for k, v in value.items()}


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
        return mcp_entry(server, ctx)

    def written(self, entry: Any) -> Any:
        """A server's entry as read, before it is parsed (a harness that writes defaults drops them)."""
        return entry

    def parse(self, ctx: Context) -> list[McpServer]:
        servers = read_json(ctx.path).get(self.key, {})
        if not isinstance(servers, dict):
            ctx.drop("MCP server", self.key, f"{ctx.path}: {self.key} is not an object of servers")
            return []
        found = []
        for name, entry in sorted(servers.items()):
            try:
                found.append(mcp_from_entry(str(name), self.written(entry), ctx))
            except BadEntry as exc:
                ctx.drop("MCP server", str(name)[:80], f"{ctx.path}: {self.key}.{str(name)[:80]}: {exc}")
        return found


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


def manifest_hooks(ctx: Context, events: Mapping[str, Any]) -> Iterator[tuple[str, Hook, dict[str, Any]]]:
    """Import: each hook of a generated plugin's manifest (``{event: [{matcher, hooks: [{command,
    ...}]}]}``, as opencode's and gptme's plugins carry it), with its event and its handler table."""
    for event, groups in events.items():
        for group in dicts(groups):
            matcher = group.get("matcher")
            for handler in dicts(group.get("hooks")):
                command = handler.get("command")
                hook = parse_hook(ctx, event, matcher, command) if isinstance(command, str) else None
                if hook is not None:
                    yield event, hook, handler


def dicts(value: Any) -> list[dict[str, Any]]:
    """The tables of a list read from a file (anything else in it, or a non-list, is passed over)."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def named_apart(found: Sequence[Hook], unnamed: Sequence[Hook]) -> list[Hook]:
    """Import: ``found`` (hooks read under names of their own) and each of ``unnamed`` under its name
    made unique among them (``name-2``, ``name-3``, ...), sorted by name."""
    taken = {h.name for h in found}
    named = list(found)
    for hook in unnamed:
        name, k = hook.name, 1
        while name in taken:
            k += 1
            name = f"{hook.name}-{k}"
        taken.add(name)
        named.append(hook if name == hook.name else replace(hook, name=name))
    return sorted(named, key=lambda h: h.name)


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


def native_outputs(ctx: Context, items: Sequence[Native]) -> list[Output]:
    """Native passthrough written back: its settings keys merged into the settings file at
    ``ctx.path``, its files beside that file, as the harness wrote them."""
    out = []
    for native in items:
        if native.settings:
            out.append(Output(ctx.path, data=dict(native.settings), format="json", merge=True))
        out += [Output(ctx.path.parent / rel, content) for rel, content in native.files]
    return out


ENGINES: list[Engine] = [McpJson()]
