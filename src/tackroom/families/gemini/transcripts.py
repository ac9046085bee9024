"""Gemini CLI's chat logs: ``tmp/<project>/chats/session-<time>-<id8>.jsonl`` under ``~/.gemini``.

Verified on 0.61.0. One JSON object per line:

* a header ``{"sessionId", "projectHash", "startTime", "lastUpdated", "kind"}``
  (``kind`` ``main`` or ``subagent``), written again when the session is
  resumed (``--resume`` appends to the same file);
* ``{"$set": {...}}`` patches of the session object (``lastUpdated``,
  ``summary``: the session's title; on a resume the whole ``messages`` list
  again, without token counts): records;
* messages ``{"id", "timestamp", "type", "content", ...}``: ``user`` (text
  parts, or ``functionResponse`` parts: tool results), ``gemini`` (the model's
  ``content``, ``thoughts``, ``tokens``, ``model``, ``toolCalls``), and
  ``info``, ``warning``, ``error``.

A ``gemini`` message is written again when its tool calls are added (same
``id``, the same tokens): its usage is keyed by the message id, so a report
counts it once, and its text and calls are yielded once.

``tokens`` is ``{input, output, cached, thoughts, tool, total}``: ``input``
includes ``cached`` (Gemini's ``promptTokenCount``) and ``output`` excludes
``thoughts`` (``candidatesTokenCount``), so tackroom's ``input`` is
``input - cached`` and its ``output`` is ``output + thoughts`` (what the model
wrote and is billed for, as OpenAI and Anthropic count it), ``thoughts``
being its reasoning part. ``tool`` (``toolUsePromptTokenCount``, the prompt of
Gemini's own tools such as search grounding, outside ``promptTokenCount``) is
input too. (The stream's ``stats`` leave thoughts out of the output: a run's
usage can be smaller than its trace's by the thoughts.)

A subagent writes its own log, ``chats/<parent session id>/<id>.jsonl``,
whose header says ``kind: "subagent"``: its own session, linked to the parent
named by its directory. The project's root is in ``tmp/<project>/.project_root``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from tackroom.families.base import fresh_input, int_or_none, obj, seq, str_or_none
from tackroom.paths import read_regular
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

ROOT_LIMIT = 4096
SEEN = 32
"""How many recent message ids a cursor remembers, to yield a rewritten message's text and calls once."""


class GeminiTranscripts(JsonLinesReader):
    """Reads ``chats/**/*.jsonl``: main sessions and subagents."""

    needles = (b'"tokens"', b'"sessionId"')  # the calls, and the headers that name the sessions

    def line(self, reading: Reading, number: int, data: dict[str, Any]) -> Iterator[TraceItem]:
        timestamp = str_or_none(data.get("timestamp"))
        kind = str_or_none(data.get("type"))
        if kind is None and "$set" not in data and isinstance(header := data.get("sessionId"), str):
            yield from _header(reading, number, header, data)
            return
        state, meta = reading.state, reading.meta
        session = _session(reading.path, state)
        info = meta.get(session)
        if info is None:
            info = meta[session] = _meta(reading.path, session, state)
        model = str_or_none(data.get("model"))
        info.saw(timestamp, model if kind == "gemini" else None)
        if kind == "gemini":
            yield from _gemini(session, number, timestamp, model, data, state, reading.usage_only)
            return
        if reading.usage_only:
            return
        events: list[Event]
        if kind == "user":
            events = _user(data.get("content"))
        elif kind == "error":
            events = [ErrorEvent(message=_text(data.get("content")) or "", fatal=False)]
        else:
            events = []
            patch = data.get("$set")
            if isinstance(patch, dict) and isinstance(summary := patch.get("summary"), str):
                info.title = summary
        raw = orjson.dumps(data).decode()
        for event in events or [Record(raw, record_type=kind or ("$set" if "$set" in data else None))]:
            yield TraceEvent(session, event, timestamp, line=number)


def _header(reading: Reading, number: int, session: str, data: dict[str, Any]) -> Iterator[TraceItem]:
    state, meta = reading.state, reading.meta
    state.setdefault("session", session)
    if data.get("kind") == "subagent":
        state["subagent"] = True
    info = meta.get(session)
    if info is None:
        info = meta[session] = _meta(reading.path, session, state)
    started = str_or_none(data.get("startTime"))
    info.saw(started)
    # Written when the session starts and again on each resume.
    yield TraceEvent(session, SessionStarted(session_id=session), started, line=number)


def _session(path: Path, state: dict[str, Any]) -> str:
    known = state.get("session")
    return known if isinstance(known, str) else path.stem


