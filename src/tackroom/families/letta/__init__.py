"""The letta family: Letta Code's ``letta -p --output-format stream-json`` (one JSON object per line).

Verified on 0.25.9 with its local backend against the mock. The lines:
``system``/``init`` (``session_id``, ``model``), ``message`` lines whose
``message_type`` says what they are (``assistant_message`` with the text in
``content`` parts, ``tool_call_message`` with ``tool_call`` (``name``,
``arguments`` as JSON text, ``tool_call_id``), ``tool_return_message``
(``tool_call_id``, ``tool_return``, ``status``), ``usage_statistics`` per
step, ``stop_reason``), ``error`` lines, and a final ``result`` (``subtype``
success or error, ``result`` the final text, ``usage`` of the whole run).

Assistant text arrives in chunks (``assistant_message`` lines sharing an
``otid``), joined here into one text per message. Tool calls are not in the
stream: an auto-approved one is an ``auto_approval`` line (``tool_call``:
``name``, ``tool_call_id``, ``arguments`` as JSON text), and what it returned
is only in the local backend's store, read after the run
(``conversations/<id>/messages.jsonl``, ``role`` toolResult, for this run's
agent only).

``usage.prompt_tokens`` already leaves out the cached part
(``cached_input_tokens``). Over chat completions ``cache_write_tokens`` and
``reasoning_tokens`` are written as 0 whatever the model reported (the mock's
3 reasoning tokens came back as 0), so neither is taken.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tackroom.errors import StreamLineError
from tackroom.families.base import (
    MAX_TEXT,
    Family,
    StreamParser,
    int_or_none,
    json_line,
    obj,
    seq,
    str_or_none,
    tolerant,
)
from tackroom.families.base import json_arguments as _arguments
from tackroom.families.base import text_or_none as _str
from tackroom.paths import read_regular
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
    """A ``result`` line's ``usage``."""
    usage = obj(usage)
    return Usage(
        input=int_or_none(usage.get("prompt_tokens")),
        output=int_or_none(usage.get("completion_tokens")),
        cache_read=int_or_none(usage.get("cached_input_tokens")),
    )


class LettaStreamParser(StreamParser):
    """Parses ``letta -p --output-format stream-json``."""

    def __init__(self) -> None:
        self._session: str | None = None
        self._failed = False
        self._finished = False
        self._text: list[str] = []
        self._text_size = 0
        self._text_id: Any = None
        self._text_raw = ""

    @tolerant
    def feed(self, line: str) -> list[Event]:
        data = json_line(line)
        if data is None:
            return []
        kind = data.get("type")
        if kind == "message" and data.get("message_type") == "assistant_message":
            return self._chunk(line, data)
        events = self._flush()
        if kind == "system" and data.get("subtype") == "init":
            events += self._init(line, data)
        elif kind == "message":
            events += self._message(line, data)
        elif kind == "auto_approval":
            events += _calls(line, [obj(data.get("tool_call"))])
        elif kind == "error":
            events += self._error(line, data.get("message"))
        elif kind == "result":
            events += self._result(line, data)
        return events

    def _chunk(self, line: str, data: dict[str, Any]) -> list[Event]:
        """One piece of an assistant message: a message with another ``otid`` ends the one before."""
        events = self._flush() if data.get("otid") != self._text_id else []
        text = _content_text(data.get("content"))
        if self._text_size + len(text) <= MAX_TEXT:
            self._text.append(text)
            self._text_size += len(text)
        self._text_id, self._text_raw = data.get("otid"), line
        return events

    def _flush(self) -> list[Event]:
        text = "".join(self._text)
        self._text, self._text_size, self._text_id = [], 0, None
        return [AssistantText(self._text_raw, text=text)] if text else []

    def _init(self, line: str, data: dict[str, Any]) -> list[Event]:
        session = str_or_none(data.get("session_id"))
        if self._session is not None or not session:
            return []
        self._session = session
        return [SessionStarted(line, session_id=session, model=str_or_none(data.get("model")))]

    def _message(self, line: str, data: dict[str, Any]) -> list[Event]:
        kind = data.get("message_type")
        if kind == "tool_call_message":
            return _calls(line, [obj(c) for c in seq(data.get("tool_calls"))] or [obj(data.get("tool_call"))])
        if kind == "tool_return_message":
            output = data.get("tool_return")
            return [
                ToolResult(
                    line,
                    call_id=_str(data.get("tool_call_id")),
                    output=output if isinstance(output, str) else None,
                    is_error=data.get("status") == "error",
                )
            ]
        return []

    def _result(self, line: str, data: dict[str, Any]) -> list[Event]:
        usage = run_usage(data.get("usage"))
        events: list[Event] = [UsageReport(line, usage=usage, scope="total")] if usage.reported else []
        self._finished = True
        if data.get("subtype") == "success" and data.get("is_error") is not True and not self._failed:
            text = data.get("result")
            return [*events, Finished(line, final_text=text if isinstance(text, str) else None, ok=True)]
        if not self._failed:
            events += self._error(line, data.get("result") if isinstance(data.get("result"), str) else None)
        return [*events, Finished(line, final_text=None, ok=False)]

    def _error(self, line: str, message: Any) -> list[Event]:
        # The model's failure comes first; letta repeats it (a stop_reason, a JSON-wrapped error line).
        if self._failed:
            return []
        self._failed = True
        text = message if isinstance(message, str) and message else "letta reported an error"
        return [ErrorEvent(line, message=text, fatal=True)]

    def close(self, exit_code: int | None) -> list[Event]:
        events = self._flush()
        if self._finished or not self._failed:
            return events
        return [*events, Finished(final_text=None, ok=False)]


