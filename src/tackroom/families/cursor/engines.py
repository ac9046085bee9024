"""Engines ``cursor-permissions`` and ``cursor-settings`` (the Cursor CLI config, ``.cursor/cli.json``)
and ``cursor-hooks`` (``.cursor/hooks.json``).

UNVERIFIED (no installable binary): from cursor.com/docs/cli/reference/permissions.
``permissions`` is ``{"allow": [token, ...], "deny": [token, ...]}``, deny
winning over allow, with no ask. The tokens and their neutral references:

- ``Shell(git)``: a command's first word, so ``shell("git:*")`` (a neutral prefix
  of one word); ``Shell(*)`` is every command (``shell``).
- ``Read(src/**)`` is ``read_file("src/**")``; ``Write(src/**)`` covers writing
  and editing, so it is said only for a ``write_file`` rule with its
  ``edit_file`` twin, and reads back as both. ``Read(**)`` / ``Write(**)`` are the bare tools.
- ``WebFetch(docs.example.com)`` is ``web_fetch("domain:docs.example.com")``.
- ``Mcp(server:tool)`` is ``mcp("server/tool")``; ``Mcp(server:*)`` is ``mcp("server")``.

A token of another shape stays native passthrough; a rule cursor cannot say
(any ask, a multi-word shell prefix) is dropped by name. Every other key of
the file (``version``, ``editor``, ``model``, ...) is kept by ``cursor-settings``.

Hooks (cursor.com/docs/agent/hooks; UNVERIFIED as above) are one flat list per event,
``{"version": 1, "hooks": {"stop": [{"command": "...", "timeout": 30}]}}``. The
adapter's ``events`` table names the generic events (``preToolUse``, ``stop``, ...);
a ``preToolUse`` matcher is a pattern over Cursor's tool names, which no adapter
table maps, so it stays Cursor's own (``cursor:Shell``). Four events are one
tool's, and are the neutral tool moments on that tool (:data:`TOOL_EVENTS`):
``beforeShellExecution`` is ``before-tool`` on ``shell``, ``afterFileEdit`` is
``after-tool`` on ``write_file`` and ``edit_file`` together (it fires for both).
What has no neutral form is dropped by name: the MCP and Tab events, a ``prompt``
hook, a fail-closed hook (imported without it, it would fail open).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from tackroom.profile.engines.base import Context, Engine, Kind, Output
from tackroom.profile.engines.settings import HOOK_MARK, hook_command, native_outputs, read_json
from tackroom.profile.model import Hook, Native, Permissions
from tackroom.profile.tools import BadReference, parse_tool

KEY = "permissions"
VERDICTS = ("allow", "deny")
_TOKEN = re.compile(r"^(Shell|Read|Write|WebFetch|Mcp)\((.+)\)$")
_EVERYTHING = {"Shell": "*", "Read": "**", "Write": "**"}
_EDITS = ("write_file", "edit_file")


def token_for(ctx: Context, verdict: str, ref: str, rules: tuple[str, ...]) -> str | None:
    """Cursor's token for one rule; None after dropping it by name (or for an ``edit_file`` twin)."""
    name = f"{verdict} {ref}"
    try:
        parsed = parse_tool(ref)
    except BadReference as exc:
        ctx.drop("permission rule", name, str(exc))
        return None
    pattern = parsed.pattern
    if parsed.tool == "shell" and parsed.harness is None:
        if pattern is None:
            return "Shell(*)"
        if pattern.endswith(":*") and " " not in pattern[:-2] and pattern[:-2]:
            return f"Shell({pattern[:-2]})"
    elif parsed.tool == "read_file" and parsed.harness is None:
        return f"Read({pattern or '**'})"
    elif parsed.tool in _EDITS and parsed.harness is None:
        other = _EDITS[1 - _EDITS.index(parsed.tool)]
        if ref.replace(parsed.tool, other, 1) not in rules:
            ctx.drop("permission rule", name, f"cursor's Write covers {other} too")
            return None
        return f"Write({pattern or '**'})" if parsed.tool == "write_file" else None
    elif parsed.tool == "web_fetch" and pattern is not None and pattern.startswith("domain:"):
        return f"WebFetch({pattern.removeprefix('domain:')})"
    elif parsed.tool == "mcp" and parsed.server:
        return f"Mcp({parsed.server}:{parsed.mcp_tool or '*'})"
    elif parsed.harness == ctx.adapter.harness:
        return parsed.tool
    ctx.drop("permission rule", name, "no cursor permission token says it")
    return None


