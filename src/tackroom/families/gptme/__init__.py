"""The gptme family: ``gptme -n --output-format json`` (one JSON object per conversation message).

Verified on 0.35.1 against the mock. Each line is ``{"type": "message", "role":
..., "content": ..., "timestamp": ...}``: the user's prompt, each assistant
message (its ``metadata`` holds ``usage`` for that model call: ``input_tokens``
is the prompt less the cache read, ``cache_read_tokens``, ``output_tokens``,
``reasoning_tokens``), and ``system`` messages (a tool's result carries
``call_id`` and ``metadata.tool``). A tool call is written into the
assistant's content as ``@<tool>(<call id>): <JSON arguments>``.

There is no terminal line: the stream simply ends. A model failure (HTTP 400)
writes nothing to stdout after the prompt; it shows on stderr as
``Error code: 400 - {...}`` and exit 1, which :meth:`Gptme.stderr_error` reads.
Headless, an answer without a tool call is asked again twice ("No tool call
detected ...") before gptme gives up with exit 0; the ``complete`` tool ends a
session at once.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from tackroom.families.base import Family, StreamParser, int_or_none, json_line, tolerant
from tackroom.trace.events import (
    AssistantText,
    ErrorEvent,
    Event,
    Finished,
    ToolCall,
    ToolResult,
    Usage,
    UsageReport,
)

if TYPE_CHECKING:
    from tackroom.trace.model import TranscriptReader

# "@shell(call_1): {"command": "ls"}": the tool, its call id, its arguments (JSON).
_TOOL_CALL = re.compile(r"^@([A-Za-z0-9_.-]+)\(([^)\n]*)\):[ ]?(.*)$", re.DOTALL)
_API_ERROR = re.compile(r"Error code: (\d{3}) - (.*)")


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


class Gptme(Family):
    """gptme, verified on 0.35.1 against the mock over Chat Completions."""

    name = "gptme"
    stream = "gptme -n --output-format json"
    verified = True
    reports_usage = frozenset({"input", "output", "cache_read", "reasoning"})

    def parser(self) -> StreamParser:
        return GptmeStreamParser()

    def transcripts(self) -> TranscriptReader:
        from tackroom.families.gptme.transcripts import GptmeTranscripts

        return GptmeTranscripts()

    def stderr_error(self, stderr_tail: str) -> ErrorEvent | None:
        """``Error code: 400 - {...}``, logged through Rich: wrapped, the rest on indented lines."""
        lines = stderr_tail.splitlines()
        for at, line in enumerate(lines):
            found = _API_ERROR.search(line)
            if found is None:
                continue
            status, body = found.groups()
            rest = []
            for more in lines[at + 1 :]:
                if not more.startswith(" ") or not more.strip():
                    break
                rest.append(more.strip())
            text = (body.rstrip() + "".join(rest))[:500]
            return ErrorEvent(message=f"the model API answered {status}: {text}", fatal=True)
        return None


FAMILY = Gptme()
