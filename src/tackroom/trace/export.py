"""A session read back (:class:`~tackroom.trace.model.Trace`) exported for other tools.

Two formats, both built from the trace alone, without inventing a figure: a
count the transcript does not carry is left out, never written as 0.

* :func:`atif`: Harbor's Agent Trajectory Interchange Format (ATIF-v1.7,
  ``trajectory.json``). A user's text is a ``user`` step; one model call (the
  text and tool calls of one message, its usage) is an ``agent`` step whose
  ``observation`` holds its tool calls' results; a subagent's session is an
  embedded trajectory in ``subagent_trajectories``, referenced from the result
  of the tool call that started it.
* :func:`otel`: an OTLP/JSON ``ExportTraceServiceRequest`` following the
  OpenTelemetry GenAI semantic conventions: an ``invoke_agent`` span per
  session, a ``chat`` span per model call, an ``execute_tool`` span per tool
  call; a subagent's session is a child of the tool call that started it. Ids
  are derived from the session id, so exporting twice gives the same trace.
  :func:`send_otlp` posts it to a collector.

Token conventions. tackroom's ``input`` excludes cached tokens and
``cache_read`` / ``cache_write`` are additive to it (Anthropic's convention);
``reasoning`` is part of ``output``. ATIF's ``prompt_tokens`` and the GenAI
``gen_ai.usage.input_tokens`` both count the whole prompt, cached parts
included, so both are ``input + cache_read + cache_write``; ATIF's
``cached_tokens`` is ``cache_read`` (a subset of ``prompt_tokens``), and the
cache write goes to ``metrics.extra.cache_creation_input_tokens`` as the ATIF
RFC asks. A cache figure the harness does not report at all (an OpenAI-style
log has no cache write) adds nothing; one reported in part or contradicted
(``unknown``) makes the prompt total unknown, so it is left out.

Every string of an export passes through :func:`redact`: the credential
shapes :func:`tackroom.redact.redact_text` knows (URL user info, credential
headers, bearer tokens) and provider API keys (``sk-ant-...``, ``sk-...``,
``AKIA...``, ``ghp_...``, ``AIza...``, ``xox.-...``) are replaced by
``<redacted>``, and so is any value passed as ``secrets``.
"""

from __future__ import annotations

import hashlib
import json
import re
import urllib.error
import urllib.request
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tackroom import __version__
from tackroom.errors import TraceError
from tackroom.redact import redact_text
from tackroom.trace.events import (
    AssistantText,
    ErrorEvent,
    Finished,
    Record,
    ToolCall,
    ToolResult,
    Usage,
    UsageReport,
    UserText,
)
from tackroom.trace.model import Trace, TraceEvent

__all__ = ["ATIF_VERSION", "atif", "otel", "redact", "send_otlp"]

ATIF_VERSION = "ATIF-v1.7"
"""The ATIF release :func:`atif` writes (Harbor's ``harbor.models.trajectories``)."""
MAX_ISSUES = 100
"""How many of a session's unreadable lines a trajectory lists (``extra.issues``); the count says the rest."""


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with credentials hidden: what :func:`~tackroom.redact.redact_text` finds, keys, secrets."""
    return redact_text(text, secrets)


def _redact_all(value: Any, secrets: tuple[str, ...]) -> Any:
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {key: _redact_all(item, secrets) for key, item in value.items()}
    if isinstance(value, list):
        return [_redact_all(item, secrets) for item in value]
    return value


# --- one session as model calls -------------------------------------------------------------


@dataclass
class _Call:
    """One model call: the text and tool calls of one message, its usage, the results of its tools."""

    key: str | None = None
    model: str | None = None
    first: TraceEvent | None = None
    last: TraceEvent | None = None
    texts: list[str] = field(default_factory=list)
    tools: list[TraceEvent] = field(default_factory=list)
    results: list[TraceEvent] = field(default_factory=list)
    keyed: dict[str, Usage] = field(default_factory=dict)
    """Usage per call key, the last report winning (a streamed message repeats it)."""
    unkeyed: list[Usage] = field(default_factory=list)

    def add(self, item: TraceEvent) -> None:
        self.first = self.first or item
        self.last = item
        self.model = self.model or item.model
        event = item.event
        if isinstance(event, AssistantText):
            self.texts.append(event.text)
        elif isinstance(event, ToolCall):
            self.tools.append(item)
        elif isinstance(event, UsageReport):
            if item.key is None:
                self.unkeyed.append(event.usage)
            else:
                self.key = self.key or item.key
                self.keyed[item.key] = event.usage

    def usage(self) -> Usage:
        return sum((*self.keyed.values(), *self.unkeyed), Usage())

    def call_ids(self) -> set[str]:
        return {c.event.call_id for c in self.tools if isinstance(c.event, ToolCall) and c.event.call_id}


@dataclass
class _Turn:
    """A step of the session in order: a user's text, a model call, or something the harness reported."""

    source: str  # "user", "agent", "system"
    item: TraceEvent
    call: _Call | None = None
    text: str = ""
    orphans: list[TraceEvent] = field(default_factory=list)
    """Tool results whose call is not in this session (a system step's observation)."""


