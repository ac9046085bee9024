"""Engines ``qwen-permissions`` (``permissions.{allow, ask, deny}`` of Qwen Code's settings) and
``qwen-settings`` (its other keys: named on import, never written back).

Qwen reads Claude Code's shape (0.15.10 and 0.24.4: rules are evaluated deny >
ask > allow) with its own tool names and a few Claude-compatible aliases.
Two differences matter:

- A command pattern is a glob over the command: ``git push *`` matches
  ``git push`` and ``git push origin``; Claude's prefix ``git push:*`` means
  the same, so a neutral ``shell("git push:*")`` is written ``git push *`` and
  read back as it was.
- ``Read`` and ``Edit`` are categories in qwen (``Read`` also covers grep,
  glob and list_directory), so they are kept as qwen's own names on import,
  never narrowed to one neutral tool. File-path and domain patterns are not
  written (not proven here): such a rule is dropped by name.
"""

from __future__ import annotations

from collections.abc import Sequence

from tackroom.families.claude_code.engines import _RULE, ClaudePermissions
from tackroom.profile.engines.base import Context, Engine, Kind, Output
from tackroom.profile.engines.settings import read_json
from tackroom.profile.model import Native
from tackroom.profile.tools import BadReference, parse_tool

SHELL_ALIASES = ("Bash", "Shell", "ShellTool")
"""Qwen's other names for its shell tool (run_shell_command)."""


class QwenPermissions(ClaudePermissions):
    name = "qwen-permissions"
    kinds: frozenset[Kind] = frozenset({"permissions"})

    def rule(self, ctx: Context, ref: str) -> str | None:
        try:
            parsed = parse_tool(ref)
        except BadReference:
            return None
        if parsed.harness is not None:
            return parsed.tool if parsed.harness == ctx.adapter.harness else None
        if parsed.tool == "mcp":
            return None
        name = ctx.tool_name(parsed.tool)
        if name is None or parsed.pattern is None:
            return name
        if (
            parsed.tool != "shell"
            or not parsed.pattern.strip()
            or "(" in parsed.pattern
            or ")" in parsed.pattern
        ):
            return None
        pattern = parsed.pattern
        if pattern.endswith(":*") and "*" not in pattern[:-2]:
            pattern = pattern[:-2] + " *"
        return f"{name}({pattern})"

    def ref(self, ctx: Context, rule: str) -> str:
        text = rule.strip()
        own = f"{ctx.adapter.harness}:{text}"
        found = _RULE.match(text)
        if found is None:
            return own
        name, pattern = found.groups()
        neutral = "shell" if name in SHELL_ALIASES else ctx.neutral_tool(name)
        if neutral is None:
            return own
        if pattern is None:
            return neutral
        if neutral != "shell" or not pattern.strip():
            return own
        if pattern.endswith(" *") and "*" not in pattern[:-2]:
            pattern = pattern[:-2] + ":*"
        ref = f"shell({_quote(pattern)})"
        try:
            parse_tool(ref)
        except BadReference:
            return own
        return ref


def _quote(text: str) -> str:
    import json

    return json.dumps(text, ensure_ascii=False)


READ_BY = {"hooks": "hooks", "permissions": "permissions", "env": "env", "mcpServers": "mcp"}
"""Top-level settings keys another capability reads (when it reads this same file)."""
NOT_KEPT = (
    "{harness}'s own settings key: not imported, and not written back (a run writes its model "
    "endpoint and sign-in into this file, which a kept key could point elsewhere)"
)


class QwenSettings(Engine):
    """Every other key of qwen's ``settings.json``: named on import, never written back (why:
    :data:`NOT_KEPT`), so none is lost unsaid. Droid's settings.json, where a run writes its
    custom model, is named the same way."""

    name = "qwen-settings"
    kinds: frozenset[Kind] = frozenset({"settings"})

    def render(self, ctx: Context, items: Sequence[Native]) -> list[Output]:
        for native in items:
            for key, _ in native.settings:
                ctx.drop("native setting", key, NOT_KEPT.format(harness=ctx.adapter.harness))
            for rel, _ in native.files:
                ctx.drop("native setting", rel, NOT_KEPT.format(harness=ctx.adapter.harness))
        return []

    def parse(self, ctx: Context) -> list[Native]:
        caps = ctx.adapter.spec.capabilities
        place = (ctx.capability.path, ctx.capability.project)
        for key in read_json(ctx.path):
            cap = getattr(caps, READ_BY.get(str(key), ""), None)
            if cap is None or (cap.path, cap.project) != place:
                why = NOT_KEPT.format(harness=ctx.adapter.harness)
                ctx.drop("native setting", str(key)[:80], f"{ctx.path}: {why}")
        return []


ENGINES: list[Engine] = [QwenPermissions(), QwenSettings()]
