"""The Kimi CLI stream parser and the record shapes its transcript reader shares.

What the lines mean is told in the family's own docstring (:mod:`tackroom.families.kimi`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from tackroom.errors import StreamLineError
from tackroom.families.base import StreamParser, int_or_none, json_line, tolerant
from tackroom.paths import open_regular
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

MAX_LOG_LINE = 4 * 1024 * 1024
"""A wire.jsonl line longer than this is skipped (a StatusUpdate is a few hundred bytes)."""

_API_ERROR = re.compile(r"^Error code: (\d{3}) - ")
MAX_ERROR = 4096
"""The most characters of a model error kept."""
SESSION_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def content_text(content: Any) -> str:
    """A message's text: the string itself, or its text parts joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        return "".join(p for p in parts if isinstance(p, str))
    return ""


class KimiStreamParser(StreamParser):
    """Parses ``kimi --print --output-format stream-json``."""

    def __init__(self) -> None:
        self._text: str | None = None
        self._error: list[str] = []
        self._in_error = False

    @tolerant
    def feed(self, line: str) -> list[Event]:
        data = json_line(line)
        if data is None:
            self._plain(line)
            return []
        self._in_error = False
        role = data.get("role")
        if role == "assistant":
            events: list[Event] = []
            text = content_text(data.get("content"))
            if text.strip():
                self._text = text
                events.append(AssistantText(line, text=text))
            calls = data.get("tool_calls")
            for call in calls if isinstance(calls, list) else []:
                events += _tool_call(line, call)
            return events
        if role == "tool":
            call_id = data.get("tool_call_id")
            output = content_text(data.get("content"))
            return [ToolResult(line, call_id=call_id if isinstance(call_id, str) else None, output=output)]
        return []

    def _plain(self, line: str) -> None:
        """An ``Error code: ...`` line and its wrapped continuation, up to a blank line."""
        text = line.strip()
        if _API_ERROR.match(text) and not self._error:
            self._error, self._in_error = [text], True
        elif self._in_error and text and sum(map(len, self._error)) < MAX_ERROR:
            self._error.append(text)
        else:
            self._in_error = False

    def close(self, exit_code: int | None) -> list[Event]:
        # No terminal line: exit 0 without an error is kimi's own word that the turn ended.
        if self._error:
            message = "".join(self._error)[:MAX_ERROR]
            return [ErrorEvent(message=message, fatal=True), Finished(final_text=None, ok=False)]
        if exit_code != 0:
            return [Finished(final_text=None, ok=False)]
        return [Finished(final_text=self._text, ok=True)]


def _tool_call(line: str, call: Any) -> list[Event]:
    if not isinstance(call, dict) or not isinstance(call.get("function"), dict):
        return []
    function = call["function"]
    name = function.get("name")
    call_id = call.get("id")
    return [
        ToolCall(
            line,
            name=name if isinstance(name, str) else "",
            call_id=call_id if isinstance(call_id, str) else None,
            input=function.get("arguments"),
        )
    ]


def kimi_share(home: Path | None, env: Mapping[str, str]) -> Path | None:
    """Where kimi keeps its state: ``$KIMI_SHARE_DIR``, else ``~/.kimi``."""
    if env.get("KIMI_SHARE_DIR"):
        return Path(env["KIMI_SHARE_DIR"])
    return home / ".kimi" if home is not None else None


def session_usage(wire: Path) -> list[Event]:
    """A usage report per model call of one session's ``wire.jsonl`` (hostile input, read bounded)."""
    reports: list[Event] = []
    for line in _lines(wire):
        try:
            record = json_line(line)
        except StreamLineError as exc:
            reports.append(
                ErrorEvent(line, message=f"kimi session log: a line was not used: {exc}", fatal=False)
            )
            continue
        message = record.get("message") if record is not None else None
        if not isinstance(message, dict) or message.get("type") != "StatusUpdate":
            continue
        payload = message.get("payload")
        usage = token_usage(payload.get("token_usage") if isinstance(payload, dict) else None)
        if usage.reported:
            reports.append(UsageReport(line, usage=usage, scope="turn"))
    return reports


def token_usage(figures: Any) -> Usage:
    """A StatusUpdate's ``token_usage``."""
    if not isinstance(figures, dict):
        return Usage()
    return Usage(
        input=int_or_none(figures.get("input_other")),
        output=int_or_none(figures.get("output")),
        cache_read=int_or_none(figures.get("input_cache_read")),
    )


def _lines(path: Path) -> Iterator[str]:
    try:
        with open_regular(path) as log:
            while line := log.readline(MAX_LOG_LINE + 1):
                if len(line) > MAX_LOG_LINE:
                    while line and not line.endswith(b"\n"):
                        line = log.readline(MAX_LOG_LINE + 1)
                    continue
                yield line.decode("utf-8", errors="replace").rstrip("\r\n")
    except OSError:
        return
