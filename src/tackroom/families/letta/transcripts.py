"""Letta Code's local backend store: ``conversations/<b64>/messages.jsonl`` under its store dir.

Verified on 0.25.9 (``--backend local``). A conversation is a directory named
after its key in base64url (``conversation:local-conv-1``, or
``default:<agent id>`` for the agent's default conversation, often empty):
``messages.jsonl`` (one pi-ai message a line, the same messages pi logs),
``conversation.json`` (``id``, ``agent_id``, ``summary``), ``manifest.json``
(``created_at``, a clock time) and ``system-prompt.json``. Letta rewrites
``messages.jsonl`` whole after each message, and may replace its last
assistant message with a later snapshot of it, so it is read whole when it
changed (``incremental = False``).

The session is the agent (``agent_id`` of ``conversation.json``, else the
folder's name): what ``letta -p --output-format stream-json`` calls its
``session_id``, and what ``-a`` resumes. Each conversation of an agent is
part of its session. A subagent (the ``Agent`` tool) is a child ``letta``
process with an agent of its own in the same store, which records no parent
(only the child's environment does): its session stands alone.

Mapped: a ``user`` message (each text block that is a ``<system-reminder>``
letta added is kept as a raw record, the others are the user's text), an
``assistant`` message (``text``, ``toolCall`` blocks with ``id``, ``name``,
``arguments``; a ``stopReason`` of ``error`` or ``aborted`` is an error, its
``errorMessage`` the message) and a ``toolResult`` (``toolCallId``,
``content``, ``isError``). Every other block (``thinking``, ``image``) and
role is kept as a raw record. A model call that failed outright is not in the
store (only the user's message is).

Times: an assistant message's ``timestamp`` (epoch milliseconds) is the
clock's. Every message's ``metadata.created_at`` is not: letta stamps it from
a counter (``2026-01-01T00:00:00Z`` plus the message's number, in seconds),
and a user's or tool result's ``timestamp`` is that counter too, so a time
equal to ``created_at`` is no time. The session starts at ``manifest.json``'s
``created_at``.

Usage is per model call, the assistant message's ``usage`` (pi-ai's, read as
pi's :func:`~tackroom.families.pi.transcripts.usage_of`): ``input`` already
leaves out the cached part (``cacheRead``), a zero ``cacheWrite`` is no figure
(Chat Completions has none), no reasoning figure is written, an all-zero usage
is none; a figure that is there but not a count is unknown. A call's key is
its ``responseId``, else the message's id. ``metadata.provider.usage`` repeats
it and is not read again.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from tackroom.families.base import obj, seq, str_or_none, text_or_none
from tackroom.families.opencode.transcripts import iso
from tackroom.families.openhands.transcripts import read_json
from tackroom.families.pi.stream import failure
from tackroom.families.pi.transcripts import usage_of
from tackroom.trace.events import (
    AssistantText,
    ErrorEvent,
    Event,
    Record,
    SessionStarted,
    ToolCall,
    ToolResult,
    UsageReport,
    UserText,
)
from tackroom.trace.lines import JsonLinesReader, Reading
from tackroom.trace.model import SessionMeta, TraceEvent, TraceItem

MAX_SIDE = 1024 * 1024
"""The largest ``conversation.json`` or ``manifest.json`` read (a few hundred bytes are written)."""
MAX_ERROR = 4096
"""The most characters of an error message kept."""
REMINDER = "<system-reminder>"


def _dump(value: Any) -> str:
    try:
        return orjson.dumps(value).decode()
    except (TypeError, orjson.JSONEncodeError):  # a value orjson cannot write (a nesting too deep)
        return ""


def _text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    texts = [
        t for b in seq(content) if obj(b).get("type") == "text" and isinstance(t := obj(b).get("text"), str)
    ]
    return "".join(texts) if texts else None


class LettaTranscripts(JsonLinesReader):
    """Reads ``conversations/*/messages.jsonl`` with the ``conversation.json`` beside it."""

    incremental = False  # every line is parsed on the usage path too: a conversation is read whole anyway

    def begin(self, reading: Reading) -> None:
        folder = reading.path.parent
        conversation = read_json(folder / "conversation.json", MAX_SIDE)
        manifest = read_json(folder / "manifest.json", MAX_SIDE)
        conversation = conversation if isinstance(conversation, dict) else {}
        session = text_or_none(conversation.get("agent_id")) or folder.name
        info = reading.meta[session] = SessionMeta(session, title=text_or_none(conversation.get("summary")))
        if isinstance(manifest, dict):
            info.saw(str_or_none(manifest.get("created_at")))
        reading.state["session"] = session

    def line(self, reading: Reading, number: int, data: dict[str, Any]) -> Iterator[TraceItem]:
        session: str = reading.state["session"]
        info = reading.meta[session]
        role = data.get("role")
        timestamp = iso(data.get("timestamp"))
        if timestamp is not None and timestamp == obj(data.get("metadata")).get("created_at"):
            timestamp = None  # the store's counter, not a clock
        model = text_or_none(data.get("model")) if role == "assistant" else None
        info.saw(timestamp, model)
        if not reading.state.get("started") and not reading.usage_only:
            reading.state["started"] = True
            yield TraceEvent(session, SessionStarted(session_id=session), info.started, line=number)
        if not reading.usage_only:
            for event in _events(role, data):
                yield TraceEvent(session, event, timestamp, model, number)
        if role == "assistant":
            usage = usage_of(data.get("usage"))
            if usage.reported:
                key = text_or_none(data.get("responseId")) or text_or_none(data.get("id"))
                yield TraceEvent(session, UsageReport(usage=usage), timestamp, model, number, key)


def _events(role: Any, data: dict[str, Any]) -> list[Event]:
    events: list[Event] = []
    content = data.get("content")
    if role == "user":
        texts = []
        for block in [{"type": "text", "text": content}] if isinstance(content, str) else seq(content):
            text = obj(block).get("text")
            if obj(block).get("type") == "text" and isinstance(text, str) and not text.startswith(REMINDER):
                texts.append(text)
            else:
                kind = obj(block).get("type")
                reminder = kind == "text" and isinstance(text, str)
                record_type = (
                    "system_reminder"
                    if reminder
                    else f"content.{kind}"
                    if isinstance(kind, str)
                    else "content"
                )
                events.append(Record(_dump(block), record_type=record_type))
        if texts:
            events.append(UserText(text="".join(texts)))
    elif role == "assistant":
        for block in [{"type": "text", "text": content}] if isinstance(content, str) else seq(content):
            kind = obj(block).get("type")
            text = obj(block).get("text")
            if kind == "text" and isinstance(text, str):
                if text:
                    events.append(AssistantText(text=text))
            elif kind == "toolCall":
                call = obj(block)
                name = str_or_none(call.get("name")) or ""
                events.append(
                    ToolCall(name=name, call_id=text_or_none(call.get("id")), input=call.get("arguments"))
                )
            else:
                events.append(
                    Record(
                        _dump(block), record_type=f"content.{kind}" if isinstance(kind, str) else "content"
                    )
                )
        error = failure(data)
        if error:
            events.append(ErrorEvent(message=error[:MAX_ERROR], fatal=False))
    elif role == "toolResult":
        events.append(
            ToolResult(
                call_id=text_or_none(data.get("toolCallId")),
                output=_text(content),
                is_error=data.get("isError") is True,
            )
        )
    else:
        events.append(
            Record(_dump(data), record_type=f"message.{role}" if isinstance(role, str) else "message")
        )
    return events
