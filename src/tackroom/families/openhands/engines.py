"""OpenHands CLI's own files where a generic engine reads only part of what the harness writes.

- ``openhands-mcp``: ``mcp.json`` is fastmcp's ``MCPConfig``, written like ``mcp-json``'s; but
  ``openhands mcp add`` (1.16.0) writes every field of fastmcp's server models, unset ones as
  ``null`` (``"type": null``, ``"cwd": null``, ``"keep_alive": null``...) and
  ``max_sse_event_size`` at its default. Import reads those as absent, so the harness's own file
  imports without a drop for what nobody set.
- ``openhands-hooks``: ``hooks.json`` (``sdk/hooks/config.py``) is Claude Code's hooks shape, and is
  rendered as ``claude-settings`` does (``{"hooks": {"PreToolUse": [...]}}``). OpenHands' documented
  form, and what ``HookConfig.save`` writes, has the events at the top level in snake_case
  (``{"pre_tool_use": [...]}``); import reads all three forms. A file that holds events outside a
  ``hooks`` wrapper is not rendered into: OpenHands reads only the wrapper when there is one, so
  the hooks already there would stop running. A handler's ``timeout`` is a whole number of seconds
  there (a fraction fails the whole file's validation), so a fractional one is dropped by name.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from tackroom.families.claude_code.engines import ClaudeSettings, parse_hooks
from tackroom.profile.engines.base import Context, Engine, Output
from tackroom.profile.engines.settings import McpJson, read_json
from tackroom.profile.model import Hook

SSE_EVENT_DEFAULT = 1024 * 1024
"""fastmcp's default ``max_sse_event_size``, which ``openhands mcp add`` writes for every remote server."""
_DEFAULTS: dict[str, Any] = {"max_sse_event_size": SSE_EVENT_DEFAULT}
_SNAKE_EVENTS = {
    "pre_tool_use": "PreToolUse",
    "post_tool_use": "PostToolUse",
    "user_prompt_submit": "UserPromptSubmit",
    "session_start": "SessionStart",
    "session_end": "SessionEnd",
    "stop": "Stop",
}
"""OpenHands' snake_case event keys (``HOOK_EVENT_FIELDS``) -> the PascalCase names it also reads."""


def _as_set(entry: Any) -> Any:
    """A server entry without the fields the harness wrote only because its model has them."""
    if not isinstance(entry, dict):
        return entry
    return {k: v for k, v in entry.items() if v is not None and _DEFAULTS.get(k, object()) != v}


class OpenHandsMcp(McpJson):
    name = "openhands-mcp"

    def written(self, entry: Any) -> Any:
        return _as_set(entry)  # the nulls and defaults `openhands mcp add` writes for every server


def _events(data: dict[str, Any]) -> tuple[Any, bool]:
    """(event name -> groups, in Claude Code's spelling; whether they were in a ``hooks`` wrapper)."""
    if "hooks" in data:
        table = data["hooks"]
        return table, True
    return {_SNAKE_EVENTS.get(str(k), str(k)): v for k, v in data.items()}, False


class OpenHandsHooks(Engine):
    name = "openhands-hooks"
    kinds = ClaudeSettings.kinds
    sources = False

    def render(self, ctx: Context, items: Sequence[Hook]) -> list[Output]:
        if not items:
            return []
        data = read_json(ctx.path)
        loose = sorted(k for k in data if k != "hooks")
        if loose:
            shown = ", ".join(repr(k) for k in loose[:6])
            why = (
                f"{ctx.path} holds hooks outside a 'hooks' wrapper ({shown}); OpenHands would read only the "
                "wrapper tackroom writes and stop running them (move them under 'hooks' to render here)"
            )
            for hook in items:
                ctx.drop("hook", hook.name, why)
            return []
        whole: list[Hook] = []
        for hook in items:
            if hook.timeout is not None and not float(hook.timeout).is_integer():
                ctx.drop("hook", hook.name, "OpenHands takes a timeout in whole seconds", "timeout")
                hook = dataclasses.replace(hook, timeout=None)
            whole.append(hook)
        return ClaudeSettings().render(ctx, whole)

    def parse(self, ctx: Context) -> list[Hook]:
        data = read_json(ctx.path)
        if not data:
            return []
        return parse_hooks(ctx, _events(data)[0])


ENGINES: list[Engine] = [OpenHandsMcp(), OpenHandsHooks()]
