"""Engine ``kimi-hooks``: hooks in Kimi CLI's ``config.toml`` (``$KIMI_SHARE_DIR``, ``~/.kimi``).

Kimi CLI 1.51.0 keeps its hooks as a flat list of tables at the top of its config (``HookDef``)::

    [[hooks]]
    event = "PreToolUse"
    matcher = "^(?:Shell)$"
    command = "./guard.sh"
    timeout = 10

One entry is one command; ``matcher`` is a regular expression ``re.search``-ed against the tool
name (or the session start's source, ``startup``/``resume``), and an empty or absent one matches
everything. The hooks are translated with the adapter's maps as for Claude's settings (event names,
the inject/refuse templates, the ``# tackroom:hook <name>`` marker). What differs, and why this is
an engine of its own:

- a tool matcher is written anchored, ``^(?:Shell|ReadFile)$``: kimi searches, so a bare name would
  match every tool whose name holds it. A harness's own pattern (``kimi:Read.*``) is kimi's matcher
  text as kimi reads it, written as it is, and so only alone;
- ``timeout`` is whole seconds from 1 to 600: anything else would fail the whole config (kimi then
  does not start), so such a timeout is dropped by name and kimi's default (30 s) applies;
- the list is one top-level value of a file the harness shares with its model settings, so it is
  merged in as a key: a ``config.toml`` already holding hooks tackroom did not write stops the
  render, naming them (they are imported instead).

Import reads every entry, the user's too: one with an event no neutral moment maps, a matcher no
neutral hook can say, or a shape kimi would refuse is dropped by name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tackroom._toml import tomllib
from tackroom.errors import ConfigError, Problem
from tackroom.families.claude_code.engines import TOOL_MOMENTS, source_matcher
from tackroom.families.kimi.agents import KimiAgents
from tackroom.profile.engines.base import Context, Engine, Kind, Output
from tackroom.profile.engines.settings import HOOK_MARK, hook_command, named_apart, parse_hook
from tackroom.profile.model import Hook
from tackroom.profile.tools import BadReference, parse_tool

KEY = "hooks"
"""The top-level key of kimi's config that holds the hook list."""
TIMEOUT_RANGE = (1, 600)
"""HookDef.timeout: whole seconds, ``ge=1, le=600``."""
_ANCHORED = re.compile(r"\^\(\?:(.*)\)\$", re.DOTALL)
HOOK_EVENTS = frozenset(
    {
        *("PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit", "Stop", "StopFailure"),
        *("SessionStart", "SessionEnd", "SubagentStart", "SubagentStop", "PreCompact", "PostCompact"),
        "Notification",
    }
)
"""HookDef.event (1.51.0's HookEventType): any other value fails the whole config."""


class KimiHooks(Engine):
    """Hooks as ``[[hooks]]`` entries of Kimi CLI's config.toml."""

    name = "kimi-hooks"
    kinds: frozenset[Kind] = frozenset({"hooks"})
    sources = True

    def render(self, ctx: Context, items: Sequence[Hook]) -> list[Output]:
        entries = [e for e in (_entry(ctx, hook) for hook in items) if e is not None]
        return [Output(ctx.path, data={KEY: entries}, format="toml", merge=True)] if entries else []

    def parse(self, ctx: Context) -> list[Hook]:
        data = read_toml(ctx.path)
        if KEY not in data:
            return []
        entries = data[KEY]
        if not isinstance(entries, list):
            ctx.drop("hook", KEY, f"{ctx.path}: '{KEY}' is not a list of [[hooks]] tables")
            return []
        return _parse(ctx, entries)


def read_toml(path: Path) -> dict[str, Any]:
    """kimi's config as kimi reads it: missing, ``{}``; not UTF-8 or not TOML, a :class:`ConfigError`
    naming the file."""
    if not path.is_file():
        return {}
    raw = path.read_bytes()
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError([Problem(str(path), "", "not UTF-8", line)]) from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([Problem(str(path), "", f"not TOML: {exc}")]) from exc


# --- render ------------------------------------------------------------------------------------


