"""The copilot family: GitHub Copilot CLI's ``--output-format json`` (JSONL), and its session log.

Verified on 1.0.102 (BYOK, OpenAI Chat Completions wire). Each line is
``{"type", "data", "id", "timestamp", ...}``; the ones that matter:
``assistant.message`` (``content`` and ``toolRequests[]``),
``tool.execution_complete`` (``success``, ``result.content``),
``session.error`` (the model call failed; exit 1) and a last ``result`` line
(``sessionId``, ``exitCode``). ``session.start`` is written to the session log
but not to stdout, so the session id arrives with ``result``.

**stdout carries no token counts.** Copilot writes one ``session.usage_record``
per model call to ``$COPILOT_HOME/session-state/<session>/events.jsonl``,
which :meth:`Copilot.after_exit` reads. Its ``inputTokens`` is the whole
prompt, cached tokens included (mock 321 prompt / 21 cached -> 321), so
tackroom's uncached input is the difference; ``reasoningTokens`` is the
provider's figure; ``cacheWriteTokens`` is 0 on a wire that has no such figure
(Chat Completions), so only a positive count is one.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tackroom.errors import UnsafePathError
from tackroom.families.base import (
    Family,
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
from tackroom.paths import check_name, inside
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
        with path.open("rb") as log:
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


class Copilot(Family):
    """GitHub Copilot CLI, verified on 1.0.102 against the mock over the Chat Completions wire (BYOK)."""

    name = "copilot"
    engines_module = "tackroom.families.copilot.engines"
    stream = "copilot --output-format json"
    terminal = 'its "result" line'
    verified = True
    reports_usage = frozenset({"input", "output", "cache_read", "reasoning"})

    def parser(self) -> StreamParser:
        return CopilotStreamParser()

    def transcripts(self) -> TranscriptReader:
        from tackroom.families.copilot.transcripts import CopilotTranscripts

        return CopilotTranscripts()

    def after_exit(self, home: Path | None, env: Mapping[str, str], events: Sequence[Event]) -> list[Event]:
        """Per-call usage from this run's session log (``session-state/<session id>/events.jsonl``).

        Without a session id from the stream, the log is read only when it is the
        only one there: a state dir holding other sessions (the real home, copied
        credentials) is not guessed at, and usage stays not reported.
        """
        root = copilot_home(home, env)
        if root is None:
            return []
        session = next((e.session_id for e in events if isinstance(e, SessionStarted) and e.session_id), None)
        if session is not None:
            try:
                # The id comes from the harness's stdout: it names a directory only if it stays one.
                log = inside(
                    root / "session-state", check_name(session, "copilot session id"), "events.jsonl"
                )
            except UnsafePathError as exc:
                return [ErrorEvent(message=f"copilot session log not read: {exc}", fatal=False)]
            return session_usage(log) if log.is_file() else []
        logs = sorted((root / "session-state").glob("*/events.jsonl"))
        return session_usage(logs[0]) if len(logs) == 1 else []


FAMILY = Copilot()
