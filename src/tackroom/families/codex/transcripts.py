"""Codex CLI's rollouts: ``sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`` under ``CODEX_HOME``.

One JSON object per line, ``{"timestamp", "type", "payload"}`` (0.171.0 adds an
``ordinal``). Line types: ``session_meta`` (the thread: id, cwd, cli version,
and for a subagent or a fork ``forked_from_id`` / ``source.subagent.thread_spawn``),
``turn_context`` (the model of the turn), ``response_item`` (``message``,
``function_call``, ``function_call_output``, ``custom_tool_call``,
``custom_tool_call_output``, ``reasoning``, ...), ``event_msg`` (``token_count``,
``task_started``, ``task_complete``, ``error``, ...), ``world_state``,
``token_usage_record``, ``compacted`` and whatever a new release adds: every
line not mapped to an event is kept as a raw record. An ``error`` event is a
non-fatal error; a ``task_complete`` carrying an ``error`` is the turn failing
on it (0.171.0, a model error). Rollouts from before
that shape (a bare metadata line, then bare response items) are read too;
they carry no token counts.

Usage comes from ``event_msg/token_count``: ``info.total_token_usage`` is the
thread's running total, so a call's usage is the difference from the last
total. A ``token_count`` whose total did not move (codex re-emits the last one
when only its rate limits changed) is no call. A total smaller than the last
one in any figure is a counter that started again, and counts whole. Only
the total is used, never ``last_token_usage`` beside it, so nothing is
counted twice; ``token_usage_record`` (0.171.0: the same calls again, by
response id) is kept as a record for the same reason. Counts follow OpenAI's
convention: ``input_tokens`` includes ``cached_input_tokens`` (subtracted:
:func:`~tackroom.families.base.fresh_input`) and ``output_tokens`` includes
``reasoning_output_tokens``.

``codex exec resume`` appends to the thread's own rollout (0.171.0), its
counter going on from the earlier runs: the deltas count each call once. A
fork or a spawned subagent gets its own rollout that starts with its own
``session_meta``, then the parent's ``session_meta`` and the parent's history
copied, ``token_count`` lines included (the replay that made other tools count a
parent's usage again in every fork). The copied part (from the parent's
``session_meta``, or from the start in a rollout whose own names a
``forked_from_id``) is read as the parent's counter: each copied call's key
is the one the parent's own rollout gives it (``codex:<thread>:<running
totals>``), so a report counts it once. Where the
child's ``session_meta`` says where its own history starts
(``subagent_history_start_ordinal``, 0.171.0), the child's own counter starts
there; older forks go on counting from the parent's totals, under the
parent's thread, so their calls' keys stay distinct from the parent's unless
both reached the very same totals.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from tackroom.families.base import fresh_input, int_or_none, obj, seq, str_or_none
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

COUNTERS = (
    "input_tokens",
    "cached_input_tokens",
    "cache_write_input_tokens",
    "output_tokens",
    "reasoning_output_tokens",
)
"""The figures of ``total_token_usage``, in the order a cursor keeps them."""
_BARE_ITEMS = frozenset(
    {
        "message",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "reasoning",
    }
)
LINEAGES = 16
"""Running totals a cursor keeps (this thread's and the copied parents'): a bound whatever a file holds."""
_THREAD = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$")


class CodexTranscripts(JsonLinesReader):
    """Reads ``rollout-*.jsonl`` files, main threads, subagents and forks alike."""

    # The fast path parses the counters, the threads' metadata and the turns' models: all usage needs.
    needles = (b'"token_count"', b'"session_meta"', b'"turn_context"')

    def line(self, reading: Reading, number: int, data: dict[str, Any]) -> Iterator[TraceItem]:
        kind = str_or_none(data.get("type"))
        timestamp = str_or_none(data.get("timestamp"))
        payload = obj(data.get("payload"))
        subtype = str_or_none(payload.get("type"))
        if "payload" not in data:
            # Rollouts before the {timestamp, type, payload} lines: a bare meta line first, then bare items.
            if kind in _BARE_ITEMS:
                kind, subtype, payload = "response_item", kind, data
            elif kind is None and number == 1 and isinstance(data.get("id"), str):
                kind, payload = "session_meta", data
        state, meta = reading.state, reading.meta
        if kind == "session_meta" and "session" not in state:
            yield from _own_meta(reading, number, timestamp, payload)
            return
        session = _session(reading.path, state)
        info = meta.get(session)
        if info is None:
            info = meta[session] = SessionMeta(session)
        info.saw(timestamp)
        if kind == "session_meta":
            # Another thread's metadata inside this rollout: the history copied from the parent starts here.
            foreign = str_or_none(payload.get("id"))
            if foreign and foreign != session:
                state["lineage"] = foreign
        elif kind == "turn_context":
            if model := str_or_none(payload.get("model")):
                state["model"] = model
        elif kind == "event_msg" and subtype == "token_count":
            usage = _usage(data, payload, state, session, number, timestamp)
            if usage is not None:
                info.saw(timestamp, usage.model)
                yield usage
                return
        if reading.usage_only:
            return
        for event in _events(kind, subtype, payload):
            yield TraceEvent(session, event, timestamp, str_or_none(state.get("model")), number)


def _own_meta(
    reading: Reading, number: int, timestamp: str | None, payload: dict[str, Any]
) -> Iterator[TraceItem]:
    state = reading.state
    session = str_or_none(payload.get("id")) or _session(reading.path, state)
    state["session"] = session
    start = int_or_none(payload.get("subagent_history_start_ordinal"))
    if start is not None:
        state["own_from"] = start
    info = reading.meta[session] = SessionMeta(session, cwd=str_or_none(payload.get("cwd")))
    spawn = obj(obj(obj(payload.get("source")).get("subagent")).get("thread_spawn"))
    info.parent_id = (
        str_or_none(payload.get("forked_from_id"))
        or str_or_none(spawn.get("parent_thread_id"))
        or str_or_none(payload.get("parent_thread_id"))
    )
    if (forked := str_or_none(payload.get("forked_from_id"))) and forked != session:
        # A fork's copied history is the parent's, whether or not the parent's session_meta is copied with it.
        state["lineage"] = forked
    info.agent = str_or_none(payload.get("agent_role")) or str_or_none(spawn.get("agent_role"))
    info.saw(str_or_none(payload.get("timestamp")) or timestamp)
    yield TraceEvent(session, SessionStarted(session_id=session), timestamp, line=number)


def _session(path: Path, state: dict[str, Any]) -> str:
    """The thread this rollout belongs to: its first ``session_meta``'s id, else the one in its name."""
    known = state.get("session")
    if isinstance(known, str):
        return known
    found = _THREAD.search(path.stem)
    return found.group(1) if found else path.stem


