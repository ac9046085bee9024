"""Engine ``droid-hooks``: droid's own ``hooks.json``, Claude Code's hooks object as the whole file.

::

    {"PreToolUse": [{"matcher": "Execute", "hooks": [{"type": "command", "command": "..."}]}]}

droid (0.215.0) reads a ``hooks.json`` beside each ``settings.json`` (``~/.factory``, a
project's ``.factory``, the older ``.factory/hooks/hooks.json``), keyed by event name with no
``hooks`` wrapper, and merges it over the settings' ``hooks`` key event by event. Its groups
are Claude Code's, so this is ``claude-settings`` at the file's top level: the same
translation, and an import that reads every hook the user wrote. The same object may hold two
switches, ``hooksDisabled`` and ``showHookOutput``, which are no hooks: each is dropped by name.
"""

from __future__ import annotations

from collections.abc import Sequence

from tackroom.families.claude_code.engines import ClaudeSettings, hook_entry, parse_hooks
from tackroom.profile.engines.base import Context, Engine, Kind, Output
from tackroom.profile.engines.settings import hook_groups, read_json
from tackroom.profile.model import Hook

SWITCHES = ("hooksDisabled", "showHookOutput")
"""Keys of droid's hooks object that are settings, not events."""


class DroidHooks(ClaudeSettings):
    name = "droid-hooks"
    kinds: frozenset[Kind] = frozenset({"hooks"})

    def render(self, ctx: Context, items: Sequence[Hook]) -> list[Output]:
        events = hook_groups(ctx, items, entry=hook_entry)
        return [Output(ctx.path, data=events, format="json", merge=True)] if events else []

    def parse(self, ctx: Context) -> list[Hook]:
        table = read_json(ctx.path)
        for key in SWITCHES:
            if key in table:
                value = table.pop(key)
                ctx.drop("hook", key, f"{ctx.path}: {key} = {str(value)[:20]} is a switch, not a hook")
        return parse_hooks(ctx, table) if table else []


ENGINES: list[Engine] = [DroidHooks()]
