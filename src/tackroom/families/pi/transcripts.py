"""Pi's and OMP's session logs: ``sessions/<cwd slug>/<time>_<uuid>.jsonl`` under the agent dir.

One JSON object per line (verified on pi 0.73.1 and omp 18.2.3). The first
line is the ``session`` header (``id``, ``cwd``, ``timestamp``, and
``parentSession``, the parent's file, for a fork or a subagent); omp writes a
``title`` line before it, padded so that it can be rewritten in place. Every
other line is an entry of the session tree (``id``, ``parentId``,
``timestamp``): ``message`` (a ``user``, ``assistant`` or ``toolResult``
message; an assistant one has its text, ``toolCall`` blocks, ``model`` and
``usage``), ``model_change``, ``thinking_level_change``, ``compaction``,
``branch_summary``, ``custom``, ``custom_message``, ``label``,
``session_info`` (the session's name) and omp's ``session_init`` (a
subagent's system prompt, task and agent name). What is not a message is kept
as a raw record.

OMP writes a subagent's session into a directory named after its parent's
file (``<time>_<uuid>/<task name>.jsonl``); its header names the parent's
file as ``parentSession``. ``pi --fork`` (and ``/fork``, ``/clone``) copies
the parent's entries verbatim into a new file with such a header: the copies
are older than the new header, so they are the fork's history but not its
spending. Their usage is left out (the session that made the call has it),
and every call's key (the entry id and time, which the copy keeps) is the
same in both files anyway.

Usage is pi's own (:func:`~tackroom.families.pi.stream.pi_usage`): ``input`` is
already uncached, an all-zero usage (an aborted call) is not reported, and a
zero cache write is no figure; a figure that is there but not a count is
unknown. A call's key is its entry's id and time.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import orjson

from tackroom.families.base import int_or_none, obj, seq, str_or_none
from tackroom.families.pi.stream import failure, pi_usage
from tackroom.paths import open_regular
from tackroom.trace import jsonl
from tackroom.trace.events import (
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

TITLE_LIMIT = 64 * 1024
"""The most read of omp's title line when looking at it again."""


def session_of(path: str) -> str | None:
    """The session id in a session file's name (``<time>_<uuid>.jsonl``), e.g. a ``parentSession``."""
    name = PurePosixPath(path).name
    if not name.endswith(".jsonl") or "_" not in name:
        return None
    return name.removesuffix(".jsonl").rpartition("_")[2] or None


_FIGURES = {"input": "input", "output": "output", "cacheRead": "cache_read", "cacheWrite": "cache_write"}


def usage_of(data: Any) -> Usage:
    """An assistant message's usage; a figure that is there but not a count (``"12"``) is unknown."""
    usage = pi_usage(data)
    wrong = frozenset(
        name for key, name in _FIGURES.items() if key in obj(data) and int_or_none(obj(data)[key]) is None
    )
    if not wrong:
        return usage
    values = {name: getattr(usage, name) for name in _FIGURES.values() if name not in wrong}
    return Usage(**values, unknown=wrong)


def _title(path: Path) -> str | None:
    """The title on omp's first line, as it is now."""
    try:
        with open_regular(path) as handle:
            first = handle.readline(TITLE_LIMIT)
    except OSError:
        return None
    data = jsonl.parse(first)
    if isinstance(data, str) or data.get("type") != "title":
        return None
    return str_or_none(data.get("title")) or None


def _text(content: Any) -> str | None:
    """A message's text: a plain string, or its text blocks joined."""
    if isinstance(content, str):
        return content
    blocks = [b for b in seq(content) if isinstance(b, dict) and b.get("type") == "text"]
    texts = [t for b in blocks if isinstance(t := b.get("text"), str)]
    return "".join(texts) if texts else None


