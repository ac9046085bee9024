"""Engine ``copilot-hooks``: hooks as one hook file in Copilot's flat format.

::

    {"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": "...", "matcher": "^(?:bash)$"}]}}

The file is tackroom's own (one ``*.json`` in a hooks directory the harness
loads whole), so it is written whole. Hooks are translated with the adapter's
maps as for Claude's settings (:func:`~tackroom.profile.engines.settings.hook_entry`):
event names, the inject/refuse templates, and hook-side tool names. Each
entry's ``bash`` ends with the hook's name marker, so it parses back.

A tool hook's matcher is a regular expression over the tool name; tackroom
writes its tool list anchored, ``^(?:a|b)$``, so a name never matches as a
part of another. An entry without one applies to every tool.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from tackroom.profile.engines.base import Context, Engine, Kind, Output
from tackroom.profile.engines.settings import hook_groups, parse_hook, read_json
from tackroom.profile.model import Hook

VERSION = 1
_ANCHORED = re.compile(r"\^\(\?:(.*)\)\$")


class CopilotHooks(Engine):
    name = "copilot-hooks"
    kinds: frozenset[Kind] = frozenset({"hooks"})

    def render(self, ctx: Context, items: Sequence[Hook]) -> list[Output]:
        hooks = [_whole_seconds(ctx, h) for h in items]
        events = hook_groups(ctx, hooks, shape=lambda hook, group: handler(group) | _timeout(hook))
        data = {"version": VERSION, "hooks": events}
        return [Output(ctx.path, data=data, format="json")] if events else []

    def parse(self, ctx: Context) -> list[Hook]:
        events = read_json(ctx.path).get("hooks", {})
        hooks = []
        for event, handlers in events.items() if isinstance(events, dict) else ():
            for n, item in enumerate(handlers if isinstance(handlers, list) else [handlers], start=1):
                hook = _parse_handler(ctx, event, item)
                if hook is not None:
                    hooks.append(hook)
                else:  # tackroom writes this file whole: an entry it did not write is named, not read
                    ctx.drop("hook", f"{event}-{n}", f"{ctx.path}: an entry tackroom did not write")
        return sorted(hooks, key=lambda h: h.name)


def handler(group: dict[str, Any]) -> dict[str, Any]:
    """A flat Copilot entry from a Claude-style group (one command, an optional matcher)."""
    entry: dict[str, Any] = {"type": "command", "bash": group["hooks"][0]["command"]}
    matcher = group.get("matcher", "*")
    return entry | ({"matcher": f"^(?:{matcher})$"} if matcher != "*" else {})


def _timeout(hook: Hook) -> dict[str, Any]:
    return {"timeoutSec": int(hook.timeout)} if hook.timeout is not None else {}


def _whole_seconds(ctx: Context, hook: Hook) -> Hook:
    """The hook as ``timeoutSec`` can say it: whole seconds, or no timeout after dropping it by name."""
    if hook.timeout is None or float(hook.timeout).is_integer():
        return hook
    ctx.drop("hook", hook.name, "timeoutSec is whole seconds", "timeout")
    return replace(hook, timeout=None)


def _parse_handler(ctx: Context, event: str, item: Any) -> Hook | None:
    if not isinstance(item, dict) or item.get("type") != "command" or not isinstance(item.get("bash"), str):
        return None
    matcher = item.get("matcher")
    if isinstance(matcher, str):
        anchored = _ANCHORED.fullmatch(matcher)
        matcher = anchored.group(1) if anchored else matcher
    hook = parse_hook(ctx, event, matcher if isinstance(matcher, str) else None, item["bash"])
    seconds = item.get("timeoutSec")
    if hook is not None and isinstance(seconds, int) and not isinstance(seconds, bool) and seconds > 0:
        hook = replace(hook, timeout=float(seconds))
    return hook


ENGINES: list[Engine] = [CopilotHooks()]