def refs_for(token: str) -> list[str] | None:
    """The neutral references a token says; None for one kept native."""
    found = _TOKEN.match(token)
    if found is None:
        return None
    kind, inner = found.groups()
    if kind in _EVERYTHING and inner == _EVERYTHING[kind]:
        return {"Shell": ["shell"], "Read": ["read_file"], "Write": list(_EDITS)}[kind]
    quoted = '"' + inner.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if kind == "Shell":
        return [f'shell("{inner}:*")'] if re.fullmatch(r"[\w.+-]+", inner) else None
    if kind == "Read":
        return [f"read_file({quoted})"]
    if kind == "Write":
        return [f"{tool}({quoted})" for tool in _EDITS]
    if kind == "WebFetch":
        return [f'web_fetch("domain:{inner}")'] if re.fullmatch(r"[\w.*-]+", inner) else None
    server, _, tool = inner.partition(":")
    if not re.fullmatch(r"[\w.@-]+", server) or not re.fullmatch(r"[\w.*-]+", tool or "*"):
        return None
    return [f'mcp("{server}")' if tool in ("", "*") else f'mcp("{server}/{tool}")']


class CursorPermissions(Engine):
    name = "cursor-permissions"
    kinds: frozenset[Kind] = frozenset({"permissions"})

    def render(self, ctx: Context, items: Sequence[Permissions]) -> list[Output]:
        lists: dict[str, list[str]] = {}
        for permissions in items:
            for ref in permissions.ask:
                ctx.drop("permission rule", f"ask {ref}", "cursor has allow and deny, no ask")
            for verdict in VERDICTS:
                rules = getattr(permissions, verdict)
                for ref in rules:
                    token = token_for(ctx, verdict, ref, rules)
                    if token is not None:
                        lists.setdefault(verdict, []).append(token)
        return [Output(ctx.path, data={KEY: lists}, format="json", merge=True)] if lists else []

    def parse(self, ctx: Context) -> list[Permissions]:
        table = read_json(ctx.path).get(KEY)
        if table is None:
            return []
        if not isinstance(table, dict):
            ctx.keep_setting("permission rule", KEY, table)
            return []
        found: dict[str, list[str]] = {v: [] for v in VERDICTS}
        kept: dict[str, Any] = {k: v for k, v in table.items() if k not in VERDICTS}
        for verdict in VERDICTS:
            tokens = table.get(verdict, [])
            if not isinstance(tokens, list):
                kept[verdict] = tokens
                continue
            for token in tokens:
                refs = refs_for(token) if isinstance(token, str) else None
                if refs is None:
                    kept.setdefault(verdict, []).append(token)
                else:
                    found[verdict] += [r for r in refs if r not in found[verdict]]
        if kept:
            ctx.keep_setting("permission rule", KEY, kept)
        permissions = Permissions(allow=tuple(found["allow"]), deny=tuple(found["deny"]))
        return [permissions] if permissions else []


class CursorSettings(Engine):
    """Every key of the CLI config but ``permissions``, kept and merged back as written."""

    name = "cursor-settings"
    kinds: frozenset[Kind] = frozenset({"settings"})

    def render(self, ctx: Context, items: Sequence[Native]) -> list[Output]:
        return native_outputs(ctx, items)

    def parse(self, ctx: Context) -> list[Native]:
        for key, value in read_json(ctx.path).items():
            if key != KEY:
                ctx.keep_setting("native setting", key, value)
        return []


# --- hooks -------------------------------------------------------------------------------------

HOOKS_VERSION = 1
TOOL_EVENTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "beforeShellExecution": ("before-tool", ("shell",)),
    "afterShellExecution": ("after-tool", ("shell",)),
    "beforeReadFile": ("before-tool", ("read_file",)),
    "afterFileEdit": ("after-tool", ("edit_file", "write_file")),
}
"""Cursor's events of one tool kind: the neutral moment and the tools (sorted) they stand for."""
_ENTRY_KEYS = {"command", "type", "matcher", "timeout", "failClosed"}
_TOOL_MOMENTS = ("before-tool", "after-tool", "after-tool-failure")


class CursorHooks(Engine):
    """Cursor's ``hooks.json``: merged into the file, beside the user's own entries."""

    name = "cursor-hooks"
    kinds: frozenset[Kind] = frozenset({"hooks"})
    tool_events = True

    def render(self, ctx: Context, items: Sequence[Hook]) -> list[Output]:
        events: dict[str, list[dict[str, Any]]] = {}
        for hook in items:
            found = _hook_entry(ctx, hook)
            if found is not None:
                events.setdefault(found[0], []).append(found[1])
        if not events:
            return []
        return [Output(ctx.path, data={"version": HOOKS_VERSION, "hooks": events}, format="json", merge=True)]

    def parse(self, ctx: Context) -> list[Hook]:
        table = read_json(ctx.path).get("hooks")
        if table is None:
            return []
        if not isinstance(table, dict):
            ctx.drop("hook", "hooks", f"{ctx.path}: 'hooks' is not an object of events")
            return []
        found: list[Hook] = []
        for event, entries in table.items():
            listed = entries if isinstance(entries, list) else [entries]
            for n, entry in enumerate(listed, start=1):
                hook = _parse_entry(ctx, str(event), entry, f"{_kebab(str(event))}-{n}")
                if hook is not None:
                    found.append(hook)
        return _named_once(sorted(found, key=lambda h: h.name))


