"""Claude Code's session logs: ``projects/<project>/<session>.jsonl`` under its config dir.

One JSON object per line (verified on 2.1.197 and 2.1.332). ``user`` and
``assistant`` lines carry an API message; every other type (``summary``,
``system``, ``attachment``, ``queue-operation``, ``api-request``, ``cost-state``
and whatever a new release adds) is kept as a raw record. Each line has the
``sessionId``, ``cwd`` and ``timestamp``.

A streamed assistant message is written as one line per content block, each
with the same ``message.id`` and the usage so far: the call's key is its
message id, so a report counts it once, with its final (largest) figures. A
resumed session's copied history, a side question's replay and a subagent's
message copied into a ``progress`` line carry the same id, and count once too.
Lines Claude Code made up itself (model ``<synthetic>``: "No response
requested.", an API error shown as a message) were not model calls and carry
no usage.

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
from tackroom.families.claude_code import tool_result_text
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
from tackroom.trace.model import (
    R_INPUT,
    R_KEY,
    R_MODEL,
    R_UNKNOWN,
    SIDECHAIN,
    Cursor,
    SessionMeta,
    TraceEvent,
    TraceIssue,
    TraceItem,
    TranscriptReader,
    UsageRow,
    row_usage,
)

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

    def usage(self, path: Path, cursor: Cursor) -> Iterator[UsageRow | SessionMeta | TraceIssue]:
        """The fast path: only lines holding ``"usage"`` are parsed, and rows are built without events.

        One flat loop (a report reads every log through it): the same rows as :meth:`read`, which the
        golden and fuzz tests hold it to."""
        state = cursor.state
        if "agent" not in state:
            state["agent"] = _agent(path)
        agent = state["agent"]
        meta: dict[str, SessionMeta] = {}
        loads = orjson.loads
        for batch in jsonl.needle_batches(path, cursor, b'"usage"', head=1):
            for number, line in batch:
                if isinstance(line, TraceIssue):
                    yield line
                    continue
                try:
                    data = loads(line)
                except orjson.JSONDecodeError:
                    data = None
                if type(data) is not dict:
                    data = jsonl.parse(line, deep=False)  # the slow path: lone surrogates, or why not
                    if isinstance(data, str):
                        yield TraceIssue(path, number, data)
                        continue
                if agent:
                    session = f"agent-{agent['id']}"
                else:
                    session = data.get("sessionId")
                    if type(session) is str and session:
                        if "session" not in state:
                            state["session"] = session
                    else:
                        known = state.get("session")
                        session = known if type(known) is str else path.stem
                info = meta.get(session)
                if info is None:
                    info = meta[session] = self._meta(session, data, state)
                timestamp = data.get("timestamp")
                if type(timestamp) is not str:
                    timestamp = None
                message = data.get("message")
                if type(message) is not dict:
                    message = {}
                model = message.get("model")
                if type(model) is not str:
                    model = None
                info.saw(timestamp, None if model == SYNTHETIC else model)
                kind = data.get("type")
                if kind == "assistant":
                    raw = message.get("usage")
                    if type(raw) is dict and model != SYNTHETIC and "iterations" not in raw:
                        # The common line, inline: one call, keyed on its message id.
                        if model is not None and raw.get("speed") == "fast":
                            model = f"{model}-fast"
                        row = _row(raw, session, number, timestamp, model, None)
                        if row is not None:
                            if data.get("isSidechain") is True:
                                row[R_UNKNOWN] |= SIDECHAIN
                            message_id = message.get("id")
                            if type(message_id) is str and message_id:
                                row[R_KEY] = message_id
                            yield row
                    else:
                        yield from _rows(session, number, timestamp, data, message, model)
                elif kind == "progress":
                    inner = obj(obj(data.get("data")).get("message"))
                    copied = obj(inner.get("message"))
                    stamp = str_or_none(inner.get("timestamp")) or timestamp
                    yield from _rows(session, number, stamp, inner, copied, str_or_none(copied.get("model")))
        yield from meta.values()

    @staticmethod
    def _meta(session: str, data: dict[str, Any], state: dict[str, Any]) -> SessionMeta:
        info = SessionMeta(session, cwd=str_or_none(data.get("cwd")))
        agent = state["agent"]
        if agent:
            info.parent_id = agent.get("parent") or str_or_none(data.get("sessionId"))
            info.agent = agent.get("type")
        return info

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
            info = meta[session] = self._meta(session, data, state)
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
        # A line that names no session (a summary, an old release's) is the file's: the file is named
        # after its session.
        known = state.get("session")
        return known if isinstance(known, str) else path.stem


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
    """The model calls one API message records, as usage events."""
    for row in _rows(session, number, timestamp, data, message, model):
        event = UsageReport(usage=row_usage(row))
        yield TraceEvent(session, event, timestamp, row[R_MODEL], number, row[R_KEY])


def _rows(
    session: str,
    number: int,
    timestamp: str | None,
    data: dict[str, Any],
    message: dict[str, Any],
    model: str | None,
) -> Iterator[UsageRow]:
    """The model calls one API message records: itself, and the advisor calls made inside it."""
    raw = message.get("usage")
    if not isinstance(raw, dict) or message.get("model") == SYNTHETIC:
        return  # Claude Code's own stand-in message ("No response requested."): no model was called
    if raw.get("speed") == "fast" and model is not None:
        model = (
            f"{model}-fast"  # fast mode: the same model at another price, reported apart (as ccusage does)
        )
    row = _row(raw, session, number, timestamp, model, None)
    if row is None:
        return
    if data.get("isSidechain") is True:
        row[R_UNKNOWN] |= SIDECHAIN
    message_id = message.get("id")
    if isinstance(message_id, str) and message_id:
        # The API's message id names one response: every line holding it (a streamed block, a resumed
        # session's copy, a side question's replay, a subagent's message copied into a progress line)
        # is that one call. The request id adds nothing (and 2.1.3xx writes requestRef instead).
        row[R_KEY] = message_id
    yield row
    steps = raw.get("iterations")
    if not steps or not isinstance(steps, list):
        return
    for n, step in enumerate(steps):
        if isinstance(step, dict) and step.get("type") == "advisor_message":
            advisor = step.get("model")
            if isinstance(advisor, str):
                extra = None if row[R_KEY] is None else f"{row[R_KEY]}:advisor:{n}"
                found = _row(step, session, number, timestamp, advisor, extra)
                if found is not None:
                    yield found


_ANTHROPIC = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


def _row(
    raw: dict[str, Any], session: str, number: int, timestamp: str | None, model: str | None, key: str | None
) -> UsageRow | None:
    """One call's figures in the Anthropic Messages shape (no reasoning figure), or None if it has none."""
    row: UsageRow = [number, timestamp, model, key, session, None, None, None, None, None, 0]
    seen = False
    for n, name in enumerate(_ANTHROPIC):
        value = raw.get(name)
        if type(value) is int:  # not a bool, a float or a string: those are not token counts
            seen = True
            if value < 0:
                row[R_UNKNOWN] |= 1 << n  # a contradiction: unknown, not a number
            else:
                row[R_INPUT + n] = value
    return row if seen else None


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