class PiTranscripts(JsonLinesReader):
    """Reads pi's and omp's ``*.jsonl`` session files, subagents' too."""

    needles = (b'"usage"', b'"type":"session"', b'"type": "session"')  # the calls, and the header
    head = 2
    """Lines always parsed on the fast path: omp's title line and the session header."""

    def begin(self, reading: Reading) -> None:
        """omp rewrites its title line in place (its padding keeps the offsets): each read looks again."""
        state = reading.state
        session = state.get("session")
        if state.get("titled") and isinstance(session, str) and (title := _title(reading.path)):
            info = reading.meta[session] = self._meta(session, state)
            info.title = title

    def line(self, reading: Reading, number: int, data: dict[str, Any]) -> Iterator[TraceItem]:
        kind = str_or_none(data.get("type"))
        timestamp = str_or_none(data.get("timestamp"))
        if kind == "session" and "session" not in reading.state:
            yield from self._header(reading, number, data)
            return
        path, state, meta, usage_only = reading.path, reading.state, reading.meta, reading.usage_only
        session = state.get("session")
        if not isinstance(session, str):
            if kind == "title" and number == 1:
                # omp's title line comes before the header that names the session: kept until it arrives.
                state["title"] = [number, timestamp, orjson.dumps(data).decode()]
                state["titled"] = True
                return
            session = session_of(path.name) or path.stem  # a file without a header: its name says
        info = meta.get(session)
        if info is None:
            info = meta[session] = self._meta(session, state)
        if kind == "title":
            info.title = str_or_none(data.get("title")) or info.title
        elif kind == "session_info":
            info.title = str_or_none(data.get("name")) or info.title
        elif kind == "session_init" and not info.agent:
            state["agent"] = info.agent = str_or_none(data.get("agent"))
        message = obj(data.get("message")) if kind == "message" else {}
        model = str_or_none(message.get("model")) if message.get("role") == "assistant" else None
        since = state.get("since")
        # A fork's copy of its parent's history is older than its header: it does not widen its window.
        copied = isinstance(since, str) and timestamp is not None and timestamp < since
        info.saw(None if copied else timestamp, model)
        if kind == "message":
            yield from self._message(session, number, timestamp, data, message, model, copied, usage_only)
        elif not usage_only:
            raw = orjson.dumps(data).decode()
            yield TraceEvent(session, Record(raw, record_type=kind), timestamp, line=number)

    @staticmethod
    def _meta(session: str, state: dict[str, Any]) -> SessionMeta:
        info = SessionMeta(session, cwd=str_or_none(state.get("cwd")))
        info.parent_id = str_or_none(state.get("parent"))
        info.agent = str_or_none(state.get("agent"))
        return info

    def _header(self, reading: Reading, number: int, data: dict[str, Any]) -> Iterator[TraceItem]:
        path, state, meta, usage_only = reading.path, reading.state, reading.meta, reading.usage_only
        timestamp = str_or_none(data.get("timestamp"))
        session = str_or_none(data.get("id")) or session_of(path.name) or path.stem
        state["session"] = session
        state["since"] = timestamp
        state["cwd"] = str_or_none(data.get("cwd"))
        parent_file = str_or_none(data.get("parentSession"))
        if parent_file:
            state["parent"] = session_of(parent_file)
        info = meta.get(session)
        if info is None:
            info = meta[session] = self._meta(session, state)
        else:  # omp's title line came first
            info.cwd, info.parent_id = state["cwd"], state.get("parent")
        info.saw(timestamp)
        yield TraceEvent(session, SessionStarted(session_id=session), timestamp, line=number)
        title = state.pop("title", None)
        if isinstance(title, list) and len(title) == 3:
            line, stamp, raw = title
            info.title = str_or_none(obj(orjson.loads(raw)).get("title")) or info.title
            if not usage_only:
                yield TraceEvent(session, Record(raw, record_type="title"), stamp, line=line)
        if not usage_only:
            raw = orjson.dumps(data).decode()
            yield TraceEvent(session, Record(raw, record_type="session"), timestamp, line=number)

    def _message(
        self,
        session: str,
        number: int,
        timestamp: str | None,
        data: dict[str, Any],
        message: dict[str, Any],
        model: str | None,
        copied: bool,
        usage_only: bool,
    ) -> Iterator[TraceEvent]:
        role = message.get("role")
        if role == "assistant":
            if not usage_only:
                yield from _assistant(session, number, timestamp, message, model)
            # A fork's copy of its parent's history is its history, not its spending.
            usage = usage_of(message.get("usage"))
            if usage.reported and not copied:
                entry = str_or_none(data.get("id"))
                key = f"{entry}@{timestamp}" if entry else None
                yield TraceEvent(session, UsageReport(usage=usage), timestamp, model, number, key)
            return
        if usage_only:
            return
        event: Event
        if role == "user":
            event = UserText(text=_text(message.get("content")) or "")
        elif role == "toolResult":
            event = ToolResult(
                call_id=str_or_none(message.get("toolCallId")),
                output=_text(message.get("content")),
                is_error=message.get("isError") is True,
            )
        else:  # bashExecution, custom, branchSummary, compactionSummary, omp's developer, ...
            raw = orjson.dumps(data).decode()
            event = Record(raw, record_type=f"message.{role}" if isinstance(role, str) else "message")
        yield TraceEvent(session, event, timestamp, line=number)


def _assistant(
    session: str, number: int, timestamp: str | None, message: dict[str, Any], model: str | None
) -> Iterator[TraceEvent]:
    for block in seq(message.get("content")):
        block = obj(block)
        kind = block.get("type")
        if kind == "text" and isinstance(text := block.get("text"), str) and text:
            yield TraceEvent(session, AssistantText(text=text), timestamp, model, number)
        elif kind == "toolCall":
            call = ToolCall(
                name=str_or_none(block.get("name")) or "",
                call_id=str_or_none(block.get("id")),
                input=block.get("arguments"),
            )
            yield TraceEvent(session, call, timestamp, model, number)
    error = failure(message)
    if error:
        yield TraceEvent(session, ErrorEvent(message=error, fatal=False), timestamp, model, number)