def _hook_entry(ctx: Context, hook: Hook) -> tuple[str, dict[str, Any]] | None:
    """(event, entry) for one hook, or None after dropping it by name."""
    tools = tuple(sorted(hook.matcher))
    event = next((e for e, (m, t) in TOOL_EVENTS.items() if m == hook.moment and t == tools), None)
    matcher: str | None = None
    if event is None:
        event = getattr(ctx.capability, "events", {}).get(hook.moment)
        if event is None:
            ctx.drop("hook", hook.name, f"{hook.moment} unsupported")
            return None
        if hook.matcher:
            names = [_own_name(ctx, ref) for ref in hook.matcher]
            if hook.moment not in _TOOL_MOMENTS or None in names:
                ctx.drop(
                    "hook",
                    hook.name,
                    f"Cursor's hooks name tools its own way ({', '.join(hook.matcher)}: no event or name "
                    f"here; {', '.join(TOOL_EVENTS)} each stand for one tool kind)",
                )
                return None
            matcher = "|".join(str(n) for n in names)
    command = hook_command(ctx, hook, event)
    if command is None:
        return None
    entry: dict[str, Any] = {"command": command}
    if matcher is not None:
        entry["matcher"] = matcher
    if hook.timeout is not None:
        entry["timeout"] = int(hook.timeout) if float(hook.timeout).is_integer() else hook.timeout
    return event, entry


def _own_name(ctx: Context, ref: str) -> str | None:
    """Cursor's own tool name a ``cursor:Name`` reference keeps; None for any other reference."""
    try:
        parsed = parse_tool(ref)
    except BadReference:
        return None
    return parsed.tool if parsed.harness == ctx.adapter.harness else None


def _parse_entry(ctx: Context, event: str, entry: Any, label: str) -> Hook | None:
    """The neutral hook one entry of ``event`` is, or None after dropping it by name ``label``
    (or the name its marker gives, for an entry tackroom wrote)."""
    where = f"{event} in {ctx.path}"
    if not isinstance(entry, dict):
        ctx.drop("hook", label, f"{where}: a hook is an object with a command")
        return None
    command = entry.get("command")
    body, mark, marked = command.rpartition(" " + HOOK_MARK) if isinstance(command, str) else ("", "", "")
    name = marked if mark else label
    moments = {e: m for m, e in getattr(ctx.capability, "events", {}).items()}
    moment, tools = TOOL_EVENTS.get(event, (moments.get(event), ()))
    if moment is None:
        ctx.drop("hook", name, f"{where}: event {event} has no neutral moment here")
        return None
    kind = entry.get("type", "command")
    if kind != "command":
        ctx.drop("hook", name, f"{where}: a {kind!r} hook has no neutral form (only shell commands)")
        return None
    if not isinstance(command, str) or not command.strip():
        ctx.drop("hook", name, f"{where}: a command hook without a command")
        return None
    if entry.get("failClosed") is True:
        ctx.drop("hook", name, f"{where}: failClosed has no neutral form (without it, the hook fails open)")
        return None
    matcher = entry.get("matcher")
    if matcher is not None and not (isinstance(matcher, str) and matcher.strip() in ("", "*")):
        if not isinstance(matcher, str) or moment not in _TOOL_MOMENTS or event in TOOL_EVENTS:
            ctx.drop("hook", name, f"{where}: matcher {matcher!r} selects what no neutral hook can")
            return None
        tools = (f"{ctx.adapter.harness}:{matcher}",)
    timeout = entry.get("timeout")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout < 0
    ):
        ctx.drop("hook", name, f"{where}: timeout {timeout!r} is not a number of seconds", "timeout")
        timeout = None
    for key in sorted(str(k) for k in entry if k not in _ENTRY_KEYS):
        ctx.drop("hook", name, f"{where}: {key[:80]!r} has no neutral form", key[:80])
    return Hook(
        name,
        moment,
        "command",
        command=body if mark else command,
        matcher=tools,
        timeout=float(timeout) if timeout is not None else None,
    )


def _named_once(hooks: list[Hook]) -> list[Hook]:
    """The hooks, a name met twice getting ``-2``, ``-3``, ... (a label and a marker's name may meet)."""
    taken: set[str] = set()
    out = []
    for hook in hooks:
        name, k = hook.name, 1
        while name in taken:
            k += 1
            name = f"{hook.name}-{k}"
        taken.add(name)
        out.append(hook if name == hook.name else replace(hook, name=name))
    return out


def _kebab(event: str) -> str:
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "-", event).lower()  # beforeMCP-
    return re.sub(r"[^a-z0-9]+", "-", words).strip("-") or "hook"


ENGINES: list[Engine] = [CursorPermissions(), CursorSettings(), CursorHooks()]
