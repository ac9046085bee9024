"""The pi stream parser and the record shapes its transcript reader shares.

What the lines mean is told in the family's own docstring (:mod:`tackroom.families.pi`).
"""

from __future__ import annotations

from typing import Any

from tackroom.families.base import StreamParser, int_or_none, json_line, str_or_none, tolerant
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

_FAILED = ("error", "aborted")
"""Assistant ``stopReason`` values of a model call that did not complete."""


def pi_usage(data: Any) -> Usage:
    """An assistant message's usage, or an empty Usage for pi's all-zero placeholder."""
    if not isinstance(data, dict):
        return Usage()
    figures = [int_or_none(data.get(key)) for key in ("input", "output", "cacheRead", "cacheWrite")]
    if not any(figures):
        return Usage()
    fresh, output, cache_read, cache_write = figures
    return Usage(
        input=fresh,
        output=output,
        cache_read=cache_read,
        cache_write=cache_write if cache_write else None,
    )


def blocks(message: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    """The content blocks of ``message`` of one ``type``."""
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == kind]


def message_text(message: dict[str, Any]) -> str | None:
    """The text of a message's text blocks, or None when it has none."""
    texts = [b["text"] for b in blocks(message, "text") if isinstance(b.get("text"), str)]
    return "".join(texts) if texts else None


def failure(message: dict[str, Any]) -> str | None:
    """Why an assistant message failed, or None when it did not."""
    reason = message.get("stopReason")
    if reason not in _FAILED:
        return None
    error = message.get("errorMessage")
    return error if isinstance(error, str) and error else f"model call ended with stopReason {reason!r}"


class PiStreamParser(StreamParser):
    """Parses pi's (and omp's) ``--mode json`` lines."""

    def __init__(self) -> None:
        self._last: dict[str, Any] = {}
        """The latest assistant message: what the run ends with unless another follows."""
        self._error: tuple[str, str] | None = None
        """The latest model failure (raw line, message) no successful call has followed yet."""
        self._finished = False

    @tolerant
    def feed(self, line: str) -> list[Event]:
        data = json_line(line)
        if data is None:
            return []
        kind = data.get("type")
        if kind == "session":
            return [SessionStarted(line, session_id=str_or_none(data.get("id")))]
        if kind == "message_end" and isinstance(data.get("message"), dict):
            return self._message_end(line, data["message"])
        if kind == "agent_end":
            return self._agent_end(line, data)
        if kind == "auto_retry_start":
            return self._retry_start(line, data)
        if kind == "auto_retry_end" and data.get("success") is False:
            return self._fail(line, data.get("finalError"))
        return []

    def close(self, exit_code: int | None) -> list[Event]:
        # The stream ended on a failure nothing recovered from: a call that was
        # not retried (a 400), or the process was stopped while pi was retrying.
        if self._finished or self._error is None:
            return []
        line, message = self._error
        return self._fail(line, message)

    def _message_end(self, line: str, message: dict[str, Any]) -> list[Event]:
        role = message.get("role")
        if role == "assistant":
            return self._assistant(line, message)
        if role == "toolResult":
            return [self._tool_result(line, message)]
        return []

    def _assistant(self, line: str, message: dict[str, Any]) -> list[Event]:
        self._last = message
        error = failure(message)
        self._error = (line, error) if error else None
        events: list[Event] = [
            AssistantText(line, text=b["text"])
            for b in blocks(message, "text")
            if isinstance(b.get("text"), str) and b["text"]
        ]
        events += [
            ToolCall(
                line,
                name=str_or_none(b.get("name")) or "",
                call_id=str_or_none(b.get("id")),
                input=b.get("arguments"),
            )
            for b in blocks(message, "toolCall")
        ]
        usage = pi_usage(message.get("usage"))
        if usage.reported:
            events.append(UsageReport(line, usage=usage, scope="turn"))
        return events

    def _tool_result(self, line: str, message: dict[str, Any]) -> ToolResult:
        texts = [b["text"] for b in blocks(message, "text") if isinstance(b.get("text"), str)]
        return ToolResult(
            line,
            call_id=str_or_none(message.get("toolCallId")),
            output="".join(texts) if texts else None,
            is_error=bool(message.get("isError")),
        )

    def _agent_end(self, line: str, data: dict[str, Any]) -> list[Event]:
        # omp marks an agent_end after which queued work goes on as not terminal.
        # After a failed call pi prints agent_end before it decides to retry, so
        # only a successful agent_end is known to be the last one.
        if data.get("isTerminal") is False or self._error is not None:
            return []
        self._finished = True
        return [Finished(line, final_text=message_text(self._last), ok=True)]

    def _retry_start(self, line: str, data: dict[str, Any]) -> list[Event]:
        message = self._message(data.get("errorMessage"))
        attempt, most = data.get("attempt"), data.get("maxAttempts")
        return [ErrorEvent(line, message=f"{message} (retry {attempt} of {most})", fatal=False)]

    def _fail(self, line: str, message: Any) -> list[Event]:
        self._finished = True
        error = ErrorEvent(line, message=self._message(message), fatal=True)
        return [error, Finished(line, final_text=None, ok=False)]

    def _message(self, reported: Any) -> str:
        """The failed call's error, and what pi says beside it (e.g. "Retry cancelled" when stopped)."""
        own = self._error[1] if self._error else None
        said = reported if isinstance(reported, str) and reported else None
        if own and said and said != own:
            return f"{own} ({said})"
        return own or said or "model call failed"