def _calls(line: str, calls: list[dict[str, Any]]) -> list[Event]:
    return [
        ToolCall(
            line,
            name=str_or_none(call.get("name")) or "",
            call_id=_str(call.get("tool_call_id")),
            input=_arguments(call.get("arguments")),
        )
        for call in calls
        if call
    ]


#: The most conversation logs read after a run, and the most bytes of each.
MAX_LOGS = 64


def tool_results(root: Path, agent: str) -> list[Event]:
    """``agent``'s tool results from the local backend store under ``root`` (bounded; never raises)."""
    events: list[Event] = []
    try:
        logs = sorted((root / "conversations").glob("*/messages.jsonl"))[:MAX_LOGS]
    except OSError:
        return []
    for log in logs:
        try:
            text = read_regular(log, MAX_TEXT).decode("utf-8", "replace")
        except OSError:
            continue
        for line in text.splitlines():
            try:
                data = json_line(line)
            except StreamLineError:
                continue
            if data is None or data.get("role") != "toolResult":
                continue
            if obj(data.get("metadata")).get("agent_id") != agent:
                continue
            output = _content_text(data.get("content"))
            events.append(
                ToolResult(
                    line,
                    call_id=_str(data.get("toolCallId")),
                    output=output,
                    is_error=data.get("isError") is True,
                )
            )
    return events


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = [obj(p).get("text") for p in seq(content) if obj(p).get("type") == "text"]
    return "".join(p for p in parts if isinstance(p, str))


class Letta(Family):
    """Letta Code, verified on 0.25.9 (local backend) against the mock over OpenAI chat completions."""

    name = "letta"
    engines_module = "tackroom.families.letta.engines"
    stream = "letta -p --output-format stream-json"
    verified = True
    terminal = 'the "result" line'
    reports_usage = frozenset({"input", "output", "cache_read"})

    def parser(self) -> StreamParser:
        return LettaStreamParser()

    def transcripts(self) -> TranscriptReader:
        from tackroom.families.letta.transcripts import LettaTranscripts

        return LettaTranscripts()

    def after_exit(self, home: Path | None, env: Mapping[str, str], events: Sequence[Event]) -> list[Event]:
        """The results of the run's tool calls, which the stream does not carry (see the module)."""
        if not any(isinstance(e, ToolCall) for e in events):
            return []
        agent = next((e.session_id for e in events if isinstance(e, SessionStarted) and e.session_id), None)
        base = home if home is not None else Path(env.get("HOME") or "~").expanduser()
        root = (
            Path(env["LETTA_LOCAL_BACKEND_DIR"])
            if env.get("LETTA_LOCAL_BACKEND_DIR")
            else base / ".letta" / "lc-local-backend"
        )
        return tool_results(root, agent) if agent else []


FAMILY = Letta()