_AGENT_EVENTS = (AssistantText, ToolCall, UsageReport)


def _turns(trace: Trace) -> list[_Turn]:
    """The session's events as steps: the lines of one model call make one agent step."""
    turns: list[_Turn] = []
    by_call_id: dict[str, _Call] = {}
    by_key: dict[str, _Call] = {}
    for unit in _lines(trace.events):
        key = next((i.key for i in unit if isinstance(i.event, UsageReport) and i.key), None)
        call: _Call | None = None
        for item in unit:
            if isinstance(item.event, _AGENT_EVENTS):
                call = call or _call_for(key, item, turns, by_key)
                call.add(item)
                by_call_id.update(dict.fromkeys(call.call_ids(), call))
            else:
                _place(item, turns, by_call_id)
    return turns


def _call_for(key: str | None, head: TraceEvent, turns: list[_Turn], by_key: dict[str, _Call]) -> _Call:
    """The model call a line's text, tool calls and usage belong to: its key's, the open one, or a new one."""
    # A streamed message's later blocks join its step even when a tool result came between.
    call = by_key.get(key) if key else None
    if call is None:
        call = turns[-1].call if turns and turns[-1].source == "agent" else None
        if call is None or call.results or (key and call.key and key != call.key):
            call = _Call()
            turns.append(_Turn("agent", head, call))
        if key:
            by_key[key] = call
    return call


def _place(item: TraceEvent, turns: list[_Turn], by_call_id: dict[str, _Call]) -> None:
    """A user's text, a tool's result (with its call), an error or a final text, in order."""
    event = item.event
    if isinstance(event, UserText):
        turns.append(_Turn("user", item, text=event.text))
    elif isinstance(event, ToolResult):
        owner = by_call_id.get(event.call_id or "")
        if owner is not None:
            owner.results.append(item)
        elif turns and turns[-1].source == "system" and turns[-1].orphans:
            turns[-1].orphans.append(item)
        else:
            turns.append(_Turn("system", item, orphans=[item]))
    elif isinstance(event, ErrorEvent):
        turns.append(_Turn("system", item, text=f"error: {event.message}"))
    elif isinstance(event, Finished) and event.final_text:
        last = turns[-1].call if turns and turns[-1].source == "agent" else None
        if last is None or event.final_text not in last.texts:
            call = _Call()
            call.add(
                TraceEvent(item.session_id, AssistantText(text=event.final_text), item.timestamp, item.model)
            )
            turns.append(_Turn("agent", item, call))


def _lines(events: list[TraceEvent]) -> Iterator[list[TraceEvent]]:
    """Events in runs written by one line (a streamed block: its text or tool call, then its usage)."""
    unit: list[TraceEvent] = []
    for item in events:
        if isinstance(item.event, Record):
            continue
        if unit and (item.line != unit[-1].line or item.line == 0):
            yield unit
            unit = []
        unit.append(item)
    if unit:
        yield unit


