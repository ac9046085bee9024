"""The gemini family's stream parser: Gemini CLI's ``stream-json`` lines into events (see the package)."""

from __future__ import annotations

import json
import re
from typing import Any

from tackroom.families.base import (
    MAX_TEXT,
    StreamParser,
    clean,
    fresh_input,
    int_or_none,
    json_line,
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

_OBJECT_START = re.compile(r"^\{", re.MULTILINE)
_CANDIDATES = 20


def gemini_usage(stats: Any) -> Usage:
    """Usage from ``result.stats``."""
    if not isinstance(stats, dict):
        return Usage()
    cached = int_or_none(stats.get("cached"))
    return Usage(
        input=fresh_input(int_or_none(stats.get("input_tokens")), cached),
        output=int_or_none(stats.get("output_tokens")),
        cache_read=cached,
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _error_message(error: Any) -> str | None:
    return _text(error.get("message")) if isinstance(error, dict) else None


class GeminiStreamParser(StreamParser):
    """Parses Gemini CLI stream-json, joining each assistant message's delta fragments."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._raw: list[str] = []
        self._size = 0
        self._last_text: str | None = None

    @tolerant
    def feed(self, line: str) -> list[Event]:
        data = json_line(line)
        if data is None:
            return []
        kind = data.get("type")
        if kind == "message":
            return self._message(line, data)
        # Any other line ends the assistant message being streamed.
        return [*self._flush(), *self._structured(line, kind, data)]

    def _structured(self, line: str, kind: Any, data: dict[str, Any]) -> list[Event]:
        if kind == "init":
            return [
                SessionStarted(line, session_id=_text(data.get("session_id")), model=_text(data.get("model")))
            ]
        if kind == "tool_use":
            name = _text(data.get("tool_name")) or ""
            return [
                ToolCall(line, name=name, call_id=_text(data.get("tool_id")), input=data.get("parameters"))
            ]
        if kind == "tool_result":
            return [self._tool_result(line, data)]
        if kind == "error":
            message = _text(data.get("message")) or ""
            return [ErrorEvent(line, message=message, fatal=data.get("severity") == "error")]
        if kind == "result":
            return self._result(line, data)
        return []

    def close(self, exit_code: int | None) -> list[Event]:
        return self._flush()  # the process ended mid-message

    def _message(self, line: str, data: dict[str, Any]) -> list[Event]:
        text = _text(data.get("content"))
        if data.get("role") != "assistant" or not text:
            return []  # the user message is the prompt echoed back
        if data.get("delta") is True:
            self._parts.append(text)
            self._raw.append(line)
            self._size += len(text) + len(line)
            # An endless message is handed on in pieces rather than held whole.
            return self._flush() if self._size > MAX_TEXT else []
        events = self._flush()
        self._last_text = text
        return [*events, AssistantText(line, text=text)]

    def _flush(self) -> list[Event]:
        if not self._parts:
            return []
        text, raw = "".join(self._parts), "\n".join(self._raw)
        self._parts, self._raw, self._size = [], [], 0
        self._last_text = text
        return [AssistantText(raw, text=text)]

    def _tool_result(self, line: str, data: dict[str, Any]) -> ToolResult:
        output = _text(data.get("output"))
        if output is None:
            output = _error_message(data.get("error"))
        return ToolResult(
            line, call_id=_text(data.get("tool_id")), output=output, is_error=data.get("status") != "success"
        )

    def _result(self, line: str, data: dict[str, Any]) -> list[Event]:
        events: list[Event] = []
        usage = gemini_usage(data.get("stats"))
        if usage.reported:
            events.append(UsageReport(line, usage=usage, scope="total"))
        ok = data.get("status") == "success"
        if not ok:
            message = _error_message(data.get("error")) or f"status {data.get('status')}"
            events.append(ErrorEvent(line, message=message, fatal=True))
        events.append(Finished(line, final_text=self._last_text, ok=ok))
        return events


def json_mode_error(stderr: str) -> ErrorEvent | None:
    """The ``{"session_id", "error": {...}}`` object ``--output-format json`` prints to stderr on failure.

    It starts at the beginning of a line and is pretty-printed over many; the
    stack traces gemini prints before it never start a line with ``{``. It is
    the last thing gemini prints, so only the last few candidates are tried:
    a stderr full of ``{`` lines must not cost a parse from each of them.
    """
    decoder = json.JSONDecoder()
    starts = [m.start() for m in _OBJECT_START.finditer(stderr)]
    for start in reversed(starts[-_CANDIDATES:]):
        try:
            data, end = decoder.raw_decode(stderr, start)
        except (ValueError, RecursionError):
            continue
        message = _error_message(clean(data).get("error")) if isinstance(data, dict) else None
        if message is not None:
            return ErrorEvent(stderr[start:end], message=message, fatal=True)
    return None
