"""Claude Code's session logs: ``projects/<project>/<session>.jsonl`` under its config dir.

One JSON object per line (verified on 2.1.197 and 2.1.332). ``user`` and
``assistant`` lines carry an API message; every other type (``summary``,
``system``, ``attachment``, ``queue-operation``, ``api-request``, ``cost-state``
and whatever a new release adds) is kept as a raw record. Each line has the
``sessionId``, ``cwd`` and ``timestamp``.

A streamed assistant message is written as one line per content block, each
with the same ``message.id`` and the usage so far: the call's key is its
message id (with the request id where the line has one), so a report counts
it once, with its last figures. Lines Claude Code made up itself (model
``<synthetic>``: "No response requested.", an API error shown as a message)
were not model calls and carry no usage.

Subagents write their own files: ``<session>/subagents/agent-<id>.jsonl``
(2.x; older releases put ``agent-<id>.jsonl`` beside the session), every line
with ``isSidechain: true``, the parent's ``sessionId`` and an ``agentId``.
Such a file is its own session, ``agent-<id>``, linked to its parent: the
main session, or the agent named ``parentAgentId`` in the file's
``.meta.json`` (which also names the agent type).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from tackroom.families.base import obj, seq, str_or_none
from tackroom.families.claude_code import anthropic_usage, tool_result_text
from tackroom.trace import jsonl
from tackroom.trace.events import (
    AssistantText,
    Event,
    Record,
    SessionStarted,
    ToolCall,
    ToolResult,
    UsageReport,
    UserText,
)
from tackroom.trace.model import Cursor, SessionMeta, TraceEvent, TraceItem, TranscriptReader

SYNTHETIC = "<synthetic>"
META_LIMIT = 64 * 1024
_USAGE_NEEDLES = (b'"usage"',)


class ClaudeTranscripts(TranscriptReader):
    """Reads ``*.jsonl`` session logs, main sessions and subagents alike."""

    def read(self, path: Path, cursor: Cursor, *, usage_only: bool = False) -> Iterator[TraceItem]:
        state = cursor.state
        if "agent" not in state:
            state["agent"] = _agent(path)
        meta: dict[str, SessionMeta] = {}
        # The fast path parses only the lines that mention usage, and the first (where the session starts).
        needles = _USAGE_NEEDLES if usage_only else ()
        for item in jsonl.records(path, cursor, needles, head=1):
            if isinstance(item, tuple):
                yield from self._line(path, item[0], item[1], state, meta, usage_only)
            else:
                yield item
        yield from meta.values()

    def _line(
        self,
        path: Path,
        number: int,
        data: dict[str, Any],
        state: dict[str, Any],
        meta: dict[str, SessionMeta],
        usage_only: bool,
    ) -> Iterator[TraceItem]:
        kind = str_or_none(data.get("type"))
        timestamp = str_or_none(data.get("timestamp"))
        session = self._session(path, data, state)
        if session is None:
            if not usage_only:
                yield TraceEvent(
                    "", Record(orjson.dumps(data).decode(), record_type=kind), timestamp, line=number
                )
            return
        info = meta.get(session)
        if info is None:
            info = meta[session] = SessionMeta(session)
            agent = state["agent"]
            if agent:
                info.parent_id = agent.get("parent") or str_or_none(data.get("sessionId"))
                info.agent = agent.get("type")
            if not state.get("started"):
                state["started"] = True
                yield TraceEvent(session, SessionStarted(session_id=session), timestamp, line=number)
        if info.cwd is None:
            info.cwd = str_or_none(data.get("cwd"))
        message = obj(data.get("message"))
        model = str_or_none(message.get("model"))
        info.saw(timestamp, None if model == SYNTHETIC else model)
        if kind == "assistant":
            yield from _assistant(session, number, timestamp, data, message, model, usage_only)
        elif kind == "progress":
            # 2.0.x copies a running subagent's messages into its parent's log, inside progress lines.
            inner = obj(obj(data.get("data")).get("message"))
            copied = obj(inner.get("message"))
            stamp = str_or_none(inner.get("timestamp")) or timestamp
            yield from _calls(session, number, stamp, inner, copied, str_or_none(copied.get("model")))
            if not usage_only:
                yield TraceEvent(
                    session, Record(orjson.dumps(data).decode(), record_type=kind), timestamp, line=number
                )
        elif usage_only:
            return
        elif kind == "user":
            yield from _user(session, number, timestamp, message)
        elif kind == "summary":
            info.title = info.title or str_or_none(data.get("summary"))
            yield TraceEvent(
                session, Record(orjson.dumps(data).decode(), record_type=kind), timestamp, line=number
            )
        else:
            yield TraceEvent(
                session, Record(orjson.dumps(data).decode(), record_type=kind), timestamp, line=number
            )

    @staticmethod
    def _session(path: Path, data: dict[str, Any], state: dict[str, Any]) -> str | None:
        agent = state["agent"]
        if agent:
            return f"agent-{agent['id']}"
        session = str_or_none(data.get("sessionId"))
        if session:
            state.setdefault("session", session)
            return session
        # A summary line names no session: it belongs to the file's.
        known = state.get("session")
        return known if isinstance(known, str) else path.stem if data.get("type") == "summary" else None


def _assistant(
    session: str,
    number: int,
    timestamp: str | None,
    data: dict[str, Any],
    message: dict[str, Any],
    model: str | None,
    usage_only: bool,
) -> Iterator[TraceEvent]:
    if not usage_only:
        for block in seq(message.get("content")):
            block = obj(block)
            kind = block.get("type")
            if kind == "text" and isinstance(text := block.get("text"), str):
                yield TraceEvent(session, AssistantText(text=text), timestamp, model, number)
            elif kind == "tool_use":
                call = ToolCall(
                    name=str_or_none(block.get("name")) or "",
                    call_id=str_or_none(block.get("id")),
                    input=block.get("input"),
                )
                yield TraceEvent(session, call, timestamp, model, number)
    yield from _calls(session, number, timestamp, data, message, model)


def _calls(
    session: str,
    number: int,
    timestamp: str | None,
    data: dict[str, Any],
    message: dict[str, Any],
    model: str | None,
) -> Iterator[TraceEvent]:
    """The model calls one API message records: itself, and the advisor calls made inside it."""
    if "usage" not in message or message.get("model") == SYNTHETIC:
        return  # Claude Code's own stand-in message ("No response requested."): no model was called
    raw = obj(message.get("usage"))
    usage = anthropic_usage(raw)
    if not usage.reported:
        return
    message_id = str_or_none(message.get("id"))
    request = str_or_none(data.get("requestId")) or str_or_none(data.get("requestRef"))
    key = None if message_id is None else f"{message_id}:{request}" if request else message_id
    yield TraceEvent(session, UsageReport(usage=usage), timestamp, model, number, key)
    for n, step in enumerate(seq(raw.get("iterations"))):
        step = obj(step)
        if step.get("type") == "advisor_message" and (advisor := str_or_none(step.get("model"))):
            extra = None if key is None else f"{key}:advisor:{n}"
            yield TraceEvent(
                session, UsageReport(usage=anthropic_usage(step)), timestamp, advisor, number, extra
            )


def _user(session: str, number: int, timestamp: str | None, message: dict[str, Any]) -> Iterator[TraceEvent]:
    content = message.get("content")
    if isinstance(content, str):
        yield TraceEvent(session, UserText(text=content), timestamp, line=number)
        return
    for block in seq(content):
        block = obj(block)
        kind = block.get("type")
        event: Event | None = None
        if kind == "text" and isinstance(text := block.get("text"), str):
            event = UserText(text=text)
        elif kind == "tool_result":
            event = ToolResult(
                call_id=str_or_none(block.get("tool_use_id")),
                output=tool_result_text(block.get("content")),
                is_error=block.get("is_error") is True,
            )
        if event is not None:
            yield TraceEvent(session, event, timestamp, line=number)


def _agent(path: Path) -> dict[str, Any] | None:
    """For a subagent's file (``agent-<id>.jsonl``): its id, and its type and parent from ``.meta.json``."""
    if not path.name.startswith("agent-"):
        return None
    found: dict[str, Any] = {"id": path.stem.removeprefix("agent-")}
    meta = path.with_name(path.stem + ".meta.json")
    try:
        fd = os.open(meta, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as handle:
            data = obj(orjson.loads(handle.read(META_LIMIT)))
    except (OSError, orjson.JSONDecodeError):
        return found
    if parent := str_or_none(data.get("parentAgentId")):
        found["parent"] = f"agent-{parent}"
    if kind := str_or_none(data.get("agentType")):
        found["type"] = kind
    return found