def _figures(usage: Usage) -> dict[str, int]:
    """The prompt total (cached parts included), output, cache read and write, reasoning: what is known."""
    out: dict[str, int] = {}
    if usage.input is not None and not {"cache_read", "cache_write"} & usage.unknown:
        out["prompt"] = usage.input + (usage.cache_read or 0) + (usage.cache_write or 0)
    for name in ("output", "cache_read", "cache_write", "reasoning"):
        value = getattr(usage, name)
        if value is not None:
            out[name] = value
    return out


def _spawner(child: Trace, calls: list[TraceEvent]) -> str | None:
    """The tool call that started ``child``: the only one whose input holds the child's first prompt."""
    prompt = next((e.event.text for e in child.events if isinstance(e.event, UserText)), None)
    if not prompt:
        return None
    found = [
        c.event.call_id
        for c in calls
        if isinstance(c.event, ToolCall)
        and c.event.call_id
        and isinstance(c.event.input, dict)
        and prompt in c.event.input.values()
    ]
    return found[0] if len(found) == 1 else None


def _timestamp(value: str | None) -> str | None:
    """``value`` if it is an ISO 8601 time (ATIF checks it), else None."""
    return value if value is not None and _nanos(value) is not None else None


def _nanos(value: str | None) -> int | None:
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None  # a time without its zone is not a point in time
    seconds = int(moment.timestamp())
    if seconds < 0:
        return None  # before 1970: OTLP's times are unsigned, and no harness ran then
    return seconds * 1_000_000_000 + moment.microsecond * 1000


# --- ATIF -----------------------------------------------------------------------------------


def atif(trace: Trace, *, version: str | None = None, secrets: Iterable[str] = ()) -> dict[str, Any]:
    """``trace`` as an ATIF trajectory (``trajectory.json``), its subagents embedded.

    ``version`` is the harness's version where the caller knows it (a run's
    result); a transcript alone does not say, and ATIF requires one, so it is
    then ``"unknown"``. Values in ``secrets`` are redacted wherever they appear.

    Raises:
        TraceError: the session has nothing ATIF can hold (no text, no model call, no tool result).
    """
    trajectory: dict[str, Any] = _redact_all(_trajectory(trace, version, embedded=False), tuple(secrets))
    return trajectory


def _trajectory(trace: Trace, version: str | None, *, embedded: bool) -> dict[str, Any]:
    turns = _turns(trace)
    calls = [tool for turn in turns if turn.call for tool in turn.call.tools]
    spawned: dict[str, list[Trace]] = {}
    unlinked: list[Trace] = []
    embedded_children: list[dict[str, Any]] = []
    empty: list[str] = []
    children: list[Trace] = []
    for child in trace.children:
        try:
            embedded_children.append(_trajectory(child, version, embedded=True))
        except TraceError:
            empty.append(child.session_id)  # ATIF has no trajectory without steps: named in extra instead
            continue
        children.append(child)
    for child in children:
        call_id = _spawner(child, calls)
        if call_id is None:
            unlinked.append(child)
        else:
            spawned.setdefault(call_id, []).append(child)
    steps = [_step(number, turn, spawned) for number, turn in enumerate(turns, 1)]
    if unlinked:
        results = [{"subagent_trajectory_ref": [_ref(child)]} for child in unlinked]
        steps.append(
            {
                "step_id": len(steps) + 1,
                "source": "system",
                "message": "",
                "observation": {"results": results},
            }
        )
    if not steps:
        raise TraceError(
            f"session {trace.session_id}: nothing to export as ATIF (no text, model call or tool result)"
        )
    agent: dict[str, Any] = {"name": trace.meta.agent if embedded and trace.meta.agent else trace.harness}
    agent["version"] = version or "unknown"
    if len(trace.meta.models) == 1:
        agent["model_name"] = trace.meta.models[0]
    out: dict[str, Any] = {"schema_version": ATIF_VERSION, "session_id": trace.session_id}
    if embedded:
        out["trajectory_id"] = trace.session_id
    out["agent"] = agent
    out["steps"] = steps
    out["final_metrics"] = _final_metrics(turns, len(steps))
    extra: dict[str, Any] = {"harness": trace.harness}
    if trace.meta.cwd:
        extra["cwd"] = trace.meta.cwd
    if trace.meta.parent_id:
        extra["parent_session_id"] = trace.meta.parent_id
    if trace.issues:
        extra["issues"] = [str(issue) for issue in trace.issues[:MAX_ISSUES]]
        if len(trace.issues) > MAX_ISSUES:
            extra["issues_total"] = len(trace.issues)
    if empty:
        extra["subagents_without_steps"] = empty
    out["extra"] = extra
    if embedded_children:
        out["subagent_trajectories"] = embedded_children
    return out


