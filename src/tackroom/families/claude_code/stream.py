"""The Claude Code stream parser and the record shapes its transcript reader shares.

What the lines mean is told in the family's own docstring (:mod:`tackroom.families.claude_code`).
"""

from __future__ import annotations

from typing import Any

from tackroom.families.base import (
    StreamParser,
    int_or_none,
    json_line,
    obj,
    seq,
    str_or_none,
    tolerant,
)
from tackroom.trace.events import (
    AssistantText,
    ErrorEvent,
    Event,
    Finished,
    SessionStarted,
    ToolCall,
    ToolResult,
    Usage,
    UsageReport,
)


def anthropic_usage(data: Any) -> Usage:
    """Usage in the Anthropic Messages shape (no separate reasoning figure)."""
    data = obj(data)
    return Usage(
        input=int_or_none(data.get("input_tokens")),
        output=int_or_none(data.get("output_tokens")),
        cache_read=int_or_none(data.get("cache_read_input_tokens")),
        cache_write=int_or_none(data.get("cache_creation_input_tokens")),
    )


def tool_result_text(content: Any) -> str | None:
    """A tool_result's content as text: a string, or the text of its parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(text for part in content if isinstance(text := obj(part).get("text"), str))
    return None


class ClaudeStreamParser(StreamParser):
    """Parses Claude-style stream-json (also spoken, with small differences, by Qwen Code)."""

    @tolerant
    def feed(self, line: str) -> list[Event]:
        data = json_line(line)
        if data is None:
            return []
        kind = data.get("type")
        if kind == "system" and data.get("subtype") == "init":
            session, model = str_or_none(data.get("session_id")), str_or_none(data.get("model"))
            return [SessionStarted(line, session_id=session, model=model)]
        if kind == "assistant":
            return self._assistant(line, obj(data.get("message")))
        if kind == "user":
            return self._user(line, obj(data.get("message")))
        if kind == "result":
            return self._result(line, data)
        return []

    def _assistant(self, line: str, message: dict[str, Any]) -> list[Event]:
        events: list[Event] = []
        for block in seq(message.get("content")):
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and (text := str_or_none(block.get("text"))):
                events.append(AssistantText(line, text=text))
            elif block.get("type") == "tool_use":
                name, call_id = str_or_none(block.get("name")) or "", str_or_none(block.get("id"))
                events.append(ToolCall(line, name=name, call_id=call_id, input=block.get("input")))
        usage = anthropic_usage(message.get("usage"))
        if usage.reported:
            events.append(UsageReport(line, usage=usage, scope="turn"))
        return events

    def _user(self, line: str, message: dict[str, Any]) -> list[Event]:
        content = message.get("content")
        if not isinstance(content, list):
            return []
        return [
            ToolResult(
                line,
                call_id=str_or_none(block.get("tool_use_id")),
                output=tool_result_text(block.get("content")),
                is_error=bool(block.get("is_error")),
            )
            for block in content
            if isinstance(block, dict) and block.get("type") == "tool_result"
        ]

    def _result(self, line: str, data: dict[str, Any]) -> list[Event]:
        events: list[Event] = []
        usage = anthropic_usage(data.get("usage"))
        if usage.reported:
            events.append(UsageReport(line, usage=usage, scope="total"))
        text = data.get("result") if isinstance(data.get("result"), str) else None
        subtype = data.get("subtype")
        failed = bool(data.get("is_error")) or subtype not in (None, "success")
        if failed:
            reason = text or (subtype if isinstance(subtype, str) else "the result line reports an error")
            events.append(ErrorEvent(line, message=reason, fatal=True))
        events.append(Finished(line, final_text=text, ok=not failed))
        return events
