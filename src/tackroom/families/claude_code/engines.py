"""Engine ``claude-settings``: hooks in Claude Code's settings shape.

The same shape serves Codex's ``hooks.json`` and Qwen Code's settings, whose
adapters name this engine too. The hooks merge into a file shared with other
settings, touching only the groups marked ``# tackroom:hook``.
"""

from __future__ import annotations

from collections.abc import Sequence

from tackroom.profile.engines.base import Context, Engine, Kind, Output
from tackroom.profile.engines.settings import hook_groups, parse_hook, read_json
from tackroom.profile.model import Hook


class ClaudeSettings(Engine):
    """Hooks in Claude Code's settings shape (also Codex's hooks.json and Qwen's settings)."""

    name = "claude-settings"
    kinds: frozenset[Kind] = frozenset({"hooks"})

    def render(self, ctx: Context, items: Sequence[Hook]) -> list[Output]:
        events = hook_groups(ctx, items)
        return [Output(ctx.path, data={"hooks": events}, format="json", merge=True)] if events else []

    def parse(self, ctx: Context) -> list[Hook]:
        hooks = []
        for event, groups in read_json(ctx.path).get("hooks", {}).items():
            for group in groups:
                for handler in group.get("hooks", []):
                    hook = parse_hook(ctx, event, group.get("matcher"), handler.get("command", ""))
                    if hook is not None:
                        hooks.append(hook)
        return sorted(hooks, key=lambda h: h.name)


ENGINES: list[Engine] = [ClaudeSettings()]