def _ref(child: Trace) -> dict[str, Any]:
    ref: dict[str, Any] = {"trajectory_id": child.session_id, "session_id": child.session_id}
    if child.meta.agent:
        ref["extra"] = {"agent": child.meta.agent}
    return ref


def _step(number: int, turn: _Turn, spawned: dict[str, list[Trace]]) -> dict[str, Any]:
    step: dict[str, Any] = {"step_id": number}
    when = _timestamp(turn.item.timestamp)
    if when:
        step["timestamp"] = when
    step["source"] = turn.source
    call = turn.call
    if call is None:
        step["message"] = turn.text
        if turn.orphans:
            step["observation"] = {"results": [_orphan(item) for item in turn.orphans]}
        if isinstance(turn.item.event, ErrorEvent):
            step["extra"] = {"error": True, "fatal": turn.item.event.fatal}
        return step
    if call.model:
        step["model_name"] = call.model
    step["message"] = "".join(call.texts)
    extra: dict[str, Any] = {}
    if call.tools:
        step["tool_calls"] = [_tool_call(number, index, item, extra) for index, item in enumerate(call.tools)]
    results = [_result(item, spawned) for item in call.results]
    if results:
        step["observation"] = {"results": results}
    metrics = _metrics(call)
    if metrics:
        step["metrics"] = metrics
    if extra:
        step["extra"] = extra
    return step


def _tool_call(number: int, index: int, item: TraceEvent, extra: dict[str, Any]) -> dict[str, Any]:
    event = item.event
    assert isinstance(event, ToolCall)
    call_id = event.call_id
    if not call_id:
        # ATIF requires an id; the transcript gave none, so the step says this one is tackroom's.
        call_id = f"step-{number}-call-{index + 1}"
        extra.setdefault("generated_tool_call_ids", []).append(call_id)
    arguments = (
        event.input
        if isinstance(event.input, dict)
        else {}
        if event.input is None
        else {"input": event.input}
    )
    if not isinstance(event.input, dict) and event.input is not None:
        extra.setdefault("wrapped_arguments", []).append(call_id)
    return {"tool_call_id": call_id, "function_name": event.name, "arguments": arguments}


def _result(item: TraceEvent, spawned: dict[str, list[Trace]]) -> dict[str, Any]:
    event = item.event
    assert isinstance(event, ToolResult)
    result: dict[str, Any] = {"source_call_id": event.call_id}
    if event.output is not None:
        result["content"] = event.output
    children = spawned.get(event.call_id or "")
    if children:
        result["subagent_trajectory_ref"] = [_ref(child) for child in children]
    return result


def _orphan(item: TraceEvent) -> dict[str, Any]:
    # Its call is not in this session: ATIF only lets a result name a call of its own step.
    event = item.event
    assert isinstance(event, ToolResult)
    result: dict[str, Any] = {}
    if event.output is not None:
        result["content"] = event.output
    return result


