"""The droid family: Factory Droid's ``droid exec -o stream-json`` (one JSON event per line).

Verified on 0.215.0 against the mock. Every line carries ``session_id``; the
types are ``system``/``init`` (``model``, ``cwd``, the tools), ``message``
(``role`` user or assistant, ``text``), ``tool_call`` (``id``, ``toolName``,
``parameters``), ``tool_result`` (``id``, ``value``, ``isError``),
``completion`` (``finalText`` and the whole run's ``usage``: one figure for
all its model calls, so a ``total``) and ``error`` (``source`` agent_loop with
the model's failure, then ``source`` cli "Exec failed": exit 1).

On the Anthropic wire ``input_tokens`` is the provider's uncached input and
``cache_creation_input_tokens`` the cache write. No reasoning figure is
written (``factory_credits`` and ``ttft_ms`` are not token counts).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tackroom.families.base import Family, StreamParser, int_or_none, json_line, tolerant
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
    """A ``completion`` line's ``usage``: Anthropic-style names."""
    if not isinstance(usage, dict):
        return Usage()
    return Usage(
        input=int_or_none(usage.get("input_tokens")),
        output=int_or_none(usage.get("output_tokens")),
        cache_read=int_or_none(usage.get("cache_read_input_tokens")),
        cache_write=int_or_none(usage.get("cache_creation_input_tokens")),
    )


class DroidStreamParser(StreamParser):
    """Parses ``droid exec -o stream-json``."""

    def __init__(self) -> None:
        self._session: str | None = None
        self._failed = False
        self._finished = False

    @tolerant
    def feed(self, line: str) -> list[Event]:
        data = json_line(line)
        if data is None:
            return []
        events = self._session_started(line, data)
        kind = data.get("type")
        if kind == "message" and data.get("role") == "assistant":
            text = data.get("text")
            if isinstance(text, str) and text:
                events.append(AssistantText(line, text=text))
        elif kind == "tool_call":
            name = str(data.get("toolName") or "")
            call_id = _str(data.get("id"))
            events.append(ToolCall(line, name=name, call_id=call_id, input=data.get("parameters")))
        elif kind == "tool_result":
            value = data.get("value")
            output = value if isinstance(value, str) else None
            is_error = data.get("isError") is True
            events.append(ToolResult(line, call_id=_str(data.get("id")), output=output, is_error=is_error))
        elif kind == "completion":
            usage = run_usage(data.get("usage"))
            events += [UsageReport(line, usage=usage, scope="total")] if usage.reported else []
            final = data.get("finalText")
            self._finished = True
            events.append(Finished(line, final_text=final if isinstance(final, str) else None, ok=True))
        elif kind == "error" and not self._failed:
            # The model's failure (source agent_loop) comes first, then the CLI's "Exec failed".
            self._failed = True
            message = data.get("message")
            text = message if isinstance(message, str) and message else "droid reported an error"
            events.append(ErrorEvent(line, message=text, fatal=True))
        return events

    def _session_started(self, line: str, data: dict[str, Any]) -> list[Event]:
        session = data.get("session_id")
        if self._session is not None or not isinstance(session, str) or not session:
            return []
        self._session = session
        model = data.get("model") if data.get("type") == "system" else None
        return [SessionStarted(line, session_id=session, model=_str(model))]

    def close(self, exit_code: int | None) -> list[Event]:
        # A run that wrote an error line ended badly whatever the exit code; one that ended
        # without a completion or an error line (killed, crashed) is the runner's to report.
        if self._finished or not self._failed:
            return []
        return [Finished(final_text=None, ok=False)]


class Droid(Family):
    """Factory Droid, verified on 0.215.0 against the mock over the Anthropic Messages wire."""

    name = "droid"
    stream = "droid exec -o stream-json"
    verified = True
    terminal = 'the "completion" line'
    reports_usage = frozenset({"input", "output", "cache_read", "cache_write"})
    engines_module = "tackroom.families.droid.engines"

    def parser(self) -> StreamParser:
        return DroidStreamParser()

    def transcripts(self) -> TranscriptReader:
        from tackroom.families.droid.transcripts import DroidTranscripts

        return DroidTranscripts()


FAMILY = Droid()