def _lineage(data: dict[str, Any], state: dict[str, Any], session: str) -> str:
    """Whose counter a ``token_count`` line carries: a parent's in the copied history, else this thread's."""
    lineage = state.get("lineage")
    if not isinstance(lineage, str):
        return session
    own_from = state.get("own_from")
    ordinal = int_or_none(data.get("ordinal"))
    if isinstance(own_from, int) and ordinal is not None and ordinal >= own_from:
        return session
    return lineage


def _usage(
    data: dict[str, Any],
    payload: dict[str, Any],
    state: dict[str, Any],
    session: str,
    number: int,
    timestamp: str | None,
) -> TraceEvent | None:
    info = payload.get("info")
    if not isinstance(info, dict):
        return None  # a token_count with only rate limits in it
    total = info.get("total_token_usage")
    model = str_or_none(state.get("model"))
    if not isinstance(total, dict):
        last = info.get("last_token_usage")
        if not isinstance(last, dict):
            return None
        # No running total to take a difference from: the call's own figures, with no key to match it by.
        usage = _figures([int_or_none(last.get(name)) for name in COUNTERS])
        return (
            TraceEvent(session, UsageReport(usage=usage), timestamp, model, number)
            if usage.reported
            else None
        )
    current = [int_or_none(total.get(name)) for name in COUNTERS]
    if all(value is None for value in current):
        return None
    lineage = _lineage(data, state, session)
    totals = state.setdefault("totals", {})
    if not isinstance(totals, dict):
        totals = state["totals"] = {}
    previous = totals.pop(lineage, None)
    totals[lineage] = current
    while len(totals) > LINEAGES:
        del totals[next(iter(totals))]
    if previous == current:
        return None  # re-emitted (rate limits changed), not a call
    if isinstance(previous, list) and len(previous) == len(COUNTERS) and not _restarted(previous, current):
        pairs = zip(previous, current, strict=True)
        delta = [None if c is None else c - (p if isinstance(p, int) else 0) for p, c in pairs]
    else:
        delta = current
    usage = _figures(delta)
    key = "codex:" + lineage + ":" + ",".join("-" if value is None else str(value) for value in current)
    return TraceEvent(session, UsageReport(usage=usage), timestamp, model, number, key)