def _metrics(call: _Call) -> dict[str, Any]:
    if not call.keyed and not call.unkeyed:
        return {}
    figures = _figures(call.usage())
    metrics: dict[str, Any] = {}
    if "prompt" in figures:
        metrics["prompt_tokens"] = figures["prompt"]
    if "output" in figures:
        metrics["completion_tokens"] = figures["output"]
    if "cache_read" in figures:
        metrics["cached_tokens"] = figures["cache_read"]
    extra: dict[str, Any] = {}
    if "cache_write" in figures:
        extra["cache_creation_input_tokens"] = figures["cache_write"]
    if "reasoning" in figures:
        extra["reasoning_tokens"] = figures["reasoning"]
    unknown = sorted(call.usage().unknown)
    if unknown:
        extra["unknown"] = unknown
    if extra:
        metrics["extra"] = extra
    return metrics


def _final_metrics(turns: list[_Turn], steps: int) -> dict[str, Any]:
    """Totals over the session's own model calls, each call key counted once (its last report)."""
    keyed: dict[str, Usage] = {}
    unkeyed: list[Usage] = []
    for turn in turns:
        if turn.call is not None:
            keyed.update(turn.call.keyed)
            unkeyed.extend(turn.call.unkeyed)
    final: dict[str, Any] = {}
    if keyed or unkeyed:
        total = sum((*keyed.values(), *unkeyed), Usage())
        figures = _figures(total)
        for name, key in (("prompt", "total_prompt_tokens"), ("output", "total_completion_tokens")):
            if name in figures:
                final[key] = figures[name]
        if "cache_read" in figures:
            final["total_cached_tokens"] = figures["cache_read"]
        extra = {k: figures[k] for k in ("cache_write", "reasoning") if k in figures}
        if extra:
            final["extra"] = {
                ("total_cache_creation_input_tokens" if k == "cache_write" else "total_reasoning_tokens"): v
                for k, v in extra.items()
            }
    final["total_steps"] = steps
    return final


# --- OpenTelemetry --------------------------------------------------------------------------

_INTERNAL, _CLIENT = 1, 3
_STATUS_ERROR = 2


def otel(
    trace: Trace, *, provider: str | None = None, content: bool = False, secrets: Iterable[str] = ()
) -> dict[str, Any]:
    """``trace`` as an OTLP/JSON ``ExportTraceServiceRequest`` of GenAI spans.

    ``provider`` is ``gen_ai.provider.name`` (``"anthropic"``, ``"openai"``...)
    where the caller knows it: a transcript does not say which service
    answered, so without it the attribute is left out. With ``content`` the
    tool calls' arguments and results are recorded (``gen_ai.tool.call.arguments``
    / ``.result``, opt-in in the conventions), redacted.

    Raises:
        TraceError: the session has no timestamp at all, so its spans cannot be placed in time.
    """
    spans: list[dict[str, Any]] = []
    trace_id = _hex(f"trace:{trace.session_id}", 16)
    _session_spans(trace, trace_id, None, provider, content, spans, tuple(secrets))
    resource = {"attributes": _attributes({"service.name": trace.harness})}
    scope = {"name": "tackroom", "version": __version__}
    return {"resourceSpans": [{"resource": resource, "scopeSpans": [{"scope": scope, "spans": spans}]}]}


def _hex(seed: str, size: int) -> str:
    digest = hashlib.sha256(seed.encode("utf-8", "surrogatepass")).hexdigest()[: size * 2]
    return digest if digest.strip("0") else "1".rjust(size * 2, "0")  # an all-zero id is invalid


