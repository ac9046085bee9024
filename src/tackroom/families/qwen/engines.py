"""Engine ``qwen-permissions``: ``permissions.{allow, ask, deny}`` of Qwen Code's settings.

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

from tackroom.families.claude_code.engines import _RULE, ClaudePermissions
from tackroom.profile.engines.base import Context, Engine, Kind
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


ENGINES: list[Engine] = [QwenPermissions()]
