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

from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import msgspec
import orjson

from tackroom.families.base import obj, seq, str_or_none
from tackroom.families.claude_code.stream import tool_result_text
from tackroom.paths import read_regular
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
        golden and fuzz tests hold it to. A line is decoded by msgspec into :class:`_Line`, which holds
        only the fields usage needs (the messages' text is skipped, never built); a line that does not
        fit it exactly (a figure of another type, a negative one, advisor iterations, bytes that are not
        JSON) is read again as a whole object by :func:`_dict_rows`, as every line once was."""
        state = cursor.state
        if "agent" not in state:
            state["agent"] = _agent(path)
        agent = state["agent"]
        named = f"agent-{agent['id']}" if agent else None
        meta: dict[str, SessionMeta] = {}
        last, info = "", SessionMeta("")  # the session of the line before, and its facts (a file has one)
        decode = _LINE.decode
        errors = (msgspec.MsgspecError, RecursionError)
        for batch in jsonl.needle_batches(path, cursor, b'"usage"', head=1):
            for number, line in batch:
                if isinstance(line, TraceIssue):
                    yield line
                    continue
                try:
                    data = decode(line)
                except errors:
                    yield from _dict_rows(path, number, line, state, meta)
                    continue
                session = named
                if session is None:
                    session = data.sessionId
                    if session:
                        if "session" not in state:
                            state["session"] = session
                    else:
                        known = state.get("session")
                        session = known if type(known) is str else path.stem
                if session != last:
                    found = meta.get(session)
                    if found is None:
                        found = meta[session] = _new_meta(session, data.cwd, data.sessionId, agent)
                    last, info = session, found
                timestamp = data.timestamp
                message = data.message
                model = None if message is None else message.model
                info.saw(timestamp, None if model == SYNTHETIC else model)
                kind = data.type
                if kind == "assistant":
                    if message is None or model == SYNTHETIC:
                        continue
                    raw = message.usage
                    if raw is None:
                        continue
                    if raw.iterations is not None:  # advisor calls inside: the whole object's reading
                        yield from _dict_rows(path, number, line, state, meta, saw=False)
                        continue
                    i, o = raw.input_tokens, raw.output_tokens
                    cr, cw = raw.cache_read_input_tokens, raw.cache_creation_input_tokens
                    if i is None and o is None and cr is None and cw is None:
                        continue  # no figure: no call to count (as _row says)
                    if model is not None and raw.speed == "fast":
                        model = f"{model}-fast"
                    # _row's row, inline: the counts are known to be plain non-negative integers.
                    flags = SIDECHAIN if data.isSidechain is True else 0
                    yield [number, timestamp, model, message.id or None, session, i, o, cr, cw, None, flags]
                elif kind == "progress":
                    try:
                        inner = _PROGRESS.decode(data.data).message if data.data else None
                    except errors:
                        yield from _dict_rows(path, number, line, state, meta, saw=False)
                        continue
                    if inner is None or inner.message is None:
                        continue
                    copied = inner.message
                    raw = copied.usage
                    model = copied.model
                    if raw is None or model == SYNTHETIC:
                        continue
                    if raw.iterations is not None:
                        yield from _dict_rows(path, number, line, state, meta, saw=False)
                        continue
                    if model is not None and raw.speed == "fast":
                        model = f"{model}-fast"
                    row = _struct_row(raw, session, number, inner.timestamp or timestamp, model)
                    if row is not None:
                        if inner.isSidechain is True:
                            row[R_UNKNOWN] |= SIDECHAIN
                        if copied.id:
                            row[R_KEY] = copied.id
                        yield row
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


def _dict_rows(
    path: Path,
    number: int,
    line: bytes | memoryview,
    state: dict[str, Any],
    meta: dict[str, SessionMeta],
    *,
    saw: bool = True,
) -> Iterator[UsageRow | TraceIssue]:
    """The rows of a line read as a whole object (what :meth:`ClaudeTranscripts.usage` does with a line
    :class:`_Line` does not fit), or its issue. ``saw=False``: the line's session was already noted."""
    line = bytes(line)
    try:
        data = orjson.loads(line)
    except orjson.JSONDecodeError:
        data = None
    if type(data) is not dict:
        data = jsonl.parse(line, deep=False)  # the slow path: lone surrogates, or why not
        if isinstance(data, str):
            yield TraceIssue(path, number, data)
            return
    agent = state["agent"]
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
    timestamp = str_or_none(data.get("timestamp"))
    message = obj(data.get("message"))
    model = str_or_none(message.get("model"))
    if saw:
        info = meta.get(session)
        if info is None:
            info = meta[session] = _new_meta(
                session, str_or_none(data.get("cwd")), str_or_none(data.get("sessionId")), agent
            )
        info.saw(timestamp, None if model == SYNTHETIC else model)
    kind = data.get("type")
    if kind == "assistant":
        yield from _rows(session, number, timestamp, data, message, model)
    elif kind == "progress":
        inner = obj(obj(data.get("data")).get("message"))
        copied = obj(inner.get("message"))
        stamp = str_or_none(inner.get("timestamp")) or timestamp
        yield from _rows(session, number, stamp, inner, copied, str_or_none(copied.get("model")))


def _new_meta(
    session: str, cwd: str | None, session_id: str | None, agent: dict[str, Any] | None
) -> SessionMeta:
    info = SessionMeta(session, cwd=cwd)
    if agent:
        info.parent_id = agent.get("parent") or session_id
        info.agent = agent.get("type")
    return info


Count = Annotated[int, msgspec.Meta(ge=0, le=2**63 - 1)]
"""A token count as the fast path takes it; anything else (a negative, a float, a bool, a string, one
orjson would read as a float) sends the line to the whole-object reading, which says what it is."""


class _Usage(msgspec.Struct, gc=False):
    input_tokens: Count | None = None
    output_tokens: Count | None = None
    cache_read_input_tokens: Count | None = None
    cache_creation_input_tokens: Count | None = None
    speed: str | None = None
    iterations: Any = None


class _Message(msgspec.Struct, gc=False):
    id: str | None = None
    model: str | None = None
    usage: _Usage | None = None


class _Line(msgspec.Struct, gc=False):
    """What usage needs of a line; every other field is skipped unbuilt."""

    type: str | None = None
    timestamp: str | None = None
    sessionId: str | None = None
    cwd: str | None = None
    isSidechain: bool | None = None
    message: _Message | None = None
    data: msgspec.Raw = msgspec.Raw()
    """A progress line's copied message: decoded (by :data:`_PROGRESS`) only on progress lines."""


class _Inner(msgspec.Struct, gc=False):
    timestamp: str | None = None
    isSidechain: bool | None = None
    message: _Message | None = None


class _Progress(msgspec.Struct, gc=False):
    message: _Inner | None = None


_LINE = msgspec.json.Decoder(_Line)
_PROGRESS = msgspec.json.Decoder(_Progress)


def _struct_row(
    raw: _Usage, session: str, number: int, timestamp: str | None, model: str | None
) -> UsageRow | None:
    """:func:`_row` of a decoded usage: its counts are known to be plain non-negative integers."""
    i, o, cr, cw = (
        raw.input_tokens,
        raw.output_tokens,
        raw.cache_read_input_tokens,
        raw.cache_creation_input_tokens,
    )
    if i is None and o is None and cr is None and cw is None:
        return None
    return [number, timestamp, model, None, session, i, o, cr, cw, None, 0]


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
        data = obj(orjson.loads(read_regular(meta, META_LIMIT)))
    except (OSError, orjson.JSONDecodeError):
        return found
    if parent := str_or_none(data.get("parentAgentId")):
        found["parent"] = f"agent-{parent}"
    if kind := str_or_none(data.get("agentType")):
        found["type"] = kind
    return found