def _session_spans(
    trace: Trace,
    trace_id: str,
    parent: tuple[str, int] | None,
    provider: str | None,
    content: bool,
    spans: list[dict[str, Any]],
    secrets: tuple[str, ...],
) -> None:
    times = [n for n in (_nanos(e.timestamp) for e in trace.events) if n is not None]
    times += [n for n in (_nanos(trace.meta.started), _nanos(trace.meta.ended)) if n is not None]
    if not times and parent is None:
        raise TraceError(
            f"session {trace.session_id}: no timestamp in its transcript, so no span can be placed"
        )
    start, end = (min(times), max(times)) if times else (parent[1], parent[1]) if parent else (0, 0)
    session = trace.session_id
    # Under its parent span: a session id seen twice (a resumed subagent) still gets ids of its own.
    span_id = _hex(f"span:{trace_id}:{parent[0] if parent else ''}:{session}:session", 8)
    agent = trace.meta.agent or trace.harness
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": agent,
        "gen_ai.conversation.id": session,
    }
    if trace.meta.agent:
        attrs["gen_ai.agent.id"] = session
    if provider:
        attrs["gen_ai.provider.name"] = provider
    if len(trace.meta.models) == 1:
        attrs["gen_ai.request.model"] = trace.meta.models[0]
    fatal = next((e.event for e in trace.events if isinstance(e.event, ErrorEvent) and e.event.fatal), None)
    status = {"code": _STATUS_ERROR, "message": redact(fatal.message, secrets)} if fatal else None
    if fatal:
        attrs["error.type"] = "_OTHER"
    spans.append(
        _span(
            trace_id,
            span_id,
            parent[0] if parent else None,
            f"invoke_agent {agent}",
            _INTERNAL,
            start,
            end,
            attrs,
            status,
        )
    )
    turns = _turns(trace)
    tool_spans: dict[str, tuple[str, int]] = {}
    for number, turn in enumerate(turns, 1):
        if turn.call is None:
            continue
        _chat_span(trace_id, span_id, session, number, turn.call, provider, start, spans)
        for index, item in enumerate(turn.call.tools):
            _tool_span(
                trace_id,
                span_id,
                session,
                number,
                index,
                item,
                turn.call,
                content,
                start,
                spans,
                tool_spans,
                secrets,
            )
    calls = [tool for turn in turns if turn.call for tool in turn.call.tools]
    for child in trace.children:
        call_id = _spawner(child, calls)
        linked = tool_spans.get(call_id or "")
        _session_spans(child, trace_id, linked or (span_id, start), provider, content, spans, secrets)


def _chat_span(
    trace_id: str,
    parent: str,
    session: str,
    number: int,
    call: _Call,
    provider: str | None,
    fallback: int,
    spans: list[dict[str, Any]],
) -> None:
    first = _nanos(call.first.timestamp if call.first else None) or fallback
    last = _nanos(call.last.timestamp if call.last else None) or first
    attrs: dict[str, Any] = {"gen_ai.operation.name": "chat", "gen_ai.conversation.id": session}
    if provider:
        attrs["gen_ai.provider.name"] = provider
    if call.model:
        # The transcript records the model that answered; what was asked for is not always the same.
        attrs["gen_ai.response.model"] = call.model
    if call.key:
        attrs["tackroom.call.key"] = call.key
    if call.keyed or call.unkeyed:
        figures = _figures(call.usage())
        for name, attr in (
            ("prompt", "gen_ai.usage.input_tokens"),
            ("output", "gen_ai.usage.output_tokens"),
            ("cache_read", "gen_ai.usage.cache_read.input_tokens"),
            ("cache_write", "gen_ai.usage.cache_creation.input_tokens"),
            ("reasoning", "gen_ai.usage.reasoning.output_tokens"),
        ):
            if name in figures:
                attrs[attr] = figures[name]
    name = f"chat {call.model}" if call.model else "chat"
    span_id = _hex(f"span:{parent}:chat:{number}", 8)
    spans.append(_span(trace_id, span_id, parent, name, _CLIENT, first, max(first, last), attrs, None))


