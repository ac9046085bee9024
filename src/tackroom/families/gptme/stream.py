"""The gptme stream parser and the record shapes its transcript reader shares.

What the lines mean is told in the family's own docstring (:mod:`tackroom.families.gptme`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from tackroom.families.base import StreamParser, int_or_none, json_line, tolerant
from tackroom.trace.events import (
    AssistantText,
    Event,
    Finished,
    ToolCall,
    ToolResult,
    Usage,
    UsageReport,
)

# "@shell(call_1): {"command": "ls"}": the tool, its call id, its arguments (JSON).
_TOOL_CALL = re.compile(r"^@([A-Za-z0-9_.-]+)\(([^)\n]*)\):[ ]?(.*)$", re.DOTALL)
API_ERROR = re.compile(r"Error code: (\d{3}) - (.*)")


def message_usage(metadata: Any) -> Usage:
    """An assistant message's ``metadata.usage`` (input already excludes the cache read)."""
    usage = metadata.get("usage") if isinstance(metadata, dict) else None
    if not isinstance(usage, dict):
        return Usage()
    return Usage(
        input=int_or_none(usage.get("input_tokens")),
        output=int_or_none(usage.get("output_tokens")),
        cache_read=int_or_none(usage.get("cache_read_tokens")),
        reasoning=int_or_none(usage.get("reasoning_tokens")),
    )


class GptmeStreamParser(StreamParser):
    """Parses ``gptme -n --output-format json``."""

    def __init__(self) -> None:
        self._text: str | None = None

    @tolerant
    def feed(self, line: str) -> list[Event]:
        data = json_line(line)
        if data is None or data.get("type") != "message":
            return []
        role, content = data.get("role"), data.get("content")
        if not isinstance(content, str):
            return []
        if role == "assistant":
            return self._assistant(line, content, data.get("metadata"))
        if role == "system" and isinstance(data.get("call_id"), str):
            return [ToolResult(line, call_id=data["call_id"], output=content, is_error=False)]
        return []

    def _assistant(self, line: str, content: str, metadata: Any) -> list[Event]:
        events: list[Event] = []
        call = _TOOL_CALL.match(content.strip())
        if call is not None:
            name, call_id, raw = call.groups()
            events.append(ToolCall(line, name=name, call_id=call_id or None, input=_arguments(raw)))
        elif content.strip():
            self._text = content
            events.append(AssistantText(line, text=content))
        usage = message_usage(metadata)
        if usage.reported:
            events.append(UsageReport(line, usage=usage, scope="turn"))
        return events

    def close(self, exit_code: int | None) -> list[Event]:
        # No terminal line: a run that exits 0 ended as gptme meant it to.
        if exit_code != 0:
            return [Finished(final_text=None, ok=False)]
        return [Finished(final_text=self._text, ok=True)]


def _arguments(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw
