"""The cline family: Cline CLI's ``cline --json`` (one JSON event per line).

Verified on 3.0.65 against the mock. Every line has a ``type``:
``hook_event`` (``hookEventName`` agent_start/agent_end/..., ``taskId``: a
conversation's id, not the session's, ``parentAgentId`` null for the run's own agent), ``agent_event``
(``event.type``: ``content_start`` streams a delta with the text so far,
``content_end`` closes a text block with its whole ``text`` or a tool block
with its result, ``usage`` per model call, ``done``, ``error``),
``run_result`` (``finishReason`` completed or error, ``text``, ``usage`` of the
whole run) and a bare ``error`` line after a failure.

Usage is taken from ``run_result`` as the run's total. ``inputTokens`` is the
whole prompt, cached tokens included (OpenAI's convention). Over chat
completions ``cacheWriteTokens`` is written as 0 although that wire carries
no such figure, so it is not taken; no reasoning figure is written.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from tackroom.families.base import (
    Family,
    StreamParser,
    fresh_input,
    int_or_none,
    json_line,
    obj,
    str_or_none,
    tolerant,
)
from tackroom.families.base import text_or_none as _str
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


def run_usage(usage: Any) -> Usage:
    """A ``run_result`` line's ``usage``: the prompt includes its cached part; no cache write is taken."""
    usage = obj(usage)
    prompt, cached = int_or_none(usage.get("inputTokens")), int_or_none(usage.get("cacheReadTokens"))
    output = int_or_none(usage.get("outputTokens"))
    return Usage(input=fresh_input(prompt, cached), output=output, cache_read=cached)


class ClineStreamParser(StreamParser):
    """Parses ``cline --json``."""

    def __init__(self) -> None:
        self._session: str | None = None
        self._failed = False
        self._finished = False

    @tolerant
    def feed(self, line: str) -> list[Event]:
        data = json_line(line)
        if data is None:
            return []
        kind = data.get("type")
        if kind == "hook_event":
            return self._hook(line, data)
        if kind == "agent_event":
            return self._agent(line, obj(data.get("event")))
        if kind == "run_result":
            return self._result(line, data)
        if kind == "error":
            return self._error(line, data.get("message"))
        return []

    def _hook(self, line: str, data: dict[str, Any]) -> list[Event]:
        task = str_or_none(data.get("taskId"))
        if self._session is not None or not task or data.get("parentAgentId") is not None:
            return []
        self._session = task
        # taskId is a conversation's id (conv_...), not the session's: cline resumes (--id) and logs
        # its session under another (<id>/<id>.json), which no line of the stream names.
        return [SessionStarted(line)]

    def _agent(self, line: str, event: dict[str, Any]) -> list[Event]:
        kind = event.get("type")
        content = event.get("contentType")
        if kind == "content_start" and content == "tool":
            name = str_or_none(event.get("toolName")) or ""
            call_id = _str(event.get("toolCallId"))
            return [ToolCall(line, name=name, call_id=call_id, input=event.get("input"))]
        if kind == "content_end" and content == "text":
            text = event.get("text")
            return [AssistantText(line, text=text)] if isinstance(text, str) and text else []
        if kind == "content_end" and content == "tool":
            output = event.get("output")
            text = output if isinstance(output, str) or output is None else _text(output)
            call_id = _str(event.get("toolCallId"))
            return [ToolResult(line, call_id=call_id, output=text, is_error=bool(event.get("error")))]
        if kind == "error":
            return self._error(line, obj(event.get("error")).get("message"))
        return []

    def _result(self, line: str, data: dict[str, Any]) -> list[Event]:
        usage = run_usage(data.get("usage"))
        events: list[Event] = [UsageReport(line, usage=usage, scope="total")] if usage.reported else []
        self._finished = True
        if data.get("finishReason") == "completed" and not self._failed:
            text = data.get("text")
            return [*events, Finished(line, final_text=text if isinstance(text, str) else None, ok=True)]
        if not self._failed:
            reason = str_or_none(data.get("finishReason")) or "unknown"
            events.append(ErrorEvent(line, message=f"cline ended the run: {reason}", fatal=True))
            self._failed = True
        return [*events, Finished(line, final_text=None, ok=False)]

    def _error(self, line: str, message: Any) -> list[Event]:
        # The model's failure comes first (agent_event error); run_result and a bare error line repeat it.
        if self._failed:
            return []
        self._failed = True
        text = message if isinstance(message, str) and message else "cline reported an error"
        return [ErrorEvent(line, message=text, fatal=True)]

    def close(self, exit_code: int | None) -> list[Event]:
        # An error line without a run_result (or a run_result after which none came) still failed the
        # run; a stream cut before either is the runner's to report.
        if self._finished or not self._failed:
            return []
        return [Finished(final_text=None, ok=False)]


def _text(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return str(value)


class Cline(Family):
    """Cline CLI, verified on 3.0.65 against the mock over OpenAI chat completions."""

    name = "cline"
    stream = "cline --json"
    verified = True
    terminal = 'the "run_result" line'
    reports_usage = frozenset({"input", "output", "cache_read"})
    engines_module = "tackroom.families.cline.engines"

    def parser(self) -> StreamParser:
        return ClineStreamParser()

    def transcripts(self) -> TranscriptReader:
        from tackroom.families.cline.transcripts import ClineTranscripts

        return ClineTranscripts()


FAMILY = Cline()
