"""Exports of a session read back: ATIF trajectories and OpenTelemetry GenAI spans over OTLP/HTTP.

The session is the real Claude Code golden case with three nested subagents,
read with its family's reader. The ATIF output is validated against models
written from Harbor's ATIF-v1.7 schema (``harbor.models.trajectories``: strict,
``extra="forbid"``, with its cross-field rules); the OTLP payload is posted to
a real HTTP server on a thread playing the collector.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from tackroom.adapters.resolve import load_adapters
from tackroom.errors import TraceError
from tackroom.families import get_family
from tackroom.probe.builtin import glob_regex
from tackroom.redact import REDACTED
from tackroom.trace.events import (
    FIGURES,
    AssistantText,
    ErrorEvent,
    Finished,
    Record,
    SessionStarted,
    ToolCall,
    ToolResult,
    Usage,
    UsageReport,
    UserText,
)
from tackroom.trace.export import ATIF_VERSION, atif, otel, redact, send_otlp
from tackroom.trace.model import Cursor, SessionMeta, Trace, TraceEvent, TraceIssue, TranscriptReader

CASE = Path(__file__).parent / "golden" / "claude-code" / "transcripts" / "subagents-2.1.332" / "files"
MAIN = "1bfc3a8c-9a20-4dff-8c1e-48329e059f5e"


# --- the session, read with the real reader -------------------------------------------------


def read_sessions(harness: str, reader: TranscriptReader, paths: list[Path]) -> list[Trace]:
    """The sessions in ``paths``, read whole, subagents nested under their parents: the top-level ones."""
    traces: dict[str, Trace] = {}
    for path in paths:
        for item in reader.read(path, Cursor()):
            if isinstance(item, SessionMeta):
                trace = traces.setdefault(item.session_id, Trace(harness, item))
                trace.meta = item
                trace.sources.append(path)
            elif isinstance(item, TraceEvent):
                traces.setdefault(
                    item.session_id, Trace(harness, SessionMeta(item.session_id))
                ).events.append(item)
            else:
                traces.setdefault("", Trace(harness, SessionMeta(""))).issues.append(item)
    roots = []
    for trace in traces.values():
        parent = trace.meta.parent_id
        if parent and parent in traces and trace.session_id != parent:
            traces[parent].children.append(trace)
        else:
            roots.append(trace)
    return roots


def read_golden() -> Trace:
    """The golden case read whole: the main session with its subagents nested by parent."""
    reader = get_family("claude-code").transcripts()
    assert reader is not None
    (main,) = read_sessions("claude-code", reader, sorted(CASE.rglob("*.jsonl")))
    assert main.session_id == MAIN and not main.issues
    return main


@pytest.fixture(scope="module")
def golden() -> Trace:
    return read_golden()


def _walk(trace: Trace) -> Iterator[Trace]:
    yield trace
    for child in trace.children:
        yield from _walk(child)


# --- ATIF-v1.7, as Harbor's pydantic models define it ---------------------------------------


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class AtifToolCall(_Strict):
    tool_call_id: str
    function_name: str
    arguments: dict[str, Any]


class AtifRef(_Strict):
    trajectory_id: str | None = None
    session_id: str | None = None
    trajectory_path: str | None = None
    extra: dict[str, Any] | None = None

    @model_validator(mode="after")
    def resolvable(self) -> AtifRef:
        assert self.trajectory_id is not None or self.trajectory_path is not None, "unresolvable ref"
        return self


class AtifResult(_Strict):
    source_call_id: str | None = None
    content: str | None = None
    subagent_trajectory_ref: list[AtifRef] | None = None


class AtifObservation(_Strict):
    results: list[AtifResult]


class AtifMetrics(_Strict):
    prompt_tokens: int | None = Field(default=None, ge=0)
    completion_tokens: int | None = Field(default=None, ge=0)
    cached_tokens: int | None = Field(default=None, ge=0)
    cost_usd: float | None = None
    prompt_token_ids: list[int] | None = None
    completion_token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    extra: dict[str, Any] | None = None

    @model_validator(mode="after")
    def cached_within_prompt(self) -> AtifMetrics:
        if self.cached_tokens is not None and self.prompt_tokens is not None:
            assert self.cached_tokens <= self.prompt_tokens, "cached_tokens is a subset of prompt_tokens"
        return self


class AtifStep(_Strict):
    step_id: int = Field(ge=1)
    timestamp: str | None = None
    source: Literal["system", "user", "agent"]
    model_name: str | None = None
    reasoning_effort: str | float | None = None
    message: str
    reasoning_content: str | None = None
    tool_calls: list[AtifToolCall] | None = None
    observation: AtifObservation | None = None
    metrics: AtifMetrics | None = None
    is_copied_context: bool | None = None
    llm_call_count: int | None = Field(default=None, ge=0)
    extra: dict[str, Any] | None = None

    @field_validator("timestamp")
    @classmethod
    def iso(cls, value: str | None) -> str | None:
        if value is not None:
            datetime.fromisoformat(value.replace("Z", "+00:00"))
        return value

    @model_validator(mode="after")
    def agent_only(self) -> AtifStep:
        if self.source != "agent":
            for name in ("model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics"):
                assert getattr(self, name) is None, f"{name} only on agent steps"
        return self


class AtifAgent(_Strict):
    name: str
    version: str
    model_name: str | None = None
    extra: dict[str, Any] | None = None


class AtifFinalMetrics(_Strict):
    total_prompt_tokens: int | None = Field(default=None, ge=0)
    total_completion_tokens: int | None = Field(default=None, ge=0)
    total_cached_tokens: int | None = Field(default=None, ge=0)
    total_cost_usd: float | None = None
    total_steps: int | None = Field(default=None, ge=0)
    extra: dict[str, Any] | None = None


class AtifTrajectory(_Strict):
    schema_version: Literal["ATIF-v1.7"]
    session_id: str | None = None
    trajectory_id: str | None = None
    agent: AtifAgent
    steps: list[AtifStep] = Field(min_length=1)
    notes: str | None = None
    final_metrics: AtifFinalMetrics | None = None
    continued_trajectory_ref: str | None = None
    extra: dict[str, Any] | None = None
    subagent_trajectories: list[AtifTrajectory] | None = None

    @model_validator(mode="after")
    def rules(self) -> AtifTrajectory:
        assert [s.step_id for s in self.steps] == list(range(1, len(self.steps) + 1)), "step ids run from 1"
        for step in self.steps:
            ids = {c.tool_call_id for c in step.tool_calls or []}
            for result in step.observation.results if step.observation else []:
                assert result.source_call_id is None or result.source_call_id in ids, (
                    "result names its step's call"
                )
        subs = [s.trajectory_id for s in self.subagent_trajectories or []]
        assert None not in subs and len(set(subs)) == len(subs), (
            "embedded subagents have unique trajectory ids"
        )
        embedded = set(subs)
        for step in self.steps:
            for result in step.observation.results if step.observation else []:
                for ref in result.subagent_trajectory_ref or []:
                    assert ref.trajectory_id in embedded, "a ref resolves to an embedded trajectory"
        return self


def validate_atif(data: dict[str, Any]) -> AtifTrajectory:
    # Through JSON, as a consumer reads trajectory.json.
    return AtifTrajectory.model_validate_json(json.dumps(data))


def test_the_validator_refuses_what_harbor_refuses(golden: Trace) -> None:
    data = atif(golden)
    validate_atif(data)
    for breaks in (
        lambda d: d.update(schema_version="ATIF-v9"),
        lambda d: d["steps"][0].update(step_id=2),
        lambda d: d["steps"][0].update(metrics={"prompt_tokens": 1}),  # a user step
        lambda d: d["agent"].pop("version"),
        lambda d: d.update(unexpected=1),
        lambda d: d["steps"][0].update(timestamp="yesterday"),
    ):
        broken = json.loads(json.dumps(data))
        breaks(broken)
        with pytest.raises(ValidationError):
            validate_atif(broken)


# --- ATIF from the golden case --------------------------------------------------------------


def test_atif_of_the_golden_session_is_valid_and_whole(golden: Trace) -> None:
    data = atif(golden, version="2.1.332")
    trajectory = validate_atif(data)
    assert data["schema_version"] == ATIF_VERSION
    assert trajectory.session_id == MAIN
    assert trajectory.agent.name == "claude-code"
    assert trajectory.agent.version == "2.1.332"
    assert trajectory.agent.model_name == "claude-opus-5-5"
    assert trajectory.steps[0].source == "user" and trajectory.steps[0].message == "go"
    sources = [s.source for s in trajectory.steps]
    assert "agent" in sources
    calls = [c for s in trajectory.steps for c in s.tool_calls or []]
    expected = [e.event for e in golden.events if isinstance(e.event, ToolCall)]
    assert [(c.tool_call_id, c.function_name, c.arguments) for c in calls] == [
        (e.call_id, e.name, e.input) for e in expected
    ]
    results = [r for s in trajectory.steps for r in (s.observation.results if s.observation else [])]
    answered = [e.event.call_id for e in golden.events if isinstance(e.event, ToolResult)]
    assert [r.source_call_id for r in results] == answered


def test_atif_subagents_are_embedded_and_referenced_from_the_call_that_started_them(golden: Trace) -> None:
    data = atif(golden)
    trajectory = validate_atif(data)
    # Three subagents, each started by the one before: a chain nested three deep.
    depth, level = 0, trajectory
    while level.subagent_trajectories:
        assert len(level.subagent_trajectories) == 1
        child = level.subagent_trajectories[0]
        assert child.trajectory_id == child.session_id and child.session_id.startswith("agent-")
        assert child.agent.name == "helper"  # the subagent's type from its .meta.json
        agent_steps = [s for s in level.steps if s.tool_calls]
        spawning = [
            (c, r)
            for s in agent_steps
            for c in s.tool_calls or []
            for r in (s.observation.results if s.observation else [])
            if r.source_call_id == c.tool_call_id and r.subagent_trajectory_ref
        ]
        assert len(spawning) == 1, "the Agent call's result references the subagent"
        call, result = spawning[0]
        assert call.function_name == "Agent"
        assert result.subagent_trajectory_ref is not None
        assert result.subagent_trajectory_ref[0].trajectory_id == child.trajectory_id
        depth, level = depth + 1, child
    assert depth == 3


def _usage_by_key(trace: Trace) -> dict[str, Usage]:
    found: dict[str, Usage] = {}
    for item in trace.events:
        if isinstance(item.event, UsageReport) and item.key:
            found[item.key] = item.event.usage
    return found


def test_atif_metrics_convert_tackroom_tokens_to_atif_convention(golden: Trace) -> None:
    trajectory = validate_atif(atif(golden))
    by_key = _usage_by_key(golden)
    assert by_key, "the golden session reports usage"
    # prompt_tokens counts the whole prompt (cached parts too); cached_tokens is the cache read.
    total = sum(by_key.values(), Usage())
    assert total.input is not None and total.cache_read is not None and total.cache_write is not None
    final = trajectory.final_metrics
    assert final is not None
    assert final.total_prompt_tokens == total.input + total.cache_read + total.cache_write
    assert final.total_cached_tokens == total.cache_read
    assert final.total_completion_tokens == total.output
    assert final.extra == {"total_cache_creation_input_tokens": total.cache_write}
    assert final.total_steps == len(trajectory.steps)
    assert final.total_cost_usd is None, "no price in a transcript: cost left out, not 0"
    # Per step: each model call once, however many streamed lines repeated its usage.
    steps = [s for s in trajectory.steps if s.metrics]
    assert len(steps) == len(by_key)
    first = next(iter(by_key.values()))
    metrics = steps[0].metrics
    assert metrics is not None
    assert first.input is not None and first.cache_read is not None and first.cache_write is not None
    assert metrics.prompt_tokens == first.input + first.cache_read + first.cache_write
    assert metrics.cached_tokens == first.cache_read
    assert metrics.extra == {"cache_creation_input_tokens": first.cache_write}


def _trace(*events: TraceEvent, harness: str = "claude-code") -> Trace:
    meta = SessionMeta("s1", started="2026-12-01T10:00:00Z", ended="2026-12-01T10:00:09Z")
    return Trace(harness, meta, events=list(events))


def _at(second: int) -> str:
    return f"2026-12-01T10:00:0{second}Z"


def test_atif_never_invents_a_figure() -> None:
    # Output reported, input not (a harness that writes only part of the usage), cache read unknown.
    usage = Usage(output=7, cache_read=None, unknown=frozenset({"cache_read"}))
    trace = _trace(
        TraceEvent("s1", UserText(text="hi"), _at(1), line=1),
        TraceEvent("s1", UsageReport(usage=usage), _at(2), "m", line=2, key="k1"),
    )
    data = atif(trace)
    validate_atif(data)
    metrics = data["steps"][1]["metrics"]
    assert metrics == {"completion_tokens": 7, "extra": {"unknown": ["cache_read"]}}
    assert "total_prompt_tokens" not in data["final_metrics"]
    assert data["final_metrics"]["total_completion_tokens"] == 7
    assert data["agent"]["version"] == "unknown"


def test_atif_of_an_openai_style_session_counts_the_prompt_once() -> None:
    # input excludes the cached part; no cache write is reported (not unknown): prompt = input + read.
    usage = Usage(input=70, output=5, cache_read=30, reasoning=2)
    trace = _trace(
        TraceEvent("s1", UsageReport(usage=usage), _at(1), "gpt-x", line=1, key="r1"), harness="codex"
    )
    metrics = validate_atif(atif(trace)).steps[0].metrics
    assert metrics is not None
    assert (metrics.prompt_tokens, metrics.cached_tokens, metrics.completion_tokens) == (100, 30, 5)
    assert metrics.extra == {"reasoning_tokens": 2}


def test_atif_streamed_duplicates_count_once_and_interleaved_results_stay_valid() -> None:
    early, final = Usage(input=10, output=1), Usage(input=10, output=9, cache_read=0, cache_write=0)
    trace = _trace(
        TraceEvent("s1", UserText(text="do two things"), _at(1), line=1),
        TraceEvent("s1", ToolCall(name="Read", call_id="a", input={"p": 1}), _at(2), "m", line=2),
        TraceEvent("s1", UsageReport(usage=early), _at(2), "m", line=2, key="msg1"),
        TraceEvent("s1", ToolResult(call_id="a", output="one"), _at(3), line=3),
        TraceEvent("s1", ToolCall(name="Read", call_id="b", input="not an object"), _at(4), "m", line=4),
        TraceEvent("s1", UsageReport(usage=final), _at(4), "m", line=4, key="msg1"),
        TraceEvent("s1", ToolResult(call_id="b", output="two", is_error=True), _at(5), line=5),
        TraceEvent("s1", ToolResult(call_id="zzz", output="from nowhere"), _at(6), line=6),
    )
    data = atif(trace)
    trajectory = validate_atif(data)
    agent = [s for s in trajectory.steps if s.source == "agent"]
    assert len(agent) == 1, "one message streamed over two lines is one step"
    assert agent[0].metrics is not None
    assert (agent[0].metrics.prompt_tokens, agent[0].metrics.completion_tokens) == (10, 9)
    assert [c.arguments for c in agent[0].tool_calls or []] == [{"p": 1}, {"input": "not an object"}]
    assert data["steps"][1]["extra"] == {"wrapped_arguments": ["b"]}
    orphan = trajectory.steps[-1]
    assert orphan.source == "system" and orphan.observation is not None
    assert orphan.observation.results[0].source_call_id is None
    assert orphan.observation.results[0].content == "from nowhere"
    assert data["final_metrics"]["total_completion_tokens"] == 9


def test_atif_of_a_session_without_steps_is_an_error() -> None:
    trace = _trace(TraceEvent("s1", SessionStarted(session_id="s1"), _at(1), line=1))
    with pytest.raises(TraceError, match="nothing to export"):
        atif(trace)


def test_atif_drops_a_timestamp_that_is_not_iso() -> None:
    trace = _trace(TraceEvent("s1", UserText(text="x"), "last tuesday", line=1))
    data = atif(trace)
    validate_atif(data)
    assert "timestamp" not in data["steps"][0]


# --- secrets ------------------------------------------------------------------------------------

KEY = "sk-ant-api03-" + "Zx9_" * 20 + "AA"


def _leaky() -> Trace:
    return _trace(
        TraceEvent("s1", UserText(text=f"use {KEY}"), _at(1), line=1),
        TraceEvent(
            "s1",
            ToolCall(name="Bash", call_id="c1", input={"command": f"curl -H 'x-api-key: {KEY}'"}),
            _at(2),
            "m",
            line=2,
        ),
        TraceEvent(
            "s1",
            ToolResult(call_id="c1", output=f"ANTHROPIC_API_KEY={KEY}\nhunter2-password"),
            _at(3),
            line=3,
        ),
    )


def test_a_key_in_tool_output_is_redacted_in_both_exports() -> None:
    trace = _leaky()
    trajectory = json.dumps(atif(trace, secrets=["hunter2-password"]))
    spans = json.dumps(otel(trace, content=True, secrets=["hunter2-password"]))
    for text in (trajectory, spans):
        assert KEY not in text and "sk-ant-" not in text
        assert "hunter2-password" not in text
        assert REDACTED in text
    validate_atif(json.loads(trajectory))


@pytest.mark.parametrize(
    "secret",
    [
        "sk-proj-" + "a1B2" * 10,
        "AKIA" + "ABCDEFGHIJKLMNOP",
        "ghp_" + "x" * 36,
        "AIza" + "S" * 35,
        "xoxb-1234567890-abcdef",
    ],
)
def test_provider_key_shapes_are_redacted(secret: str) -> None:
    assert secret not in redact(f"found: {secret}.")


def test_ordinary_text_is_left_alone() -> None:
    text = "ask-ant-colony sk-short risk-analysis toolu_mock_2a4d7e4d5c7033502df512f5"
    assert redact(text) == text


# --- OpenTelemetry ------------------------------------------------------------------------------


def _attrs(span: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in span["attributes"]:
        ((kind, value),) = kv["value"].items()
        out[kv["key"]] = int(value) if kind == "intValue" else value
    return out


def _spans(payload: dict[str, Any]) -> list[dict[str, Any]]:
    ((resource,),) = [payload["resourceSpans"]]
    ((scope,),) = [resource["scopeSpans"]]
    spans: list[dict[str, Any]] = scope["spans"]
    return spans


def test_otel_spans_follow_the_genai_conventions(golden: Trace) -> None:
    payload = otel(golden, provider="anthropic")
    spans = _spans(payload)
    trace_ids = {s["traceId"] for s in spans}
    assert len(trace_ids) == 1
    (trace_id,) = trace_ids
    assert len(trace_id) == 32 and int(trace_id, 16)
    ids = [s["spanId"] for s in spans]
    assert len(set(ids)) == len(ids) and all(len(i) == 16 and int(i, 16) for i in ids)
    by_id = {s["spanId"]: s for s in spans}
    for span in spans:
        assert int(span["startTimeUnixNano"]) <= int(span["endTimeUnixNano"])
        assert isinstance(span["startTimeUnixNano"], str)
        if "parentSpanId" in span:
            assert span["parentSpanId"] in by_id
    ops = [_attrs(s)["gen_ai.operation.name"] for s in spans]
    sessions = list(_walk(golden))
    assert ops.count("invoke_agent") == len(sessions)
    calls = sum(len(_usage_by_key(t)) for t in sessions)
    assert ops.count("chat") == calls
    tools = sum(1 for t in sessions for e in t.events if isinstance(e.event, ToolCall))
    assert ops.count("execute_tool") == tools
    root = spans[0]
    assert "parentSpanId" not in root
    attrs = _attrs(root)
    assert attrs["gen_ai.conversation.id"] == MAIN
    assert attrs["gen_ai.provider.name"] == "anthropic"
    assert attrs["gen_ai.agent.name"] == "claude-code"
    assert root["name"] == "invoke_agent claude-code"
    chat = next(s for s in spans if _attrs(s)["gen_ai.operation.name"] == "chat")
    usage = next(iter(_usage_by_key(golden).values()))
    assert usage.input is not None and usage.cache_read is not None and usage.cache_write is not None
    chat_attrs = _attrs(chat)
    assert chat["kind"] == 3  # CLIENT
    assert chat_attrs["gen_ai.response.model"] == "claude-opus-5-5"
    assert chat_attrs["gen_ai.usage.input_tokens"] == usage.input + usage.cache_read + usage.cache_write
    assert chat_attrs["gen_ai.usage.output_tokens"] == usage.output
    assert chat_attrs["gen_ai.usage.cache_read.input_tokens"] == usage.cache_read
    assert chat_attrs["gen_ai.usage.cache_creation.input_tokens"] == usage.cache_write
    tool = next(s for s in spans if _attrs(s)["gen_ai.operation.name"] == "execute_tool")
    assert _attrs(tool)["gen_ai.tool.name"] == "Read"
    assert _attrs(tool)["gen_ai.tool.call.id"] == "toolu_mock_2a4d7e4d5c7033502df512f5"
    assert "gen_ai.tool.call.arguments" not in _attrs(tool), "content is opt-in"


def test_otel_subagent_sessions_are_children_of_the_agent_call(golden: Trace) -> None:
    spans = _spans(otel(golden))
    by_id = {s["spanId"]: s for s in spans}
    agents = [s for s in spans if _attrs(s)["gen_ai.operation.name"] == "invoke_agent"]
    assert len(agents) == 4
    for span in agents[1:]:
        parent = by_id[span["parentSpanId"]]
        assert _attrs(parent)["gen_ai.operation.name"] == "execute_tool"
        assert _attrs(parent)["gen_ai.tool.name"] == "Agent"
        assert _attrs(span)["gen_ai.agent.name"] == "helper"
        assert _attrs(span)["gen_ai.conversation.id"].startswith("agent-")


def test_otel_ids_are_deterministic(golden: Trace) -> None:
    assert otel(golden) == otel(read_golden())
    other = Trace("claude-code", SessionMeta("other", started=_at(1)), events=[])
    assert _spans(otel(other))[0]["traceId"] != _spans(otel(golden))[0]["traceId"]


def test_otel_omits_unknown_figures_and_the_provider_it_was_not_told() -> None:
    usage = Usage(input=3, output=None, cache_read=None, unknown=frozenset({"cache_read"}))
    trace = _trace(TraceEvent("s1", UsageReport(usage=usage), _at(1), "m", line=1, key="k"))
    spans = _spans(otel(trace))
    chat = _attrs(spans[1])
    assert not any(k.startswith("gen_ai.usage.") for k in chat), chat
    assert "gen_ai.provider.name" not in _attrs(spans[0])


def test_otel_of_a_session_without_any_time_is_an_error() -> None:
    trace = Trace(
        "claude-code", SessionMeta("s1"), events=[TraceEvent("s1", UserText(text="x"), None, line=1)]
    )
    with pytest.raises(TraceError, match="no timestamp"):
        otel(trace)


# --- OTLP/HTTP to a real collector ------------------------------------------------------------


class _Collector(BaseHTTPRequestHandler):
    received: list[tuple[str, str, bytes]]
    status = 200

    delay = 0.0

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        time.sleep(self.delay)
        self.received.append((self.path, self.headers.get("Content-Type", ""), body))
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}" if self.status == 200 else b'{"message":"quota exceeded"}')

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def collector() -> Iterator[tuple[str, type[_Collector]]]:
    handler = type("Collector", (_Collector,), {"received": []})
    server = HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", handler
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_send_otlp_posts_json_to_the_traces_endpoint(golden: Trace, collector: tuple[str, Any]) -> None:
    url, handler = collector
    payload = otel(golden)
    send_otlp(payload, url)
    send_otlp(payload, url + "/v1/traces/")
    assert [(path, kind) for path, kind, _ in handler.received] == [("/v1/traces", "application/json")] * 2
    assert json.loads(handler.received[0][2]) == payload


def test_send_otlp_reports_the_status_a_collector_refuses_with(collector: tuple[str, Any]) -> None:
    url, handler = collector
    handler.status = 429
    with pytest.raises(TraceError, match=r"127\.0\.0\.1.*/v1/traces answered HTTP 429.*quota exceeded"):
        send_otlp({"resourceSpans": []}, url)


def test_send_otlp_gives_up_on_a_collector_that_does_not_answer(collector: tuple[str, Any]) -> None:
    url, handler = collector
    handler.delay = 1.5
    with pytest.raises(
        TraceError, match=r"127\.0\.0\.1.*/v1/traces (did not answer within 0\.3s|cannot be reached)"
    ):
        send_otlp({"resourceSpans": []}, url, timeout=0.3)


def test_send_otlp_to_a_dead_url_is_a_clear_error() -> None:
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(TraceError, match=rf"127\.0\.0\.1:{port}/v1/traces cannot be reached"):
        send_otlp({"resourceSpans": []}, f"http://127.0.0.1:{port}", timeout=2)


@pytest.mark.parametrize("url", ["file:///etc/passwd", "localhost:4318", "ftp://x/", ""])
def test_send_otlp_takes_only_http_urls(url: str) -> None:
    with pytest.raises(TraceError, match="not an http"):
        send_otlp({}, url)


def test_send_otlp_hides_credentials_in_the_url() -> None:
    with pytest.raises(TraceError) as caught:
        send_otlp({}, "http://user:s3cretpass@127.0.0.1:9/", timeout=1)
    assert "s3cretpass" not in str(caught.value)


def test_issues_travel_with_the_trajectory(golden: Trace) -> None:
    trace = Trace(golden.harness, golden.meta, golden.events, [TraceIssue(Path("/x.jsonl"), 4, "not JSON")])
    data = atif(trace)
    assert data["extra"]["issues"] == ["/x.jsonl:4: not JSON"]
    many = [TraceIssue(Path("/x.jsonl"), n, "not JSON") for n in range(1, 1001)]
    extra = atif(Trace(golden.harness, golden.meta, golden.events, many))["extra"]
    assert len(extra["issues"]) == 100 and extra["issues_total"] == 1000


# --- any trace a reader could give --------------------------------------------------------------

_IDS = st.sampled_from(["a", "b", "c", None])
_TIMES = st.one_of(
    st.none(),
    st.sampled_from(
        ["2026-12-01T10:00:00Z", "2026-12-01T10:00:05.5+02:00", "0001-01-01T00:00:00Z", "soon", ""]
    ),
    st.datetimes(timezones=st.just(UTC)).map(lambda d: d.isoformat()),
)
_COUNTS = st.one_of(st.none(), st.integers(min_value=0, max_value=10**12))
_USAGE = st.builds(
    Usage,
    input=_COUNTS,
    output=_COUNTS,
    cache_read=_COUNTS,
    cache_write=_COUNTS,
    reasoning=_COUNTS,
    unknown=st.frozensets(st.sampled_from(FIGURES), max_size=2),
)
_EVENTS = st.one_of(
    st.builds(SessionStarted, session_id=st.just("s")),
    st.builds(UserText, text=st.text(max_size=20)),
    st.builds(AssistantText, text=st.text(max_size=20)),
    st.builds(
        ToolCall,
        name=st.text(max_size=8),
        call_id=_IDS,
        input=st.one_of(
            st.none(), st.text(max_size=8), st.dictionaries(st.text(max_size=4), st.text(max_size=8))
        ),
    ),
    st.builds(
        ToolResult, call_id=_IDS, output=st.one_of(st.none(), st.text(max_size=20)), is_error=st.booleans()
    ),
    st.builds(UsageReport, usage=_USAGE),
    st.builds(ErrorEvent, message=st.text(max_size=20), fatal=st.booleans()),
    st.builds(Finished, final_text=st.one_of(st.none(), st.text(max_size=10))),
    st.builds(Record, record_type=st.one_of(st.none(), st.text(max_size=5))),
)


@st.composite
def traces(draw: st.DrawFn, session: str = "s", depth: int = 0) -> Trace:
    events = [
        TraceEvent(
            session,
            draw(_EVENTS),
            draw(_TIMES),
            draw(st.sampled_from([None, "m1", "m2"])),
            draw(st.integers(min_value=0, max_value=6)),
            draw(st.sampled_from([None, "k1", "k2"])),
        )
        for _ in range(draw(st.integers(min_value=0, max_value=12)))
    ]
    meta = SessionMeta(session, models=draw(st.lists(st.sampled_from(["m1", "m2"]), unique=True)))
    for item in events:
        meta.saw(_iso_or_none(item.timestamp))
    children = (
        []
        if depth >= 2
        else draw(st.lists(traces(session=f"{session}.{depth}x", depth=depth + 1), max_size=2))
    )
    children = [Trace("h", c.meta, c.events, children=c.children) for c in children]
    for index, child in enumerate(children):
        child.meta.session_id = f"{session}/{index}"
        child.meta.parent_id = session
    return Trace("h", meta, events, children=children)


def _iso_or_none(value: str | None) -> str | None:
    return value if value and value[:1].isdigit() else None


def _has_steps(trace: Trace) -> bool:
    for item in trace.events:
        event = item.event
        if isinstance(event, SessionStarted | Record) or (
            isinstance(event, Finished) and not event.final_text
        ):
            continue
        return True
    return any(_has_steps(child) for child in trace.children)


def _figure_sums(trace: Trace) -> int:
    return sum(
        getattr(e.event.usage, n) or 0
        for t in _walk(trace)
        for e in t.events
        if isinstance(e.event, UsageReport)
        for n in FIGURES
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trace=traces())
def test_any_trace_exports_valid_or_raises_trace_error(trace: Trace) -> None:
    ceiling = _figure_sums(trace)
    try:
        data = atif(trace)
    except TraceError:
        assert not _has_steps(trace), "only a session with nothing in it (nor in its subagents) is refused"
    else:
        validate_atif(data)
        totals = data["final_metrics"]
        for key in ("total_prompt_tokens", "total_completion_tokens", "total_cached_tokens"):
            assert totals.get(key, 0) <= ceiling, "a total larger than every reported figure together"
    try:
        payload = otel(trace)
    except TraceError as exc:
        assert "no timestamp" in str(exc)
        return
    spans = _spans(json.loads(json.dumps(payload)))
    ids = [s["spanId"] for s in spans]
    assert len(ids) == len(set(ids))
    for span in spans:
        assert span.get("parentSpanId", ids[0]) in ids
        assert 0 <= int(span["startTimeUnixNano"]) <= int(span["endTimeUnixNano"])


# --- every golden case of every family ------------------------------------------------------------

GOLDEN_CASES = sorted(p.parent for p in (Path(__file__).parent / "golden").glob("*/transcripts/*/meta.json"))


@pytest.mark.parametrize("case", GOLDEN_CASES, ids=[f"{c.parent.parent.name}/{c.name}" for c in GOLDEN_CASES])
def test_every_golden_session_exports(case: Path) -> None:
    """Each session of each family's golden case gives valid ATIF and well-formed OTLP, or says why not."""
    meta = json.loads((case / "meta.json").read_text())
    adapter = load_adapters()[meta["adapter"]]
    reader = get_family(adapter.family).transcripts()
    assert reader is not None and adapter.spec.transcripts is not None
    root = case / "files"
    pattern = glob_regex(adapter.spec.transcripts.glob)
    paths = sorted(
        p for p in root.rglob("*") if p.is_file() and pattern.fullmatch(p.relative_to(root).as_posix())
    )
    sessions = [t for t in read_sessions(adapter.name, reader, paths) if t.session_id]
    assert sessions
    exported = 0
    for trace in sessions:
        try:
            data = atif(trace, version=meta.get("harness_version"))
        except TraceError as exc:
            assert not _has_steps(trace), exc
            continue
        validate_atif(data)
        exported += 1
        try:
            spans = _spans(json.loads(json.dumps(otel(trace))))
        except TraceError as exc:
            assert "no timestamp" in str(exc)
            continue
        ids = [s["spanId"] for s in spans]
        assert len(ids) == len(set(ids))
        assert all(s.get("parentSpanId", ids[0]) in ids for s in spans)
    assert exported, "at least one session of the case has steps"


