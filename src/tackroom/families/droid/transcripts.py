"""Factory Droid's session logs: ``sessions/<cwd with dashes>/<session id>.jsonl`` under ``~/.factory``.

One JSON object per line (verified on 0.215.0). The first line is
``session_start`` (``id``, ``title``, ``cwd``); then ``message`` lines
(``id``, ``parentId``, ``timestamp``, and an Anthropic-shaped ``message``:
``role``, ``content`` blocks ``text``, ``thinking``, ``tool_use``,
``tool_result``; an assistant's ``modelId``). A user message droid writes for
the model only (``visibility: "llm_only"``: its system reminders, the
AGENTS.md files) is not the user's words: it is kept as a raw record, as is a
``thinking`` block and every other line type (``agent_turn_outcome``,
``todo_state``, ``compaction_state``, ``session_title_updated``, and whatever
a new release adds).

Usage: none. The log carries no figure per model call; droid keeps only the
session's running totals (``tokenUsage``) and the last call's
(``lastCallTokenUsage``) in the ``<session id>.settings.json`` beside it,
rewritten in place. A running total is not a call, and the calls before the
last cannot be told apart from it, so no usage is reported from here (a run's
own usage comes from its stream: :mod:`tackroom.families.droid`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from tackroom.families.base import obj, seq, str_or_none, text_or_none
from tackroom.trace.events import (
    AssistantText,
    Event,
    Record,
    SessionStarted,
    ToolCall,
    ToolResult,
    UserText,
)
from tackroom.trace.lines import JsonLinesReader, Reading
from tackroom.trace.model import SessionMeta, TraceEvent, TraceItem


def _text(content: Any) -> str | None:
    """A message's or a tool result's text: a plain string, or its text blocks joined."""
    if isinstance(content, str):
        return content
    texts = [
        t for b in seq(content) if obj(b).get("type") == "text" and isinstance(t := obj(b).get("text"), str)
    ]
    return "".join(texts) if texts else None


class DroidTranscripts(JsonLinesReader):
    """Reads ``*/<session id>.jsonl``."""

    # No line carries usage: the fast path only needs the header that names the session.
    needles = (b'"session_start"',)

    def line(self, reading: Reading, number: int, data: dict[str, Any]) -> Iterator[TraceItem]:
        state, meta = reading.state, reading.meta
        kind = str_or_none(data.get("type"))
        timestamp = str_or_none(data.get("timestamp"))
        if kind == "session_start" and "session" not in state:
            state["session"] = text_or_none(data.get("id")) or reading.path.stem
            state["cwd"] = text_or_none(data.get("cwd"))
            state["title"] = text_or_none(data.get("title"))
        session = str_or_none(state.get("session")) or reading.path.stem
        info = meta.get(session)
        if info is None:
            info = meta[session] = SessionMeta(session, cwd=str_or_none(state.get("cwd")))
            info.title = str_or_none(state.get("title"))
        if kind == "session_title_updated":
            info.title = text_or_none(data.get("title")) or info.title
        message = obj(data.get("message")) if kind == "message" else {}
        model = text_or_none(message.get("modelId")) if message.get("role") == "assistant" else None
        info.saw(timestamp, model)
        if reading.usage_only:
            return
        if kind == "session_start":
            yield TraceEvent(session, SessionStarted(session_id=session), timestamp, line=number)
        for event in _events(kind, message, data):
            yield TraceEvent(session, event, timestamp, model, number)


def _events(kind: str | None, message: dict[str, Any], data: dict[str, Any]) -> list[Event]:
    role = message.get("role")
    if message.get("visibility") == "llm_only":
        return [Record(orjson.dumps(data).decode(), record_type="message.llm_only")]
    if kind != "message" or role not in ("user", "assistant"):
        return [_record(kind, data, role)]
    content = message.get("content")
    if isinstance(content, str):
        return [UserText(text=content) if role == "user" else AssistantText(text=content)]
    events: list[Event] = []
    for block in seq(content):
        block = obj(block)
        part = block.get("type")
        if part == "text" and isinstance(text := block.get("text"), str):
            if text:
                events.append(UserText(text=text) if role == "user" else AssistantText(text=text))
        elif part == "tool_use" and role == "assistant":
            name = str_or_none(block.get("name")) or ""
            events.append(
                ToolCall(name=name, call_id=text_or_none(block.get("id")), input=block.get("input"))
            )
        elif part == "tool_result" and role == "user":
            events.append(
                ToolResult(
                    call_id=text_or_none(block.get("tool_use_id")),
                    output=_text(block.get("content")),
                    is_error=block.get("is_error") is True,
                )
            )
        else:  # thinking, an image, a block a new release adds
            raw = orjson.dumps(block).decode()
            events.append(Record(raw, record_type=f"{role}.{part}" if isinstance(part, str) else str(role)))
    return events


def _record(kind: str | None, data: dict[str, Any], role: Any) -> Record:
    raw = orjson.dumps(data).decode()
    if kind == "message":
        return Record(raw, record_type=f"message.{role}" if isinstance(role, str) else "message")
    return Record(raw, record_type=kind)
