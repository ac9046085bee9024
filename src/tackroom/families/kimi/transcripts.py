"""Kimi CLI's session logs: ``sessions/<md5 of the workdir>/<session id>/wire.jsonl`` under its share dir.

One JSON object per line (verified on 1.51.0). The first line is
``{"type": "metadata", "protocol_version"}``; every other line is a wire
message with its time in epoch seconds (a float, written here as ISO 8601
UTC): ``{"timestamp", "message": {"type", "payload"}}``. Mapped: ``TurnBegin``
(the user's input: text or content parts), ``ContentPart`` of type ``text``,
``ToolCall`` (OpenAI's shape, arguments as JSON text), ``ToolResult``
(``return_value``: ``is_error``, ``output``) and ``StatusUpdate``, one per
model call. Every other type (``StepBegin``, ``StepInterrupted``,
``StepRetry``, ``TurnEnd``, ``CompactionBegin``, ``HookTriggered``,
``ApprovalRequest``, a ``think`` part, and whatever a new release adds) is
kept as a raw record.

A subagent (the ``Agent`` tool) writes its own log,
``<session>/subagents/<agent id>/wire.jsonl``, with a ``meta.json`` naming its
type; that log is its session, ``<session>-agent-<agent id>``, whose parent is
the session above it. The parent's log carries a copy of every line of it,
wrapped in a ``SubagentEvent``: kept there as a raw record, never as usage,
so nothing counts twice (the copy's call has the same ``message_id`` anyway).

Usage is the family's :func:`~tackroom.families.kimi.stream.token_usage`, per model
call: ``input_other`` is already the input less the cache read,
``input_cache_read`` is apart from it. ``input_cache_creation`` is 0 over Chat
Completions, which has no such figure, so a zero is no figure (a positive
one, from a wire that has it, is the cache write). The log keeps no reasoning
figure and no model. A figure that is there but not a count is unknown. A
call's key is its ``message_id``.

The session's title is ``custom_title`` in the ``state.json`` beside its log;
its working directory is the path in the share dir's ``kimi.json`` whose md5
names the directory above the session.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from tackroom.families.base import int_or_none, json_arguments, obj, seq, str_or_none, text_or_none
from tackroom.families.kimi.stream import content_text, token_usage
from tackroom.paths import read_regular
from tackroom.trace.events import (
    FIGURES,
    AssistantText,
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

SIDE_FILE_LIMIT = 1024 * 1024
"""The largest ``state.json``, ``meta.json`` or ``kimi.json`` read (a few hundred bytes are written)."""


def iso(seconds: Any) -> str | None:
    """An epoch-seconds time (``1796171141.93719``) as ISO 8601 UTC, or None."""
    if not isinstance(seconds, int | float) or isinstance(seconds, bool):
        return None
    try:
        when = datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return when.isoformat(timespec="microseconds").replace("+00:00", "Z")


def side_json(path: Path) -> dict[str, Any]:
    """A small JSON file beside a log, bounded; anything else is an empty object."""
    try:
        data = read_regular(path, SIDE_FILE_LIMIT + 1)
    except OSError:
        return {}
    if len(data) > SIDE_FILE_LIMIT:
        return {}
    try:
        return obj(orjson.loads(data))
    except orjson.JSONDecodeError:
        return {}


def workdir_of(share: Path, digest: str) -> str | None:
    """The work dir whose md5 is ``digest``, from ``kimi.json``'s ``work_dirs``."""
    for entry in seq(side_json(share / "kimi.json").get("work_dirs")):
        path = str_or_none(obj(entry).get("path"))
        if path and hashlib.md5(path.encode(), usedforsecurity=False).hexdigest() == digest:
            return path
    return None