def _entry(ctx: Context, hook: Hook) -> dict[str, Any] | None:
    """One ``[[hooks]]`` table for ``hook``, or None after dropping it by name."""
    events: dict[str, str] = getattr(ctx.capability, "events", {})
    event = events.get(hook.moment)
    if event is None:
        ctx.drop("hook", hook.name, f"{hook.moment} unsupported")
        return None
    matcher: str | None = None
    if hook.matcher:
        if hook.moment not in TOOL_MOMENTS:
            ctx.drop("hook", hook.name, f"a tool matcher at {hook.moment}, which is not a tool moment")
            return None
        matcher = _tool_matcher(ctx, hook)
        if matcher is None:
            return None
    if hook.source:
        matcher = source_matcher(ctx, hook)
        if matcher is None:
            return None
    command = hook_command(ctx, hook, event)
    if command is None:
        return None
    entry: dict[str, Any] = {"event": event, "command": command}
    if matcher:
        entry["matcher"] = matcher
    seconds = _timeout(ctx, hook)
    if seconds is not None:
        entry["timeout"] = seconds
    return entry


def _tool_matcher(ctx: Context, hook: Hook) -> str | None:
    """The anchored alternation of the tools ``hook`` names, or a kimi pattern alone; None after a drop."""
    own = [ref for ref in hook.matcher if _own_pattern(ctx, ref) is not None]
    if own:
        if len(hook.matcher) > 1:
            ctx.drop(
                "hook",
                hook.name,
                f"{own[0]} is kimi's own matcher text: it cannot share a matcher with others",
            )
            return None
        return _own_pattern(ctx, own[0])
    names = []
    for ref in hook.matcher:
        name = _tool_name(ctx, ref)
        if name is None:
            ctx.drop("hook", hook.name, f"no tool {ref} in hook matchers here")
            return None
        names.append(re.escape(name))
    return f"^(?:{'|'.join(names)})$"


def _own_pattern(ctx: Context, ref: str) -> str | None:
    try:
        parsed = parse_tool(ref)
    except BadReference:
        return None
    return parsed.tool if parsed.harness == ctx.adapter.harness else None


def _tool_name(ctx: Context, ref: str) -> str | None:
    """Kimi's name for a neutral tool or one MCP tool (a whole server has no name of its own here)."""
    try:
        parsed = parse_tool(ref)
    except BadReference:
        return None
    if parsed.harness is not None or parsed.pattern is not None:
        return None
    if parsed.tool == "mcp":
        return ctx.native_tool(ref) if parsed.mcp_tool is not None else None
    return ctx.hook_tool_name(parsed.tool)


def _timeout(ctx: Context, hook: Hook) -> int | None:
    if hook.timeout is None:
        return None
    low, high = TIMEOUT_RANGE
    if float(hook.timeout).is_integer() and low <= hook.timeout <= high:
        return int(hook.timeout)
    ctx.drop("hook", hook.name, f"kimi's hook timeout is whole seconds from {low} to {high}", "timeout")
    return None


# --- import ------------------------------------------------------------------------------------


def _parse(ctx: Context, entries: list[Any]) -> list[Hook]:
    events: dict[str, str] = getattr(ctx.capability, "events", {})
    moments = {e: m for m, e in events.items()}
    found: list[Hook] = []
    unnamed: list[Hook] = []
    counts: dict[str, int] = {}
    for n, entry in enumerate(entries, start=1):
        event = entry.get("event") if isinstance(entry, dict) else None
        base = _kebab(event) if isinstance(event, str) else "hooks"
        counts[base] = counts.get(base, 0) + 1
        label = f"{base}-{counts[base]}"
        hook = _hook(ctx, n, entry, moments, label)
        if hook is not None:
            (found if hook.name != label or _marked(entry) else unnamed).append(hook)
    return named_apart(found, unnamed)


