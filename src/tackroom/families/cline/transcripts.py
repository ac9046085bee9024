"""Cline's sessions: ``<id>/<id>.messages.json`` and ``<id>/<id>.json`` under its sessions dir.

Verified on 3.0.65. A session is a directory named after its id (the id
``cline --id`` resumes; the ``conv_...`` id of the ``--json`` stream is
another, written in neither file). ``<id>.messages.json`` is one JSON object,
``{"version", "updated_at", "agent", "sessionId", "origin", "messages",
"system_prompt"}``, that cline rewrites whole as the session goes on, so it is
read whole when it changed (``incremental = False``); one caught mid-write is
an issue and nothing else, read when it is whole. ``<id>.json`` beside it
(read with the messages: a change to it alone is seen at their next rewrite)
holds what the session is: ``cwd``, ``model``, ``started_at``/``ended_at``,
``status`` and ``metadata.title``. A subagent (``spawn_agent``) writes its
messages into its parent's folder as ``agent_<agent id>.messages.json``, with
no ``<id>.json``: its session is its ``sessionId`` (``<parent>__agent_<id>``),
its parent ``origin.parentThreadId`` (else the folder), its agent ``agent``
(``subagent``). Verified on 3.0.65 by a run whose subagents were stopped
before they wrote a message (the file then holds none).

Each message (``id``, ``role``, ``content`` blocks, ``ts`` in epoch
milliseconds) is a row, ``line`` its place from 1. Mapped blocks: a user's
``text`` (the prompt as cline wrapped it, ``<user_input mode="act">``, kept
as written) and ``tool_result`` (``tool_use_id``, its ``content``, ``is_error``);
an assistant's ``text`` and ``tool_use`` (``id``, ``name``, ``input``). An
assistant message whose ``metadata.displayRole`` is ``error`` is the model
call that failed: an error, fatal when it is the session's last message and
the session ``failed``. A user message whose ``displayRole`` is ``system`` is
cline's, not the user's (a hook's added context, ``<hook_context
source="PostToolUse" ...>``): it is kept as a raw record, ``message.system``.
Every other block (``thinking``, ``reasoning``, ``image``, ``file``, and
whatever a new release adds) and every other role is kept as a raw record.

Usage is per model call, on the assistant message it produced (``metrics``),
keyed by the message's id, its model ``modelInfo.id``. ``inputTokens`` is the
whole prompt, its cached part included (``cacheReadTokens``, and
``cacheWriteTokens`` where the provider reports one: Anthropic's), so both are
subtracted. cline writes a figure its provider did not report as 0, and Chat
Completions has no cache write figure: a zero ``cacheWriteTokens`` is no
figure; a zero ``cacheReadTokens`` is kept as written, as the family's stream
keeps it (the wire has that figure). No reasoning figure is written. The session's ``metadata.usage`` in
``<id>.json`` is the running total of these calls, not a call. A figure that
is there but not a count is unknown.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from tackroom.families.base import int_or_none, obj, seq, str_or_none, text_or_none
from tackroom.families.opencode.transcripts import iso
from tackroom.families.openhands.transcripts import read_json
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
from tackroom.trace.model import Cursor, SessionMeta, TraceEvent, TraceIssue, TraceItem, TranscriptReader

MAX_MESSAGES = 256 * 1024 * 1024
"""A messages file larger than this is not read (its system prompt alone is some 20 KB)."""
MAX_META = 16 * 1024 * 1024
"""A session's ``<id>.json`` larger than this is not read (a few KB are written)."""
MAX_ERROR = 4096
"""The most characters of an error message kept."""
SUFFIX = ".messages.json"


def usage_of(metrics: Any) -> Usage:
    """A message's ``metrics``; a figure that is there but not a count is unknown."""
    data = obj(metrics)
    prompt, read = int_or_none(data.get("inputTokens")), int_or_none(data.get("cacheReadTokens"))
    write = int_or_none(data.get("cacheWriteTokens"))
    names = {
        "inputTokens": ("input",),
        "cacheReadTokens": ("cache_read", "input"),  # the fresh input is the prompt less its cached part
        "cacheWriteTokens": ("cache_write", "input"),
        "outputTokens": ("output",),
    }
    wrong = {
        name
        for key, found in names.items()
        if key in data and int_or_none(data[key]) is None
        for name in found
    }
    fresh = None if prompt is None or read is None else prompt - read - (write or 0)
    values = {
        "input": fresh if read is not None else prompt,
        "output": int_or_none(data.get("outputTokens")),
        "cache_read": read,
        "cache_write": write or None,
    }
    return Usage(
        **{k: v for k, v in values.items() if k not in wrong and k in FIGURES}, unknown=frozenset(wrong)
    )


def _output(content: Any) -> str | None:
    """A tool result's content: its text, else its JSON (cline writes a command's result as objects)."""
    if content is None or isinstance(content, str):
        return content
    parts = seq(content)
    if parts and all(obj(p).get("type") == "text" and isinstance(obj(p).get("text"), str) for p in parts):
        return "".join(p["text"] for p in parts)
    try:
        return orjson.dumps(content).decode()
    except (TypeError, orjson.JSONEncodeError):
        return None


