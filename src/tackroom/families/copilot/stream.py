"""The Copilot CLI stream parser and the record shapes its transcript reader shares.

What the lines mean is told in the family's own docstring (:mod:`tackroom.families.copilot`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from tackroom.families.base import (
    StreamLineError,
    StreamParser,
    fresh_input,
    int_or_none,
    json_line,
    obj,
    seq,
    tolerant,
)
from tackroom.families.base import text_or_none as _str
from tackroom.paths import open_regular
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

MAX_LOG_LINE = 4 * 1024 * 1024
"""The longest session-log line read (a usage record is a few hundred bytes)."""


def _data(record: dict[str, Any]) -> dict[str, Any]:
    data = record.get("data")
    return data if isinstance(data, dict) else {}


def tool_output(data: dict[str, Any]) -> str | None:
    """A finished tool's text: ``result.content`` on success, ``error.message`` on failure."""
    for key, field in (("result", "content"), ("error", "message")):
        part = data.get(key)
        if isinstance(part, dict) and isinstance(part.get(field), str):
            return str(part[field])
        if isinstance(part, str):
            return part
    return None


class CopilotStreamParser(StreamParser):
    """Parses ``copilot -p ... --output-format json``."""

    def __init__(self) -> None:
        self._session: str | None = None
        self._model: str | None = None
        self._final_text: str | None = None
        self._failed = False

    @tolerant
    def feed(self, line: str) -> list[Event]:
        record = json_line(line)
        if record is None:
            return []
        kind = record.get("type")
        data = _data(record)
        self._model = _str(data.get("model")) or _str(data.get("selectedModel")) or self._model
        if kind == "session.start":
            return self._started(line, _str(data.get("sessionId")))
        if kind == "assistant.message":
            return self._message(line, data)
        if kind == "tool.execution_complete":
            call_id = _str(data.get("toolCallId"))
            return [
                ToolResult(line, call_id=call_id, output=tool_output(data), is_error=not data.get("success"))
            ]
        if kind == "session.error":
            self._failed = True
            message = _str(data.get("message")) or _str(data.get("errorType")) or "copilot session error"
            return [ErrorEvent(line, message=message, fatal=True)]
        if kind == "result":
            return self._result(line, record)
        return []

    def _started(self, line: str, session: str | None) -> list[Event]:
        if self._session is not None or session is None:
            return []
        self._session = session
        return [SessionStarted(line, session_id=session, model=self._model)]

    def _message(self, line: str, data: dict[str, Any]) -> list[Event]:
        events: list[Event] = []
        text = _str(data.get("content"))
        if text is not None:
            self._final_text = text
            events.append(AssistantText(line, text=text))
        for request in seq(data.get("toolRequests")):
            if isinstance(request, dict):
                call = ToolCall(
                    line,
                    name=str(request.get("name") or ""),
                    call_id=_str(request.get("toolCallId")),
                    input=request.get("arguments"),
                )
                events.append(call)
        return events

    def _result(self, line: str, record: dict[str, Any]) -> list[Event]:
        # The result line is top-level: sessionId and exitCode are not under "data".
        events = self._started(line, _str(record.get("sessionId")))
        exit_code = record.get("exitCode")
        ok = exit_code == 0 and not self._failed
        return [*events, Finished(line, final_text=self._final_text, ok=ok)]


def record_usage(usage: Any) -> Usage:
    """One ``session.usage_record``'s ``usage`` in tackroom's convention."""
    usage = obj(usage)
    prompt = int_or_none(usage.get("inputTokens"))
    cached = int_or_none(usage.get("cacheReadTokens"))
    written = int_or_none(usage.get("cacheWriteTokens"))
    return Usage(
        # A prompt smaller than its cached part contradicts itself: negative here, unknown in Usage.
        input=fresh_input(prompt, cached),
        output=int_or_none(usage.get("outputTokens")),
        cache_read=cached,
        # 0 where the wire has no cache-write figure (Chat Completions): only a positive count is one.
        cache_write=written if written else None,
        reasoning=int_or_none(usage.get("reasoningTokens")),
    )


def _lines(path: Path) -> Iterator[str]:
    """The log's lines, bytes that are not UTF-8 replaced; a line longer than ``MAX_LOG_LINE`` is skipped."""
    try:
        with open_regular(path) as log:
            while line := log.readline(MAX_LOG_LINE + 1):
                if len(line) > MAX_LOG_LINE:
                    while line and not line.endswith(b"\n"):  # the rest of the overlong line
                        line = log.readline(MAX_LOG_LINE + 1)
                    continue
                yield line.decode("utf-8", errors="replace").rstrip("\r\n")
    except OSError:
        return


def session_usage(events_file: Path) -> list[Event]:
    """A usage report per model call recorded in one session's ``events.jsonl``.

    The log is the harness's own file, as hostile as its stdout: a line that
    cannot be used becomes a non-fatal error event, and reading it stays bounded.
    """
    reports: list[Event] = []
    for line in _lines(events_file):
        try:
            record = json_line(line)
        except StreamLineError as exc:
            reports.append(
                ErrorEvent(line, message=f"copilot session log: a line was not used: {exc}", fatal=False)
            )
            continue
        if record is not None and record.get("type") == "session.usage_record":
            usage = record_usage(_data(record).get("usage"))
            if usage.reported:
                reports.append(UsageReport(line, usage=usage, scope="turn"))
    return reports


def copilot_home(home: Path | None, env: Mapping[str, str]) -> Path | None:
    """Where copilot keeps its state: ``$COPILOT_HOME``, else ``~/.copilot``."""
    if env.get("COPILOT_HOME"):
        return Path(env["COPILOT_HOME"])
    return home / ".copilot" if home is not None else None