def _restarted(previous: list[Any], current: list[int | None]) -> bool:
    return any(isinstance(p, int) and c is not None and c < p for p, c in zip(previous, current, strict=True))


def _figures(values: list[int | None]) -> Usage:
    prompt, cached, written, output, reasoning = values
    return Usage(
        input=fresh_input(prompt, cached),
        output=output,
        cache_read=cached,
        cache_write=written,
        reasoning=reasoning,
    )


def _events(kind: str | None, subtype: str | None, payload: dict[str, Any]) -> list[Event]:
    raw = orjson.dumps({"type": kind, "payload": payload}).decode()
    record: list[Event] = [Record(raw, record_type=f"{kind}/{subtype}" if subtype else kind)]
    if kind == "response_item":
        events = _item(subtype, payload)
        return events if events is not None else record
    if kind == "event_msg" and subtype in ("error", "stream_error"):
        message = str_or_none(payload.get("message")) or ""
        return [ErrorEvent(raw, message=message, fatal=False)]
    if kind == "event_msg" and subtype == "task_complete" and isinstance(error := payload.get("error"), dict):
        # The turn ended on a model error (0.171.0: the API's error body as the message).
        return [ErrorEvent(raw, message=str_or_none(error.get("message")) or "", fatal=True)]
    return record


def _item(subtype: str | None, payload: dict[str, Any]) -> list[Event] | None:
    """The events of one ``response_item``, or None for an item kept as a record."""
    if subtype == "message":
        role = payload.get("role")
        texts = [
            text
            for part in seq(payload.get("content"))
            if isinstance(text := obj(part).get("text"), str)
            and obj(part).get("type") in ("input_text", "output_text", "text")
        ]
        if role == "user":
            return [UserText(text=text) for text in texts]
        if role == "assistant":
            return [AssistantText(text=text) for text in texts]
        return None  # developer and system messages: instructions, kept raw
    if subtype in ("function_call", "custom_tool_call", "local_shell_call"):
        name = str_or_none(payload.get("name")) or subtype
        if namespace := str_or_none(payload.get("namespace")):
            name = f"{namespace}__{name}"
        arguments = payload.get("arguments") if "arguments" in payload else payload.get("input")
        if subtype == "local_shell_call":
            arguments = payload.get("action")
        if isinstance(arguments, str) and subtype == "function_call":
            with contextlib.suppress(orjson.JSONDecodeError):  # else kept as the string the model wrote
                arguments = orjson.loads(arguments)
        return [ToolCall(name=name, call_id=str_or_none(payload.get("call_id")), input=arguments)]
    if subtype in ("function_call_output", "custom_tool_call_output"):
        output = payload.get("output")
        return [ToolResult(call_id=str_or_none(payload.get("call_id")), output=_output(output))]
    return None


def _output(output: Any) -> str | None:
    """A tool output as text: a string, the text of its parts, or ``{"content": ...}`` (older releases)."""
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return "".join(text for part in output if isinstance(text := obj(part).get("text"), str))
    if isinstance(output, dict):
        return _output(output.get("content"))
    return None
