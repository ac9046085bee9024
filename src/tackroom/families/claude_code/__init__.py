"""The claude-code family: Claude Code's ``--output-format stream-json`` (with ``--verbose``).

Line types (verified on 2.1.197): ``system/init`` (session id, model, tools),
``assistant`` (one API message: text and tool_use blocks, per-call usage),
``user`` (tool_result blocks), ``result`` (final text, total usage,
``is_error``). A model error exits 1 with ``is_error: true`` while ``subtype``
still says ``success``, so ``is_error`` is what decides.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tackroom.families.base import (
    Family,
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

if TYPE_CHECKING:
    from tackroom.trace.model import TranscriptReader


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


class ClaudeCode(Family):
    name = "claude-code"
    engines_module = "tackroom.families.claude_code.engines"
    stream = "claude stream-json"
    terminal = 'its "result" line'
    verified = True
    reports_usage = frozenset({"input", "output", "cache_read", "cache_write"})

    def parser(self) -> StreamParser:
        return ClaudeStreamParser()

    def transcripts(self) -> TranscriptReader:
        from tackroom.families.claude_code.transcripts import ClaudeTranscripts

        return ClaudeTranscripts()


FAMILY = ClaudeCode()