def usage_of(figures: Any) -> Usage:
    """A ``StatusUpdate``'s ``token_usage``: a zero cache write is no figure, a figure not a count unknown."""
    data = obj(figures)
    usage = token_usage(data)
    write = int_or_none(data.get("input_cache_creation"))
    names = {"input_other": "input", "output": "output", "input_cache_read": "cache_read"}
    wrong = {name for key, name in names.items() if key in data and int_or_none(data[key]) is None}
    if "input_cache_creation" in data and write is None:
        wrong.add("cache_write")
    values = {name: getattr(usage, name) for name in FIGURES if name not in wrong}
    if write and "cache_write" not in wrong:
        values["cache_write"] = write
    return Usage(**values, unknown=frozenset(wrong))


def _place(path: Path) -> tuple[str, str | None, str | None]:
    """A log's session, its parent (for a subagent's) and its agent id, from where it lies."""
    parent = path.parent
    if parent.parent.name == "subagents" and parent.parent.parent.name:
        main = parent.parent.parent.name
        return f"{main}-agent-{parent.name}", main, parent.name
    return parent.name or path.stem, None, None


class KimiTranscripts(JsonLinesReader):
    """Reads ``wire.jsonl``, a session's and each of its subagents'."""

    needles = (b'"StatusUpdate"',)

    def line(self, reading: Reading, number: int, data: dict[str, Any]) -> Iterator[TraceItem]:
        session, parent, _ = _place(reading.path)
        info = reading.meta.get(session)
        if info is None:
            info = reading.meta[session] = SessionMeta(session, parent_id=parent)
        message = obj(data.get("message"))
        kind = str_or_none(message.get("type"))
        payload = obj(message.get("payload"))
        timestamp = iso(data.get("timestamp"))
        info.saw(timestamp)
        if kind == "StatusUpdate":
            usage = usage_of(payload.get("token_usage"))
            if usage.reported:
                key = text_or_none(payload.get("message_id"))
                yield TraceEvent(session, UsageReport(usage=usage), timestamp, None, number, key)
            return
        if reading.usage_only:
            return
        if kind is None and data.get("type") == "metadata":  # the first line, naming the wire's version
            yield TraceEvent(session, SessionStarted(session_id=session), timestamp, line=number)
            kind = "metadata"
        for event in _events(kind, payload, data):
            yield TraceEvent(session, event, timestamp, line=number)

    def end(self, reading: Reading) -> None:
        """What the files beside the log say: the title, the work dir, a subagent's type."""
        path, state = reading.path, reading.state
        session, _, agent = _place(path)
        info = reading.meta.get(session)
        if info is None:
            return
        if agent is not None:
            subagent = side_json(path.with_name("meta.json"))
            info.agent = text_or_none(subagent.get("subagent_type"))
            info.title = text_or_none(subagent.get("description"))
            session_dir = path.parent.parent.parent
        else:
            info.title = text_or_none(side_json(path.with_name("state.json")).get("custom_title"))
            session_dir = path.parent
        if not state.get("cwd"):  # kimi.json grows with every work dir: once found, kept
            cwd = workdir_of(session_dir.parent.parent.parent, session_dir.parent.name)
            if cwd:
                state["cwd"] = cwd
        info.cwd = str_or_none(state.get("cwd"))


def _events(kind: str | None, payload: dict[str, Any], data: dict[str, Any]) -> list[Event]:
    if kind == "TurnBegin" and (text := content_text(payload.get("user_input"))):
        return [UserText(text=text)]
    if kind == "ContentPart" and payload.get("type") == "text" and isinstance(payload.get("text"), str):
        return [AssistantText(text=payload["text"])] if payload["text"] else []
    if kind == "ToolCall":
        function = obj(payload.get("function"))
        return [
            ToolCall(
                name=str_or_none(function.get("name")) or "",
                call_id=text_or_none(payload.get("id")),
                input=json_arguments(function.get("arguments")),
            )
        ]
    if kind == "ToolResult":
        value = obj(payload.get("return_value"))
        output = value.get("output")
        return [
            ToolResult(
                call_id=text_or_none(payload.get("tool_call_id")),
                output=content_text(output) if isinstance(output, str | list) else None,
                is_error=value.get("is_error") is True,
            )
        ]
    record_type = f"ContentPart.{payload.get('type')}" if kind == "ContentPart" else kind
    return [Record(orjson.dumps(data).decode(), record_type=record_type)]