def _record(kind: str, value: Any) -> Record:
    try:
        raw = orjson.dumps(value).decode()
    except (TypeError, orjson.JSONEncodeError):  # a value orjson cannot write (a nesting too deep)
        raw = ""
    return Record(raw, record_type=kind)


def _blocks(role: Any, message: dict[str, Any]) -> list[Event]:
    content = message.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    events: list[Event] = []
    for value in seq(content):
        block = obj(value)
        kind = block.get("type")
        text = block.get("text")
        if kind == "text" and isinstance(text, str) and role in ("user", "assistant"):
            if text:
                events.append(UserText(text=text) if role == "user" else AssistantText(text=text))
        elif kind == "tool_use" and role == "assistant":
            name = text_or_none(block.get("name")) or ""
            events.append(
                ToolCall(name=name, call_id=text_or_none(block.get("id")), input=block.get("input"))
            )
        elif kind == "tool_result" and role == "user":
            events.append(
                ToolResult(
                    call_id=text_or_none(block.get("tool_use_id")),
                    output=_output(block.get("content")),
                    is_error=block.get("is_error") is True,
                )
            )
        else:
            events.append(_record(f"content.{kind}" if isinstance(kind, str) else "content", value))
    return events


class ClineTranscripts(TranscriptReader):
    """Reads ``*/*.messages.json`` and the ``<id>.json`` beside it."""

    incremental = False
    suffixes = (SUFFIX,)

    def read(self, path: Path, cursor: Cursor, *, usage_only: bool = False) -> Iterator[TraceItem]:
        folder = path.parent.name
        stem = path.name.removesuffix(SUFFIX)
        data = read_json(path, MAX_MESSAGES)
        if isinstance(data, str):  # no session (or one caught mid-write): read when it is whole
            yield TraceIssue(path, 0, data)
            return
        about: dict[str, Any] = {}
        if stem == folder or not folder:  # the session's own messages, its <id>.json beside them
            session = stem or folder
            info = SessionMeta(session)
            found = read_json(path.parent / f"{session}.json", MAX_META)
            if isinstance(found, str):
                yield TraceIssue(path, 0, f"{session}.json: {found}")
            else:
                about = found
        else:  # a subagent's: agent_<id>.messages.json in its parent's folder, no <id>.json
            session = text_or_none(data.get("sessionId")) or f"{folder}__{stem}"
            parent = text_or_none(obj(data.get("origin")).get("parentThreadId")) or folder
            info = SessionMeta(session, parent_id=parent, agent=text_or_none(data.get("agent")))
        info.cwd = text_or_none(about.get("cwd"))
        info.title = text_or_none(obj(about.get("metadata")).get("title"))
        model = text_or_none(about.get("model"))
        info.saw(str_or_none(about.get("started_at")), model)
        info.saw(str_or_none(about.get("ended_at")))
        messages = seq(data.get("messages"))
        failed = about.get("status") == "failed"
        items: list[TraceItem] = []
        for number, value in enumerate(messages, start=1):
            if not isinstance(value, dict):
                items.append(TraceIssue(path, number, "a message that is not a JSON object"))
                continue
            role = value.get("role")
            timestamp = iso(value.get("ts"))
            call_model = text_or_none(obj(value.get("modelInfo")).get("id")) if role == "assistant" else None
            info.saw(timestamp, call_model)
            if not usage_only:
                for event in _events(role, value, fatal=failed and number == len(messages)):
                    items.append(TraceEvent(session, event, timestamp, call_model, number))
            if role == "assistant" and "metrics" in value:
                usage = usage_of(value.get("metrics"))
                if usage.reported:
                    key = text_or_none(value.get("id"))
                    items.append(
                        TraceEvent(session, UsageReport(usage=usage), timestamp, call_model, number, key)
                    )
        if not usage_only:
            yield TraceEvent(session, SessionStarted(session_id=session, model=model), info.started, line=0)
        yield from items
        yield info


def _events(role: Any, value: dict[str, Any], *, fatal: bool) -> list[Event]:
    """A message's events: a failed call's error, its blocks, or the message kept raw."""
    shown = obj(value.get("metadata")).get("displayRole")
    if role == "user" and shown == "system":  # cline's own words in the user's turn: a hook's context
        return [_record("message.system", value)]
    if role == "assistant" and shown == "error":
        text = "".join(t for b in seq(value.get("content")) if isinstance(t := obj(b).get("text"), str))
        message = text or str_or_none(value.get("content")) or "cline error"
        return [ErrorEvent(message=message[:MAX_ERROR], fatal=fatal)]
    if role in ("user", "assistant"):
        return _blocks(role, value)
    return [_record(f"message.{role}" if isinstance(role, str) else "message", value)]