def _hook(ctx: Context, n: int, entry: Any, moments: dict[str, str], label: str) -> Hook | None:
    where = f"{ctx.path}: [[hooks]] #{n}"
    name = _marked_name(entry) or label
    why = _refused(entry)
    if why is not None:
        ctx.drop("hook", name, f"{where}: {why}; kimi would not start with it")
        return None
    event, command = entry["event"], entry["command"]
    moment = moments.get(event)
    if moment is None:
        ctx.drop("hook", name, f"{where}: event {event} has no neutral moment here")
        return None
    if not command.strip():
        ctx.drop("hook", name, f"{where}: an empty command")
        return None
    matcher = entry.get("matcher", "")
    refs: tuple[str, ...] = ()
    source: tuple[str, ...] = ()
    if matcher and moment in TOOL_MOMENTS:
        refs = _refs(ctx, matcher)
    elif matcher and moment == "session-start":
        starts = _starts(ctx, matcher)
        if starts is None:
            ctx.drop("hook", name, f"{where}: matcher {matcher!r} selects starts no neutral hook names")
            return None
        source = starts
    elif matcher:
        ctx.drop("hook", name, f"{where}: matcher {matcher!r} selects what no neutral hook can")
        return None
    timeout = float(entry["timeout"]) if "timeout" in entry else None
    if _marked(entry):
        ours = parse_hook(ctx, event, None, command)
        if ours is not None:
            return Hook(ours.name, moment, ours.action, ours.command, ours.text, refs, (), timeout, source)
    return Hook(name, moment, "command", command=command, matcher=refs, timeout=timeout, source=source)


def _refused(entry: Any) -> str | None:
    """Why kimi's HookDef would reject ``entry`` (and with it the whole config), or None."""
    if not isinstance(entry, dict):
        return "not a table"
    if entry.get("event") not in HOOK_EVENTS:
        return f"event {entry.get('event')!r} is none of kimi's"
    if not isinstance(entry.get("command"), str):
        return "no command"
    if not isinstance(entry.get("matcher", ""), str):
        return "the matcher is not a string"
    timeout = entry.get("timeout", TIMEOUT_RANGE[0])
    low, high = TIMEOUT_RANGE
    if isinstance(timeout, bool) or not isinstance(timeout, int) or not low <= timeout <= high:
        return f"timeout {timeout!r} is not whole seconds from {low} to {high}"
    return None


def _marked(entry: Any) -> bool:
    return _marked_name(entry) is not None


def _marked_name(entry: Any) -> str | None:
    command = entry.get("command") if isinstance(entry, dict) else None
    if isinstance(command, str) and HOOK_MARK in command:
        return command.rpartition(HOOK_MARK)[2]
    return None


def _refs(ctx: Context, matcher: str) -> tuple[str, ...]:
    """The tool references of a tool matcher: neutral (or MCP) tools for an anchored list of names
    each of them maps; anything else is kimi's own matcher text, whole (it searches)."""
    names = _literal_names(matcher)
    if names is not None:
        refs = [ctx.hook_neutral_tool(name) or ctx.tool_ref(name) for name in names]
        if all(not r.startswith(f"{ctx.adapter.harness}:") for r in refs):
            return tuple(refs)
    return (f"{ctx.adapter.harness}:{matcher}",)


def _literal_names(matcher: str) -> list[str] | None:
    """The names of an anchored alternation of literal names (``^(?:A|B)$``), else None."""
    anchored = _ANCHORED.fullmatch(matcher)
    if anchored is None:
        return None
    names = []
    for part in anchored.group(1).split("|"):
        name = part.replace("\\", "")
        if not name or re.escape(name) != part:
            return None
        names.append(name)
    return names


def _starts(ctx: Context, matcher: str) -> tuple[str, ...] | None:
    """The session starts a SessionStart matcher selects (empty: every one), or None for others."""
    sources: dict[str, str] = getattr(ctx.capability, "sources", {})
    spelled = {v: k for k, v in sources.items()}
    words = matcher.split("|")
    found = [spelled.get(word) for word in words]
    if None in found or len(set(words)) != len(words):
        return None
    return () if set(found) == set(sources) else tuple(str(s) for s in found)


def _kebab(event: str) -> str:
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", event).lower()
    return re.sub(r"[^a-z0-9]+", "-", words).strip("-") or "hook"


ENGINES: list[Engine] = [KimiHooks(), KimiAgents()]
