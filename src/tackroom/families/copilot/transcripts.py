"""GitHub Copilot CLI's session logs: ``session-state/<session id>/events.jsonl`` under ``$COPILOT_HOME``.

One JSON object per line (verified on 1.0.102): ``{"type", "data", "id",
"timestamp", "parentId"}``. Mapped: ``session.start`` and ``session.resume``
(a resumed session appends to the same file), ``user.message``,
``assistant.message`` (its ``content`` and ``toolRequests``),
``tool.execution_complete``, ``session.error`` and ``session.usage_record``,
one per model call. Every other type (``system.message``,
``assistant.turn_start``/``turn_end``, ``tool.execution_start``, ``hook.*``,
``subagent.*``, ``session.model_change``, ``session.shutdown`` and whatever a
new release adds) is kept as a raw record. ``session.shutdown`` carries the
session's running totals: a record, never usage, so nothing counts twice.

Usage is :func:`~tackroom.families.copilot.stream.record_usage`: ``inputTokens`` is
the whole prompt, so its cached part is subtracted. A call's key is its
``accounting`` source session and sequence number (else the line's id): the
same call written again counts once.

A subagent runs inside the same file: its lines carry a top-level
``agentId``. They are a session of their own, ``agent-<agentId>``, whose
parent is the file's session and whose agent is the name ``subagent.started``
gives. The session's title is the ``name`` in the ``workspace.yaml`` beside
its log.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import yaml

from tackroom.families.base import int_or_none, obj, seq, str_or_none
from tackroom.families.copilot.stream import record_usage, tool_output
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

WORKSPACE_LIMIT = 64 * 1024
"""The largest ``workspace.yaml`` read (a few hundred bytes are written)."""
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def workspace_name(path: Path) -> str | None:
    """The session's name in its ``workspace.yaml`` (its first prompt, or the name a user gave it)."""
    try:
        text = read_regular(path, WORKSPACE_LIMIT + 1)
    except OSError:
        return None
    if len(text) > WORKSPACE_LIMIT:
        return None
    try:
        data = yaml.load(text, Loader=_Loader)
    except yaml.YAMLError:
        return None
    return _nonempty(obj(data).get("name"))


def _nonempty(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


class CopilotTranscripts(JsonLinesReader):
    """Reads ``*/events.jsonl``, a session's subagents included."""

    # The calls, the subagents' names and the sessions' starts: all usage needs.
    needles = (b'"session.usage_record"', b'"subagent.started"', b'"session.start"')

    def line(self, reading: Reading, number: int, record: dict[str, Any]) -> Iterator[TraceItem]:
        path, state, meta = reading.path, reading.state, reading.meta
        kind = str_or_none(record.get("type"))
        data = obj(record.get("data"))
        timestamp = str_or_none(record.get("timestamp"))
        if kind == "session.start" and "session" not in state:
            state["session"] = _nonempty(data.get("sessionId"))
        # events.jsonl sits in a directory named after the session (older releases wrote <session>.jsonl).
        main = _nonempty(state.get("session")) or (
            path.parent.name if path.name == "events.jsonl" else path.stem
        )
        agent = _nonempty(record.get("agentId"))
        session = f"agent-{agent}" if agent else main
        if kind == "subagent.started" and agent:
            agents = state.setdefault("agents", {})
            if isinstance(agents, dict):
                agents[agent] = _nonempty(data.get("agentName")) or _nonempty(data.get("agentType"))
        info = meta.get(session)
        if info is None:
            info = meta[session] = SessionMeta(session)
            if agent:  # a subagent works where its session does
                info.parent_id, info.cwd = main, str_or_none(state.get("cwd"))
                info.agent = str_or_none(obj(state.get("agents")).get(agent))
        if kind in ("session.start", "session.resume"):
            info.cwd = str_or_none(obj(data.get("context")).get("cwd")) or info.cwd
            state["cwd"] = info.cwd
        model = _nonempty(data.get("model"))
        if kind == "session.usage_record":
            usage = obj(data.get("usage"))
            model = _nonempty(usage.get("model")) or model
            info.saw(timestamp, model)
            yield from _usage(session, number, timestamp, record, usage, model)
            return
        info.saw(timestamp, model)
        if reading.usage_only:
            return
        for event in _events(kind, data, session, record):
            yield TraceEvent(session, event, timestamp, model, number)

    def end(self, reading: Reading) -> None:
        """The main session's title: its ``workspace.yaml`` names it, not its log."""
        if reading.path.name != "events.jsonl":
            return
        for info in reading.meta.values():
            if info.parent_id is None and info.title is None:
                info.title = workspace_name(reading.path.with_name("workspace.yaml"))


_FIGURES = {
    "inputTokens": ("input",),
    "outputTokens": ("output",),
    "cacheReadTokens": ("cache_read", "input"),  # the uncached input is the prompt less this
    "cacheWriteTokens": ("cache_write",),
    "reasoningTokens": ("reasoning",),
}


def usage_of(usage: dict[str, Any]) -> Usage:
    """A usage record's figures; one that is there but not a count (``"100"``) is unknown, not absent."""
    figures = record_usage(usage)
    wrong = {
        name
        for key, names in _FIGURES.items()
        if key in usage and int_or_none(usage[key]) is None
        for name in names
    }
    if not wrong:
        return figures
    values = {name: getattr(figures, name) for name in FIGURES if name not in wrong}
    return Usage(**values, unknown=frozenset(wrong))


def _usage(
    session: str,
    number: int,
    timestamp: str | None,
    record: dict[str, Any],
    usage: dict[str, Any],
    model: str | None,
) -> Iterator[TraceEvent]:
    figures = usage_of(usage)
    if not figures.reported:
        return
    accounting = obj(usage.get("accounting"))
    source, sequence = _nonempty(accounting.get("sourceSessionId")), int_or_none(accounting.get("sequence"))
    key = f"{source}:{sequence}" if source and sequence is not None else _nonempty(record.get("id"))
    yield TraceEvent(session, UsageReport(usage=figures), timestamp, model, number, key)


def _events(kind: str | None, data: dict[str, Any], session: str, record: dict[str, Any]) -> list[Event]:
    if kind in ("session.start", "session.resume"):
        # A resume's log names no session: it is the file's.
        started = SessionStarted(
            session_id=_nonempty(data.get("sessionId")) or session, model=_nonempty(data.get("selectedModel"))
        )
        return [started, Record(orjson.dumps(record).decode(), record_type=kind)]
    if kind == "user.message" and isinstance(data.get("content"), str):
        return [UserText(text=data["content"])]
    if kind == "assistant.message":
        events: list[Event] = []
        if text := _nonempty(data.get("content")):
            events.append(AssistantText(text=text))
        for request in seq(data.get("toolRequests")):
            request = obj(request)
            events.append(
                ToolCall(
                    name=str_or_none(request.get("name")) or "",
                    call_id=_nonempty(request.get("toolCallId")),
                    input=request.get("arguments"),
                )
            )
        return events
    if kind == "tool.execution_complete":
        return [
            ToolResult(
                call_id=_nonempty(data.get("toolCallId")),
                output=tool_output(data),
                is_error=data.get("success") is not True,
            )
        ]
    if kind == "session.error":
        message = (
            _nonempty(data.get("message")) or _nonempty(data.get("errorType")) or "copilot session error"
        )
        return [ErrorEvent(message=message, fatal=True)]
    return [Record(orjson.dumps(record).decode(), record_type=kind)]
