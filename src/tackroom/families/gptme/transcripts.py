"""gptme's conversation logs: ``logs/<conversation>/conversation.jsonl`` under its data dir.

One message per line (verified on 0.35.1): ``{"role", "content", "timestamp",
"metadata", "call_id", "pinned", "hide", "files"}``. Its time is as gptme
wrote it, local and without an offset (an error message has one): kept as
written. The directory's name is the conversation's id. Mapped: a ``user``
message, an ``assistant`` message (its text, and each tool call written into
it as ``@<tool>(<call id>): <JSON arguments>`` on a line of its own, gptme's
``tool`` format), a ``system`` message with a ``call_id`` (a tool's result),
and one whose ``metadata.error`` is true (the model call that failed). Every
other message (the system prompt and its context, a notice, a ``/command``'s
output, a role a new release adds) is kept as a raw record; so is a tool call
in the ``markdown`` or ``xml`` format, which stays in the assistant's text.

gptme appends to the log; an undo or an edit replaces it whole with a new
file (a new inode), which the index reads again from the start. A branch's
log (``branches/<name>.jsonl``) is another view of the same calls, so it is
not read.

Usage is the family's :func:`~tackroom.families.gptme.stream.message_usage`, per
model call, on the assistant message: ``input_tokens`` already excludes the
cache read, ``cache_read_tokens`` is apart from it, ``reasoning_tokens`` is
written (0 when the model reported none); gptme keeps no cache write figure.
A figure that is there but not a count is unknown. A call's key is the
message's time and the digest of its input (``input_log_digest``).

The title is the ``name`` in the ``config.toml`` beside the log, the working
directory the target of its ``workspace`` link (read, never followed).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from tackroom._toml import tomllib
from tackroom.families.base import int_or_none, json_arguments, obj, str_or_none, text_or_none
from tackroom.families.gptme.stream import message_usage
from tackroom.paths import read_regular
from tackroom.trace.events import (
    FIGURES,
    AssistantText,
    ErrorEvent,
    Event,
    Record,
    SessionStarted,
    ToolCall,
    ToolResult,
    Usage,
    UsageReport,
    UserText,
)
from tackroom.trace.lines import JsonLinesReader, Reading
from tackroom.trace.model import SessionMeta, TraceEvent, TraceItem

CONFIG_LIMIT = 256 * 1024
"""The largest ``config.toml`` beside a log read (a few hundred bytes are written)."""
MAX_ERROR = 4096
"""The most characters of an error message kept."""
# "@shell(call_1): {"command": "ls"}" on a line of its own: the tool, its call id; its arguments follow.
_TOOL_CALL = re.compile(r"^@([A-Za-z0-9_.-]+)\(([^)\n]*)\):[ ]?", re.MULTILINE)
_FIGURES = {
    "input_tokens": "input",
    "output_tokens": "output",
    "cache_read_tokens": "cache_read",
    "reasoning_tokens": "reasoning",
}


def usage_of(metadata: Any) -> Usage:
    """An assistant message's usage; a figure that is there but not a count is unknown."""
    usage = message_usage(metadata)
    figures = obj(obj(metadata).get("usage"))
    wrong = frozenset(
        name for key, name in _FIGURES.items() if key in figures and int_or_none(figures[key]) is None
    )
    if not wrong:
        return usage
    values = {name: getattr(usage, name) for name in FIGURES if name not in wrong}
    return Usage(**values, unknown=wrong)


def split_calls(content: str) -> tuple[str, list[ToolCall]]:
    """An assistant message's text before its first tool call, and its calls (``tool`` format)."""
    found = list(_TOOL_CALL.finditer(content))
    if not found:
        return content, []
    calls = []
    for n, match in enumerate(found):
        end = found[n + 1].start() if n + 1 < len(found) else len(content)
        name, call_id = match.groups()
        raw = content[match.end() : end].strip()
        calls.append(ToolCall(name=name, call_id=call_id or None, input=json_arguments(raw)))
    return content[: found[0].start()], calls


def config_of(folder: Path) -> dict[str, Any]:
    """The ``[chat]`` table of the ``config.toml`` in a conversation's folder, bounded; else empty."""
    try:
        data = read_regular(folder / "config.toml", CONFIG_LIMIT + 1)
    except OSError:
        return {}
    if len(data) > CONFIG_LIMIT:
        return {}
    try:
        return obj(tomllib.loads(data.decode("utf-8", "replace")).get("chat"))
    except (ValueError, RecursionError):  # not TOML, or a number Python will not convert
        return {}


def workspace_of(folder: Path) -> str | None:
    """Where the ``workspace`` link in a conversation's folder points (read, not followed)."""
    try:
        return str((folder / "workspace").readlink()) or None
    except (OSError, ValueError):
        return None


class GptmeTranscripts(JsonLinesReader):
    """Reads ``*/conversation.jsonl``."""

    needles = (b'"usage"',)

    def line(self, reading: Reading, number: int, data: dict[str, Any]) -> Iterator[TraceItem]:
        session = reading.path.parent.name or reading.path.stem
        info = reading.meta.get(session)
        if info is None:
            info = reading.meta[session] = SessionMeta(session)
        role = data.get("role")
        metadata = obj(data.get("metadata"))
        timestamp = str_or_none(data.get("timestamp"))
        model = text_or_none(metadata.get("model")) if role == "assistant" else None
        info.saw(timestamp, model)
        if not reading.state.get("started") and not reading.usage_only:  # the log has no header line
            reading.state["started"] = True
            yield TraceEvent(session, SessionStarted(session_id=session), timestamp, line=number)
        if role == "assistant":
            if not reading.usage_only:
                yield from _assistant(session, number, timestamp, model, data.get("content"))
            usage = usage_of(metadata)
            if usage.reported:
                digest = text_or_none(metadata.get("input_log_digest"))
                key = f"{timestamp}#{digest}" if timestamp and digest else timestamp
                yield TraceEvent(session, UsageReport(usage=usage), timestamp, model, number, key)
            return
        if reading.usage_only:
            return
        event: Event
        content = data.get("content")
        if role == "user" and isinstance(content, str):
            event = UserText(text=content)
        elif role == "system" and text_or_none(data.get("call_id")):
            event = ToolResult(
                call_id=data["call_id"],
                output=content if isinstance(content, str) else None,
                is_error=metadata.get("error") is True,
            )
        elif role == "system" and metadata.get("error") is True:
            message = text_or_none(content) or "gptme error"
            event = ErrorEvent(
                message=message[:MAX_ERROR], fatal=int_or_none(metadata.get("exit_code")) not in (None, 0)
            )
        else:
            raw = orjson.dumps(data).decode()
            event = Record(raw, record_type=f"message.{role}" if isinstance(role, str) else "message")
        yield TraceEvent(session, event, timestamp, line=number)

    def end(self, reading: Reading) -> None:
        """The title and the work dir: the conversation's folder says, not its log."""
        folder = reading.path.parent
        for info in reading.meta.values():
            config = config_of(folder)
            info.title = text_or_none(config.get("name"))
            info.cwd = workspace_of(folder) or text_or_none(config.get("workspace"))


def _assistant(
    session: str, number: int, timestamp: str | None, model: str | None, content: Any
) -> Iterator[TraceEvent]:
    if not isinstance(content, str):
        return
    text, calls = split_calls(content)
    if text.strip():
        yield TraceEvent(session, AssistantText(text=text), timestamp, model, number)
    for call in calls:
        yield TraceEvent(session, call, timestamp, model, number)
