"""mini-swe-agent's trajectory files: what the golden files do not show (the stream agrees, rewrites)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tackroom.adapters.resolve import load_adapters
from tackroom.families import get_family
from tackroom.families.mini_swe_agent.stream import MiniStreamParser
from tackroom.families.mini_swe_agent.transcripts import MiniTranscripts, usage_of
from tackroom.trace import api
from tackroom.trace.events import ToolCall, ToolResult, UsageReport
from tackroom.trace.model import Cursor, TraceEvent, TraceItem
from tracekit import usage_reports

GOLDEN = Path(__file__).parent / "golden" / "mini-swe-agent"


def _read(path: Path, usage_only: bool = False) -> list[TraceItem]:
    return list(MiniTranscripts().read(path, Cursor(), usage_only=usage_only))


def _usage(prompt: Any = 321, cached: Any = 67, reasoning: Any = 0) -> dict[str, Any]:
    return {
        "response": {
            "id": "chatcmpl-1",
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": 45,
                "prompt_tokens_details": {"cached_tokens": cached},
                "completion_tokens_details": {"reasoning_tokens": reasoning},
            },
        }
    }


def test_the_family_and_adapter_have_this_reader() -> None:
    assert isinstance(get_family("mini-swe-agent").transcripts(), MiniTranscripts)
    spec = load_adapters()["mini-swe-agent"].spec.transcripts
    assert spec is not None and spec.glob == "*.traj.json"


def test_the_file_says_what_the_stream_said(tmp_path: Path) -> None:
    """The last trajectory a tackroom run printed, saved as mini saves it, reads as the stream parsed it."""
    lines = (GOLDEN / "mini-swe-agent-2.4.6-shell" / "stream.jsonl").read_text().splitlines(keepends=True)
    parser = MiniStreamParser()
    streamed = [e for line in lines for e in parser.feed(line)] + parser.close(0)
    start = max(n for n, line in enumerate(lines) if line.rstrip("\r\n") == "{")
    end = next(n for n in range(start, len(lines)) if lines[n].startswith("}"))
    path = tmp_path / "last_mini_run.traj.json"
    path.write_text("".join(lines[start:end]) + "}")
    read = [i.event for i in _read(path) if isinstance(i, TraceEvent)]

    def kinds(events: list[Any]) -> list[tuple[Any, ...]]:
        out: list[tuple[Any, ...]] = []
        for e in events:
            if isinstance(e, ToolCall):
                out.append(("call", e.call_id, e.name, json.dumps(e.input)))
            elif isinstance(e, ToolResult):
                out.append(("result", e.call_id, e.output, e.is_error))
            elif isinstance(e, UsageReport):
                out.append(("usage", e.usage))
        return out

    assert kinds(read) == kinds(streamed)
    assert len([k for k in kinds(read) if k[0] == "usage"]) >= 1


@pytest.mark.parametrize(
    ("usage", "unknown", "missing"),
    [
        (_usage(prompt="321"), {"input"}, set()),
        (_usage(cached=1.5), {"cache_read", "input"}, set()),
        (_usage(reasoning=[]), {"reasoning"}, set()),
        (_usage(cached=None), set(), {"cache_read"}),  # litellm's null: no figure, the prompt is the input
    ],
)
def test_figures_that_are_not_counts_are_unknown_and_nulls_are_none(
    usage: dict[str, Any], unknown: set[str], missing: set[str]
) -> None:
    figures = usage_of(usage)
    assert figures.unknown == unknown
    for name in unknown | missing:
        assert getattr(figures, name) is None
    if not unknown and missing:
        assert figures.input == 321


def test_each_call_is_exact_to_the_mock() -> None:
    (path,) = GOLDEN.glob("transcripts/mini-swe-agent-2.4.6-shell/files/*.traj.json")
    calls = [u.event.usage for u in usage_reports(_read(path))]  # type: ignore[attr-defined]
    assert [(c.input, c.output, c.cache_read, c.cache_write, c.reasoning) for c in calls] == [
        (321 - 67, 45, 67, None, 3)
    ] * 2
    assert usage_reports(_read(path, usage_only=True)) == usage_reports(_read(path))


def test_an_overwritten_trajectory_replaces_what_was_read(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mini saves the whole trajectory after each step, and the next run overwrites it."""
    monkeypatch.delenv("MSWEA_GLOBAL_CONFIG_DIR", raising=False)
    folder = isolated_home / ".config" / "mini-swe-agent"
    folder.mkdir(parents=True)
    path = folder / "last_mini_run.traj.json"

    def save(*calls: str) -> None:
        messages = [
            {"role": "assistant", "content": "x", "extra": {**_usage(), "timestamp": 1796184000.5}}
            for _ in calls
        ]
        for message, call in zip(messages, calls, strict=True):
            message["extra"]["response"] = {**message["extra"]["response"], "id": call}
        path.write_text(
            json.dumps({"info": {}, "messages": messages, "trajectory_format": "mini-swe-agent-1.1"})
        )

    def totals() -> tuple[Any, ...]:
        t = api.usage("daily", harness="mini-swe-agent", timezone="UTC")["totals"]
        return (t["input"], t["output"], t["cache_read"], t["reasoning"], t["calls"])

    save("chatcmpl-a")
    assert totals() == (254, 45, 67, 0, 1)
    save("chatcmpl-a", "chatcmpl-b")  # the next step's save: the whole trajectory again
    assert totals() == (508, 90, 134, 0, 2)
    save("chatcmpl-c")  # the next run
    assert totals() == (254, 45, 67, 0, 1)
