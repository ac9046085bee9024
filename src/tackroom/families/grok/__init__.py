"""The grok family: Grok CLI's headless ``-p`` output (OpenAI chat messages, one per line).

Verified on ``@vibe-kit/grok-cli`` 0.0.34 (it reports 1.0.1) against the mock.
In ``-p`` mode grok prints the conversation when the run ends: ``user``,
``assistant`` (``content``, and ``tool_calls`` in OpenAI's shape: ``id``,
``function.name``, ``function.arguments`` as JSON text) and ``tool``
(``tool_call_id``, ``content``) messages. No session id, no model, no usage.

A failed model call does not change the exit code: grok exits 0 and writes
its error as the last assistant message, ``Sorry, I encountered an error:
...`` (a failure outside the agent loop exits 1 with ``Error: ...``). Only an
assistant message with no tool calls that is the last line and starts with one
of those two prefixes is taken as that error; the same words earlier in a run
are the model's own text.
"""

from __future__ import annotations

from typing import Any

from tackroom.families.base import Family, StreamParser, json_line, obj, seq, str_or_none, tolerant
from tackroom.families.base import json_arguments as _arguments
from tackroom.families.base import text_or_none as _str
from tackroom.trace.events import AssistantText, ErrorEvent, Event, Finished, ToolCall, ToolResult

#: How grok words a failure it caught (the agent loop's, then the CLI's own).
ERROR_PREFIXES = ("Sorry, I encountered an error: ", "Error: ")


class GrokStreamParser(StreamParser):
    """Parses ``grok -p`` output; the run's outcome is known only once it ends."""

    def __init__(self) -> None:
        self._last_text: str | None = None
        """The last assistant message's text, when that message was the last line and made no calls."""
        self._last_raw = ""

    @tolerant
    def feed(self, line: str) -> list[Event]:
        data = json_line(line)
        if data is None:
            return []
        role = data.get("role")
        self._last_text = None
        if role == "assistant":
            return self._assistant(line, data)
        if role == "tool":
            content = data.get("content")
            output = content if isinstance(content, str) else None
            return [ToolResult(line, call_id=_str(data.get("tool_call_id")), output=output)]
        return []

    def _assistant(self, line: str, data: dict[str, Any]) -> list[Event]:
        events: list[Event] = []
        text = data.get("content")
        calls = seq(data.get("tool_calls"))
        if isinstance(text, str) and text:
            events.append(AssistantText(line, text=text))
            if not calls:
                self._last_text, self._last_raw = text, line
        for call in calls:
            function = obj(obj(call).get("function"))
            events.append(
                ToolCall(
                    line,
                    name=str_or_none(function.get("name")) or "",
                    call_id=_str(obj(call).get("id")),
                    input=_arguments(function.get("arguments")),
                )
            )
        return events

    def close(self, exit_code: int | None) -> list[Event]:
        if exit_code is None:
            return []  # killed or timed out: the runner reports it
        text = self._last_text
        failure = next((text.removeprefix(p) for p in ERROR_PREFIXES if text and text.startswith(p)), None)
        if failure is not None:
            error = ErrorEvent(self._last_raw, message=failure or "grok reported an error", fatal=True)
            return [error, Finished(final_text=None, ok=False)]
        return [Finished(final_text=text, ok=exit_code == 0)]


class Grok(Family):
    """Grok CLI, verified on 0.0.34 against the mock over OpenAI chat completions."""

    name = "grok"
    stream = "grok -p (OpenAI chat messages as JSON lines)"
    verified = True
    # No usage figure anywhere in its output: every one is not_reported.
    reports_usage = frozenset()

    def parser(self) -> StreamParser:
        return GrokStreamParser()


FAMILY = Grok()