def test_a_message_written_as_one_record_is_one_step() -> None:
    # Gemini and Copilot write a model message whole: its text, its tool calls with their results, its usage.
    trace = _trace(
        TraceEvent("s1", UserText(text="list"), _at(1), line=1),
        TraceEvent("s1", AssistantText(text="Listing."), _at(2), "g", line=2),
        TraceEvent("s1", ToolCall(name="ls", call_id="t1", input={}), _at(2), "g", line=2),
        TraceEvent("s1", ToolResult(call_id="t1", output="a b"), _at(2), line=2),
        TraceEvent("s1", UsageReport(usage=Usage(input=5, output=2)), _at(2), "g", line=2, key="m1"),
        TraceEvent("s1", AssistantText(text="Done."), _at(3), "g", line=3),
        TraceEvent("s1", UsageReport(usage=Usage(input=9, output=1)), _at(3), "g", line=3, key="m2"),
    )
    steps = validate_atif(atif(trace)).steps
    assert [(s.source, s.message) for s in steps] == [
        ("user", "list"),
        ("agent", "Listing."),
        ("agent", "Done."),
    ]
    assert steps[1].observation is not None and steps[1].observation.results[0].content == "a b"
    assert steps[1].metrics is not None and steps[1].metrics.prompt_tokens == 5
