"""Qwen Code's chat logs: ``projects/<project>/chats/<session>.jsonl`` under ``QWEN_HOME`` (``~/.qwen``).

Verified on 0.24.4. One JSON object per line, each with ``uuid``,
``parentUuid``, ``sessionId``, ``timestamp``, ``type``, ``cwd`` and ``version``;
messages in Gemini's shape (``message.parts``):

* ``user``: the prompt's text parts (a ``subtype`` such as ``notification``
  marks text qwen injected itself: kept as a record);
* ``assistant``: text and ``functionCall`` parts (``thought`` parts left
  out), the ``model``, and ``usageMetadata`` on the line that closed a model
  call (``promptTokenCount`` including ``cachedContentTokenCount``,
  ``candidatesTokenCount`` including ``thoughtsTokenCount``: OpenAI's
  convention carried over, so tackroom's ``input`` is prompt minus cached);
* ``tool_result``: ``functionResponse`` parts (``response.output``, or
  ``response.error`` for a failed call);
* ``system`` (``ui_telemetry``, ``attribution_snapshot``,
  ``agent_session_ready``, ...) and whatever a new release adds: records,
  but for the ``qwen-code.api_error`` telemetry of a failed model call (an
  error; qwen may retry, so not a fatal one; verified on 0.24.4, where a
  failed call leaves no assistant line).

Usage is read from the assistant lines only: ``ui_telemetry``'s
``qwen-code.api_response`` lines in the main log repeat the same calls (the
subagents' too), so counting them would count those twice. Each usage is
keyed by its line's ``uuid``.

``--resume`` appends to the session's own log. A subagent writes
``projects/<project>/subagents/<parent session>/agent-<agentId>.jsonl``, each
line with the parent's ``sessionId``, ``isSidechain: true``, ``agentId`` and
``agentName``: its own session ``agent-<agentId>``, linked to the parent
session, or to the agent its ``agent-<agentId>.meta.json`` names as
``parentAgentId``. A subagent's later lines may leave out the ``model``: its
calls are the model its earlier lines named, or else the one its
``.meta.json`` names.
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

META_LIMIT = 64 * 1024


class QwenTranscripts(JsonLinesReader):
    """Reads ``chats/*.jsonl`` session logs and ``subagents/<session>/agent-*.jsonl``."""

    needles = (b'"usageMetadata"', b'"model"')  # the calls, and the lines that name their model

    def line(self, reading: Reading, number: int, data: dict[str, Any]) -> Iterator[TraceItem]:
        kind = str_or_none(data.get("type"))
        timestamp = str_or_none(data.get("timestamp"))
        state, meta = reading.state, reading.meta
        session, parent = _session(reading.path, data, state)
        info = meta.get(session)
        if info is None:
            info = meta[session] = SessionMeta(session, parent_id=parent)
            if parent is not None:
                info.agent = str_or_none(data.get("agentName"))
                sidecar = _sidecar(reading.path)
                own = session.removeprefix("agent-")
                if (by := str_or_none(sidecar.get("parentAgentId"))) and by != own:
                    info.parent_id = f"agent-{by}"
                info.agent = info.agent or str_or_none(sidecar.get("agentType"))
            if not state.get("started"):
                state["started"] = True
                yield TraceEvent(session, SessionStarted(session_id=session), timestamp, line=number)
        if info.cwd is None:
            info.cwd = str_or_none(data.get("cwd"))
        model = None
        if kind == "assistant":
            # A subagent's later lines may leave the model out: it is the one its earlier lines named.
            model = str_or_none(data.get("model")) or str_or_none(state.get("model"))
            if model is None and "agent" in state:
                model = str_or_none(_sidecar(reading.path).get("model"))
            if model:
                state["model"] = model
        info.saw(timestamp, model)
        message = obj(data.get("message"))
        if kind == "assistant":
            if not reading.usage_only:
                for event in _assistant(message):
                    yield TraceEvent(session, event, timestamp, model, number)
            if isinstance(metadata := data.get("usageMetadata"), dict):
                usage = qwen_tokens(metadata)
                if usage.reported:
                    uuid = str_or_none(data.get("uuid"))
                    key = f"qwen:{uuid}" if uuid else None
                    yield TraceEvent(session, UsageReport(usage=usage), timestamp, model, number, key)
            return
        if reading.usage_only:
            return
        events: list[Event] = []
        if kind == "user" and data.get("subtype") is None:
            events = [UserText(text=text) for text in _texts(message)]
        elif kind == "tool_result":
            failed = obj(data.get("toolCallResult")).get("status") == "error"
            events = _results(message, failed)
        elif kind == "system" and data.get("subtype") == "ui_telemetry":
            ui = obj(obj(data.get("systemPayload")).get("uiEvent"))
            if ui.get("event.name") == "qwen-code.api_error":
                said = str_or_none(ui.get("error_message")) or str_or_none(ui.get("error")) or ""
                events = [ErrorEvent(orjson.dumps(data).decode(), message=said, fatal=False)]
        if not events:
            subtype = str_or_none(data.get("subtype"))
            record_type = f"{kind}/{subtype}" if kind and subtype else kind
            events = [Record(orjson.dumps(data).decode(), record_type=record_type)]
        for event in events:
            yield TraceEvent(session, event, timestamp, line=number)


def _session(path: Path, data: dict[str, Any], state: dict[str, Any]) -> tuple[str, str | None]:
    """The line's session and, for a subagent's, the parent's."""
    agent = state.get("agent")
    if agent is None and (found := str_or_none(data.get("agentId"))):
        agent = state["agent"] = found
    parent = str_or_none(data.get("sessionId"))
    if isinstance(agent, str):
        known = state.setdefault("parent", parent)
        return f"agent-{agent}", known if isinstance(known, str) else parent
    if path.parent.parent.name == "subagents" and path.stem.startswith("agent-"):
        return path.stem, parent or path.parent.name
    if parent:
        state.setdefault("session", parent)
        return parent, None
    known = state.get("session")
    return (known if isinstance(known, str) else path.stem), None


def _sidecar(path: Path) -> dict[str, Any]:
    """A subagent log's ``agent-<id>.meta.json``: ``agentType``, and ``parentAgentId`` for a nested one."""
    try:
        return obj(orjson.loads(read_regular(path.with_name(path.stem + ".meta.json"), META_LIMIT)))
    except (OSError, orjson.JSONDecodeError):
        return {}


def qwen_tokens(metadata: dict[str, Any]) -> Usage:
    """``usageMetadata`` in tackroom's convention (see the module's notes)."""
    cached = int_or_none(metadata.get("cachedContentTokenCount"))
    return Usage(
        input=fresh_input(int_or_none(metadata.get("promptTokenCount")), cached),
        output=int_or_none(metadata.get("candidatesTokenCount")),
        cache_read=cached,
        reasoning=int_or_none(metadata.get("thoughtsTokenCount")),
    )


def _assistant(message: dict[str, Any]) -> list[Event]:
    events: list[Event] = []
    for part in seq(message.get("parts")):
        part = obj(part)
        if isinstance(text := part.get("text"), str) and not part.get("thought"):
            events.append(AssistantText(text=text))
        elif isinstance(call := part.get("functionCall"), dict):
            events.append(
                ToolCall(
                    name=str_or_none(call.get("name")) or "",
                    call_id=str_or_none(call.get("id")),
                    input=call.get("args"),
                )
            )
    return events


def _texts(message: dict[str, Any]) -> list[str]:
    return [
        text
        for part in seq(message.get("parts"))
        if isinstance(text := obj(part).get("text"), str) and not obj(part).get("thought")
    ]


def _results(message: dict[str, Any], failed: bool) -> list[Event]:
    events: list[Event] = []
    for part in seq(message.get("parts")):
        response = obj(part).get("functionResponse")
        if not isinstance(response, dict):
            continue
        result = obj(response.get("response"))
        output = result.get("output", result.get("error"))
        events.append(
            ToolResult(
                call_id=str_or_none(response.get("id")),
                output=output if isinstance(output, str) else orjson.dumps(result).decode(),
                is_error=failed or "error" in result,
            )
        )
    return events
