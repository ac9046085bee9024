"""The OpenCode stream parser and the record shapes its transcript reader shares.

What the lines mean is told in the family's own docstring (:mod:`tackroom.families.opencode`).
"""

from __future__ import annotations

from collections import deque
from typing import Any

from tackroom.families.base import MAX_TEXT, StreamParser, int_or_none, json_line, tolerant
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

#: A tool part in one of these states has run; "pending" and "running" have not.
_DONE = frozenset({"completed", "error"})


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def step_usage(tokens: Any) -> Usage:
    """One ``step_finish`` ``part.tokens``: uncached input, output, cache read/write, reasoning."""
    if not isinstance(tokens, dict):
        return Usage()
    cache = _obj(tokens.get("cache"))
    reasoning = int_or_none(tokens.get("reasoning"))
    return Usage(
        input=int_or_none(tokens.get("input")),
        output=int_or_none(tokens.get("output")),
        cache_read=int_or_none(cache.get("read")),
        cache_write=int_or_none(cache.get("write")),
        # opencode fills 0 when the provider sent no reasoning figure: only a positive count is one.
        reasoning=reasoning if reasoning else None,
    )


def error_message(error: Any) -> str:
    """The text of an ``error`` event: ``error.data.message``, else the error's name."""
    if not isinstance(error, dict):
        return str(error) if error else "opencode reported an error"
    data = error.get("data")
    if isinstance(data, dict) and isinstance(data.get("message"), str) and data["message"]:
        return str(data["message"])
    return str(error.get("name") or "opencode reported an error")


class OpencodeStreamParser(StreamParser):
    """Parses ``opencode run --format json``."""

    def __init__(self) -> None:
        self._session: str | None = None
        self._step_text: deque[str] = deque()
        """The current step's text parts: its last ``MAX_TEXT`` characters' worth, whatever it streams."""
        self._step_size = 0
        self._final_text: str | None = None
        """The text of the last finished step that had any."""
        self._calls: set[str] = set()
        self._failed = False

    @tolerant
    def feed(self, line: str) -> list[Event]:
        data = json_line(line)
        if data is None:
            return []
        events = self._session_started(line, data)
        part = _obj(data.get("part"))
        kind = data.get("type")
        if kind == "step_start":
            self._end_step()
        elif kind == "text":
            events += self._text(line, part)
        elif kind == "tool_use":
            events += self._tool(line, part)
        elif kind == "step_finish":
            usage = step_usage(part.get("tokens"))
            events += [UsageReport(line, usage=usage, scope="turn")] if usage.reported else []
        elif kind == "error":
            self._failed = True
            events.append(ErrorEvent(line, message=error_message(data.get("error")), fatal=True))
        return events

    def close(self, exit_code: int | None) -> list[Event]:
        # The stream has no closing line: it ended well when opencode exited 0, badly when it
        # wrote an error. A kill or a crash without an error line is the runner's to report.
        if exit_code != 0 and not self._failed:
            return []
        self._end_step()
        return [Finished(final_text=self._final_text, ok=exit_code == 0 and not self._failed)]

    def _end_step(self) -> None:
        if self._step_text:
            self._final_text = "".join(self._step_text)
        self._step_text.clear()
        self._step_size = 0

    def _session_started(self, line: str, data: dict[str, Any]) -> list[Event]:
        session = data.get("sessionID")
        if self._session is not None or not isinstance(session, str) or not session:
            return []
        self._session = session
        return [SessionStarted(line, session_id=session)]

    def _text(self, line: str, part: dict[str, Any]) -> list[Event]:
        text = part.get("text")
        if not isinstance(text, str) or not text:
            return []
        self._step_text.append(text)
        self._step_size += len(text)
        while self._step_size > MAX_TEXT and len(self._step_text) > 1:
            self._step_size -= len(self._step_text.popleft())
        return [AssistantText(line, text=text)]

    def _tool(self, line: str, part: dict[str, Any]) -> list[Event]:
        state = _obj(part.get("state"))
        call_id = part.get("callID") if isinstance(part.get("callID"), str) else None
        events: list[Event] = []
        if call_id is None or call_id not in self._calls:
            events.append(
                ToolCall(line, name=str(part.get("tool") or ""), call_id=call_id, input=state.get("input"))
            )
            if call_id is not None:
                self._calls.add(call_id)
        status = state.get("status")
        if isinstance(status, str) and status in _DONE:
            output = state.get("output") if status == "completed" else state.get("error")
            text = output if isinstance(output, str) else None
            events.append(ToolResult(line, call_id=call_id, output=text, is_error=status == "error"))
            self._calls.discard(call_id or "")  # a finished call is not announced again; forget it
        return events