def _tool_span(
    trace_id: str,
    parent: str,
    session: str,
    number: int,
    index: int,
    item: TraceEvent,
    call: _Call,
    content: bool,
    fallback: int,
    spans: list[dict[str, Any]],
    tool_spans: dict[str, tuple[str, int]],
    secrets: tuple[str, ...],
) -> None:
    event = item.event
    assert isinstance(event, ToolCall)
    result = next(
        (r for r in call.results if isinstance(r.event, ToolResult) and r.event.call_id == event.call_id),
        None,
    )
    start = _nanos(item.timestamp) or fallback
    end = _nanos(result.timestamp if result else None) or start
    attrs: dict[str, Any] = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": event.name}
    if event.call_id:
        attrs["gen_ai.tool.call.id"] = event.call_id
    status = None
    if result is not None and isinstance(result.event, ToolResult):
        if result.event.is_error:
            attrs["error.type"] = "_OTHER"
            status = {"code": _STATUS_ERROR}
        if content and result.event.output is not None:
            attrs["gen_ai.tool.call.result"] = redact(result.event.output, secrets)
    if content and event.input is not None:
        arguments = json.dumps(event.input, ensure_ascii=False, default=str)
        attrs["gen_ai.tool.call.arguments"] = redact(arguments, secrets)
    span_id = _hex(f"span:{parent}:tool:{number}:{index}:{event.call_id}", 8)
    if event.call_id:
        tool_spans[event.call_id] = (span_id, start)
    spans.append(
        _span(
            trace_id,
            span_id,
            parent,
            f"execute_tool {event.name}",
            _INTERNAL,
            start,
            max(start, end),
            attrs,
            status,
        )
    )


def _span(
    trace_id: str,
    span_id: str,
    parent: str | None,
    name: str,
    kind: int,
    start: int,
    end: int,
    attrs: dict[str, Any],
    status: dict[str, Any] | None,
) -> dict[str, Any]:
    span: dict[str, Any] = {"traceId": trace_id, "spanId": span_id}
    if parent:
        span["parentSpanId"] = parent
    span.update(
        name=name,
        kind=kind,
        startTimeUnixNano=str(start),
        endTimeUnixNano=str(end),
        attributes=_attributes(attrs),
    )
    if status:
        span["status"] = status
    return span


def _attributes(attrs: dict[str, Any]) -> list[dict[str, Any]]:
    """OTLP/JSON key-values: an int is a string in ``intValue`` (int64 in the JSON mapping)."""
    out: list[dict[str, Any]] = []
    for key, value in attrs.items():
        if isinstance(value, bool):
            typed: dict[str, Any] = {"boolValue": value}
        elif isinstance(value, int):
            typed = {"intValue": str(value)}
        else:
            typed = {"stringValue": str(value)}
        out.append({"key": key, "value": typed})
    return out


# --- OTLP/HTTP ------------------------------------------------------------------------------


def send_otlp(payload: dict[str, Any], url: str, *, timeout: float = 10) -> None:
    """POST ``payload`` (from :func:`otel`) to an OTLP/HTTP collector as JSON.

    ``url`` is the collector's base (``http://localhost:4318``) or its traces
    endpoint; ``/v1/traces`` is added unless it is already there.

    Raises:
        TraceError: the URL is not http(s), the collector cannot be reached or answers with an error status.
    """
    endpoint = _endpoint(url)
    shown = redact(endpoint)
    body = json.dumps(payload, ensure_ascii=False).encode("utf-8", "surrogatepass")
    request = urllib.request.Request(
        endpoint, data=body, method="POST", headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            response.read(64 * 1024)
    except urllib.error.HTTPError as exc:
        detail = exc.read(512).decode("utf-8", "replace").strip()
        tail = f": {redact(detail)}" if detail else ""
        raise TraceError(f"OTLP collector {shown} answered HTTP {exc.code} {exc.reason}{tail}") from None
    except urllib.error.URLError as exc:
        raise TraceError(f"OTLP collector {shown} cannot be reached: {exc.reason}") from None
    except TimeoutError:
        raise TraceError(f"OTLP collector {shown} did not answer within {timeout:g}s") from None
    except OSError as exc:
        raise TraceError(f"OTLP collector {shown}: {exc.strerror or exc}") from None


def _endpoint(url: str) -> str:
    base = url.strip()
    if not re.match(r"^https?://[^/\s]+", base, re.IGNORECASE):
        raise TraceError(f"OTLP collector URL {redact(base)!r} is not an http:// or https:// URL")
    base = base.rstrip("/")
    return base if base.endswith("/v1/traces") else f"{base}/v1/traces"