def _meta(path: Path, session: str, state: dict[str, Any]) -> SessionMeta:
    info = SessionMeta(session)
    chats = path.parent
    if chats.name != "chats":
        # A subagent's: chats/<parent session id>/<subagent session id>.jsonl
        info.parent_id = chats.name
        chats = chats.parent
    info.cwd = _project_root(chats.parent / ".project_root")
    return info


def _project_root(path: Path) -> str | None:
    try:
        text = read_regular(path, ROOT_LIMIT).decode("utf-8", "replace").strip()
    except OSError:
        return None
    return text if text.startswith("/") and "\n" not in text else None


def _gemini(
    session: str,
    number: int,
    timestamp: str | None,
    model: str | None,
    data: dict[str, Any],
    state: dict[str, Any],
    usage_only: bool,
) -> Iterator[TraceEvent]:
    message_id = str_or_none(data.get("id"))
    if not usage_only:
        yield from _answer(session, number, timestamp, model, message_id, data, state)
    tokens = data.get("tokens")
    if isinstance(tokens, dict):
        usage = gemini_tokens(tokens)
        if usage.reported:
            key = f"gemini:{session}:{message_id}" if message_id else None
            yield TraceEvent(session, UsageReport(usage=usage), timestamp, model, number, key)


def gemini_tokens(tokens: dict[str, Any]) -> Usage:
    """A chat log's ``tokens`` in tackroom's convention (see the module's notes)."""
    cached = int_or_none(tokens.get("cached"))
    output = int_or_none(tokens.get("output"))
    thoughts = int_or_none(tokens.get("thoughts"))
    tool = int_or_none(tokens.get("tool"))
    fresh = fresh_input(int_or_none(tokens.get("input")), cached)
    unknown: set[str] = set()
    # A part written but not as a count: the figure it belongs to is known only in part.
    if thoughts is None and tokens.get("thoughts") is not None and output is not None:
        unknown |= {"output", "reasoning"}
    if tool is None and tokens.get("tool") is not None and fresh is not None:
        unknown.add("input")
    return Usage(
        input=None if fresh is None else fresh + (tool or 0),
        output=None if output is None else output + (thoughts or 0),
        cache_read=cached,
        reasoning=thoughts,
        unknown=frozenset(unknown),
    )


def _answer(
    session: str,
    number: int,
    timestamp: str | None,
    model: str | None,
    message_id: str | None,
    data: dict[str, Any],
    state: dict[str, Any],
) -> Iterator[TraceEvent]:
    """The text and tool calls of a ``gemini`` message, each once however often the message is rewritten."""
    seen = state.get("seen")
    if not isinstance(seen, list):
        seen = state["seen"] = []
    done: list[Any] = []
    for entry in seen:
        if isinstance(entry, list) and len(entry) == 2 and entry[0] == message_id:
            done = entry[1] if isinstance(entry[1], list) else []
    parts: list[tuple[str, Event]] = []
    text = _text(data.get("content"))
    if text:
        parts.append(("text", AssistantText(text=text)))
    for call in seq(data.get("toolCalls")):
        call = obj(call)
        call_id = str_or_none(call.get("id"))
        name = str_or_none(call.get("name")) or ""
        parts.append(
            (f"call:{call_id or name}", ToolCall(name=name, call_id=call_id, input=call.get("args")))
        )
    fresh = [(tag, event) for tag, event in parts if tag not in done]
    for _, event in fresh:
        yield TraceEvent(session, event, timestamp, model, number)
    if message_id is not None and fresh:
        seen[:] = [e for e in seen if not (isinstance(e, list) and e and e[0] == message_id)]
        seen.append([message_id, [*done, *(tag for tag, _ in fresh)]])
        del seen[:-SEEN]


def _user(content: Any) -> list[Event]:
    if isinstance(content, str):
        return [UserText(text=content)] if content else []
    events: list[Event] = []
    for part in seq(content):
        part = obj(part)
        if isinstance(text := part.get("text"), str):
            events.append(UserText(text=text))
        elif isinstance(response := part.get("functionResponse"), dict):
            result = obj(response.get("response"))
            output = result.get("output", result.get("error"))
            events.append(
                ToolResult(
                    call_id=str_or_none(response.get("id")),
                    output=output if isinstance(output, str) else orjson.dumps(result).decode(),
                    is_error="error" in result,
                )
            )
    return events


def _text(content: Any) -> str | None:
    """A message's text: a string, or its text parts joined (thought parts left out)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            text
            for part in content
            if isinstance(text := obj(part).get("text"), str) and not obj(part).get("thought")
        )
    return None
