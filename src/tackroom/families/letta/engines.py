"""Engine ``letta-settings``: hooks in Letta Code's ``settings.json`` (``~/.letta``, ``.letta/``).

Letta Code 0.25.9 keeps hooks as Claude Code does, event -> groups
``{matcher, hooks: [{type, command, timeout}]}`` (a matcher is a regular expression over the
tool name, ``*`` or none for every tool), so this engine translates them with the same helpers
as ``claude-settings`` (the adapter's event map, matchers and inject/refuse templates; the
``# tackroom:hook <name>`` marker). Two things differ, and are why it is an engine of its own:

- a handler's ``timeout`` is in **milliseconds** (``hook.timeout ?? 60000``; "Hook timed out
  after Nms"), where the profile's, and Claude's, is in seconds;
- the ``hooks`` object may hold ``disabled``, a switch over every hook (``true`` in the user's
  settings keeps all hooks from running, and in a project's its own and the others'), not an
  event: a file whose hooks are disabled runs none of them, so on import they are dropped by
  name (imported, they would run wherever they are rendered), and the switch itself is named.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from tackroom.families.claude_code.engines import hook_entry, parse_hooks
from tackroom.profile.engines.base import Context, Engine, Kind, Output
from tackroom.profile.engines.settings import hook_groups, read_json
from tackroom.profile.model import Hook

DISABLED = "disabled"
"""The key of Letta's ``hooks`` object that switches every hook off (or, in the user's file, on)."""
MS = 1000


class LettaSettings(Engine):
    """Hooks in Letta Code's settings: Claude Code's shape, timeouts in milliseconds."""

    name = "letta-settings"
    kinds: frozenset[Kind] = frozenset({"hooks"})

    def render(self, ctx: Context, items: Sequence[Hook]) -> list[Output]:
        events = hook_groups(ctx, items, entry=_entry)
        return [Output(ctx.path, data={"hooks": events}, format="json", merge=True)] if events else []

    def parse(self, ctx: Context) -> list[Hook]:
        table = read_json(ctx.path).get("hooks")
        if not isinstance(table, dict) or DISABLED not in table:
            return parse_hooks(ctx, _in_seconds(table))
        table = dict(table)
        disabled = table.pop(DISABLED)
        hooks = parse_hooks(ctx, _in_seconds(table))
        if disabled is not True:
            why = "a switch over every hook, not a hook" if disabled is False else "not a boolean"
            ctx.drop(
                "native setting", f"hooks.{DISABLED}", f"{ctx.path}: hooks.{DISABLED} = {disabled!r}: {why}"
            )
            return hooks
        ctx.drop("native setting", f"hooks.{DISABLED}", f"{ctx.path}: hooks.{DISABLED} = true: not a hook")
        for hook in hooks:
            ctx.drop(
                "hook", hook.name, f"{ctx.path}: hooks.{DISABLED} is true there, so letta runs none of them"
            )
        return []


def _entry(ctx: Context, hook: Hook) -> tuple[str, dict[str, Any]] | None:
    """Claude's settings group for ``hook``, its timeout in milliseconds (or dropped by name)."""
    found = hook_entry(ctx, replace(hook, timeout=None))
    if found is None or hook.timeout is None:
        return found
    ms = round(hook.timeout * MS)
    if ms / MS != hook.timeout or ms <= 0:
        ctx.drop(
            "hook", hook.name, "letta's hook timeout is a whole, positive number of milliseconds", "timeout"
        )
        return found
    event, group = found
    group["hooks"][0]["timeout"] = ms
    return event, group


def _in_seconds(table: Any) -> Any:
    """``table`` with each handler's timeout, in milliseconds there, in seconds as Claude's parser reads it.

    Only what is well formed is converted: anything else is left for that parser to drop by name.
    """
    if not isinstance(table, dict):
        return table
    return {event: _groups(groups) for event, groups in table.items()}


def _groups(groups: Any) -> Any:
    if isinstance(groups, dict):
        return _group(groups)
    if isinstance(groups, list):
        return [_group(g) for g in groups]
    return groups


def _group(group: Any) -> Any:
    if not isinstance(group, dict) or "hooks" not in group:
        return group
    handlers = group["hooks"]
    if isinstance(handlers, dict):
        return {**group, "hooks": _handler(handlers)}
    if isinstance(handlers, list):
        return {**group, "hooks": [_handler(h) for h in handlers]}
    return group


def _handler(handler: Any) -> Any:
    timeout = handler.get("timeout") if isinstance(handler, dict) else None
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout < 0:
        return handler
    return {**handler, "timeout": timeout / MS}


ENGINES: list[Engine] = [LettaSettings()]
