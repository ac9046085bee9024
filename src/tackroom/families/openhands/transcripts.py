"""OpenHands' conversations: ``conversations/<id>/base_state.json`` and the events beside it.

Verified on 1.16.0. A conversation is a directory named after its id (hex):
``base_state.json`` (the agent's config, its model, the workspace, and
``stats``) and ``events/event-<n>-<uuid>.json``, one JSON object per event,
``n`` counting from 0. The reader's file is ``base_state.json`` (OpenHands
rewrites it as the conversation goes on, so it is read whole when it changed,
``incremental = False``); the events are read beside it, in their order, each
its own row (``line`` is ``n + 1``). Mapped event kinds: ``MessageEvent``
(``source`` user or agent; ``llm_message.content`` text parts),
``ActionEvent`` (a tool call: ``tool_name``, ``tool_call_id``, the call's JSON
arguments; its ``thought`` is the assistant's text), ``ObservationEvent`` (its
result), ``AgentErrorEvent`` (a tool call that failed) and
``ConversationErrorEvent`` (the model call failed). Every other kind
(``SystemPromptEvent``, ``Condensation``, ``PauseEvent``, a rejection, and
whatever a new release adds) is kept as a raw record. An event file that is not
a JSON object, or too large, is an issue; the others are still read. A
``base_state.json`` that is not a JSON object (caught as it is written) is an
issue and nothing else: the conversation is read when it is whole. An event
written after the state's last rewrite is read at its next one (OpenHands
rewrites the state at least when the conversation's status changes).

Usage is per model call: ``stats.usage_to_metrics.<usage id>.token_usages``
(the agent's calls, and those of any other LLM the conversation used, such as
its condenser), each with the ``response_id`` the event it produced names,
which is its key; its time is that event's. ``prompt_tokens`` is the whole
prompt, so its cached part (``cache_read_tokens``) is subtracted;
``cache_write_tokens`` is 0 over Chat Completions, which has no such figure,
so a zero is no figure; ``reasoning_tokens`` is written (0 when none). The
``accumulated_token_usage`` beside them is their running total, not a call.
A figure that is there but not a count is unknown.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from tackroom.families.base import (
    fresh_input,
    int_or_none,
    json_arguments,
    obj,
    seq,
    str_or_none,
    text_or_none,
)
from tackroom.families.openhands.stream import MAX_STATE
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
from tackroom.trace.model import Cursor, SessionMeta, TraceEvent, TraceIssue, TraceItem, TranscriptReader

MAX_EVENT = 16 * 1024 * 1024
"""An event file larger than this is not read (a system prompt with its tools is some 30 KB)."""
MAX_EVENTS = 100_000
"""The most event files of one conversation read."""
_EVENT = re.compile(r"^event-(\d{1,9})-[^/]*\.json$")


def read_json(path: Path, limit: int) -> dict[str, Any] | str:
    """The JSON object in ``path`` (not followed if a link, at most ``limit`` bytes), or why there is none."""
    try:
        data = read_regular(path, limit + 1)
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if len(data) > limit:
        return f"larger than {limit} bytes: not read"
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        return f"not JSON ({exc})"
    return value if isinstance(value, dict) else "not a JSON object"


def usage_of(figures: Any) -> Usage:
    """One ``token_usages`` entry; a figure that is there but not a count is unknown."""
    data = obj(figures)
    prompt, cached = int_or_none(data.get("prompt_tokens")), int_or_none(data.get("cache_read_tokens"))
    write = int_or_none(data.get("cache_write_tokens"))
    names = {
        "prompt_tokens": ("input",),
        "cache_read_tokens": ("cache_read", "input"),  # the uncached input is the prompt less this
        "completion_tokens": ("output",),
        "cache_write_tokens": ("cache_write",),
        "reasoning_tokens": ("reasoning",),
    }
    wrong = {
        name
        for key, found in names.items()
        if key in data and int_or_none(data[key]) is None
        for name in found
    }
    values = {
        "input": fresh_input(prompt, cached),
        "output": int_or_none(data.get("completion_tokens")),
        "cache_read": cached,
        "cache_write": write or None,
        "reasoning": int_or_none(data.get("reasoning_tokens")),
    }
    return Usage(
        **{k: v for k, v in values.items() if k not in wrong and k in FIGURES}, unknown=frozenset(wrong)
    )


def _parts_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    texts = [
        t for p in seq(content) if obj(p).get("type") == "text" and isinstance(t := obj(p).get("text"), str)
    ]
    return "".join(texts) if texts else None


def _events(kind: str | None, data: dict[str, Any]) -> list[Event]:
    if kind == "MessageEvent":
        text = _parts_text(obj(data.get("llm_message")).get("content"))
        source = data.get("source")
        if text and source == "user":
            return [UserText(text=text)]
        if text and source == "agent":
            return [AssistantText(text=text)]
    elif kind == "ActionEvent":
        events: list[Event] = []
        if thought := _parts_text(data.get("thought")):
            events.append(AssistantText(text=thought))
        call = obj(data.get("tool_call"))
        arguments = json_arguments(call["arguments"]) if "arguments" in call else data.get("action")
        name = text_or_none(data.get("tool_name")) or text_or_none(call.get("name")) or ""
        events.append(ToolCall(name=name, call_id=text_or_none(data.get("tool_call_id")), input=arguments))
        return events
    elif kind == "ObservationEvent":
        observation = obj(data.get("observation"))
        return [
            ToolResult(
                call_id=text_or_none(data.get("tool_call_id")),
                output=_parts_text(observation.get("content")),
                is_error=observation.get("is_error") is True,
            )
        ]
    elif kind == "AgentErrorEvent":
        error = str_or_none(data.get("error"))
        return [ToolResult(call_id=text_or_none(data.get("tool_call_id")), output=error, is_error=True)]
    elif kind == "ConversationErrorEvent":
        message = (
            text_or_none(data.get("detail"))
            or text_or_none(data.get("code"))
            or "openhands conversation error"
        )
        return [ErrorEvent(message=message[:4096], fatal=True)]
    return [Record(orjson.dumps(data).decode(), record_type=kind)]


class OpenHandsTranscripts(TranscriptReader):
    """Reads ``*/base_state.json`` and the events beside it."""

    incremental = False
    suffixes = (".json",)

    def read(self, path: Path, cursor: Cursor, *, usage_only: bool = False) -> Iterator[TraceItem]:
        session = path.parent.name or path.stem
        state = read_json(path, MAX_STATE)
        if isinstance(state, str):  # no conversation (or one caught mid-write): read when it is whole
            yield TraceIssue(path, 0, state)
            return
        agent_llm = obj(obj(state.get("agent")).get("llm"))
        info = SessionMeta(session, cwd=text_or_none(obj(state.get("workspace")).get("working_dir")))
        model = text_or_none(agent_llm.get("model"))
        info.saw(None, model)
        times: dict[str, str] = {}  # a response id: the time of the first event it produced
        items: list[TraceItem] = []
        files, problem = _event_files(path.parent / "events")
        if problem:
            yield TraceIssue(path, 0, f"events/: {problem}")
        for number, event_path in files:
            data = read_json(event_path, MAX_EVENT)
            if isinstance(data, str):
                items.append(TraceIssue(path, number, f"events/{event_path.name}: {data}"))
                continue
            timestamp = str_or_none(data.get("timestamp"))
            response = text_or_none(data.get("llm_response_id"))
            if response and timestamp and response not in times:
                times[response] = timestamp
            info.saw(timestamp)
            if usage_only:
                continue
            kind = str_or_none(data.get("kind"))
            from_model = model if data.get("source") == "agent" else None
            for event in _events(kind, data):
                items.append(TraceEvent(session, event, timestamp, from_model, number))
        if not usage_only:
            yield TraceEvent(session, SessionStarted(session_id=session, model=model), info.started, line=0)
        yield from items
        for metrics in obj(obj(state.get("stats")).get("usage_to_metrics")).values():
            for entry in seq(obj(metrics).get("token_usages")):
                usage = usage_of(entry)
                if not usage.reported:
                    continue
                key = text_or_none(obj(entry).get("response_id"))
                call_model = text_or_none(obj(entry).get("model")) or text_or_none(
                    obj(metrics).get("model_name")
                )
                info.saw(None, call_model)
                when = times.get(key) if key else None
                yield TraceEvent(session, UsageReport(usage=usage), when, call_model, 0, key)
        yield info


def _event_files(folder: Path) -> tuple[list[tuple[int, Path]], str | None]:
    """The conversation's event files by their number (from 1), the first :data:`MAX_EVENTS`; or why
    the folder could not be listed (none yet is no problem)."""
    found: list[tuple[int, Path]] = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                match = _EVENT.match(entry.name)
                if match:
                    found.append((int(match.group(1)) + 1, Path(entry.path)))
    except FileNotFoundError:
        return [], None
    except OSError as exc:
        return [], f"cannot be listed ({exc.strerror or exc})"
    found.sort()
    return found[:MAX_EVENTS], None
