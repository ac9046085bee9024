"""`tackroom usage daily --harness claude-code` against ccusage 20.0.24, the peer people use today.

Two kinds of check:

- a generated corpus (benchmarks/trace_corpus.py: projects, sessions, subagents, streamed
  duplicates, agent_progress copies, resumed sessions, responses without requestId; the test
  checks it holds each) read by both tools: equal per day and per model, to the token; and
  ccusage equal to what the generator says it should count;
- hand-made edge cases (docs/ccusage-semantics.md), each pinned to what ccusage 20.0.24
  answers: one test proves each pin against the real ccusage, one holds tackroom to it (so
  tackroom is checked even where ccusage is not installed).

ccusage is installed by ``scripts/test`` into ``.cache/ccusage`` (or named by ``TACKROOM_CCUSAGE``);
without it the ccusage tests skip and say so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import trace_corpus  # noqa: E402

CCUSAGE = Path(
    os.environ.get("TACKROOM_CCUSAGE")
    or ROOT / ".cache" / "ccusage" / "node_modules" / "@ccusage" / "ccusage-linux-x64" / "bin" / "ccusage"
)
FIELDS = ("input", "output", "cache_write", "cache_read")
Counts = tuple[int, int, int, int]
# {day: {model: (input, output, cache_write, cache_read)}}; model "" holds what a day counts
# without any model (ccusage: tokens of lines with no model or `<synthetic>`).
Daily = dict[str, dict[str, Counts]]


def ccusage_missing() -> str | None:
    if not CCUSAGE.is_file():
        return f"ccusage 20.0.24 is not installed at {CCUSAGE} (scripts/test installs it with npm)"
    if not os.access(CCUSAGE, os.X_OK):
        return f"{CCUSAGE} is not executable (scripts/test makes it so)"
    return None


needs_ccusage = pytest.mark.skipif(ccusage_missing() is not None, reason=ccusage_missing() or "")


def isolated_env(tmp_path: Path, config_dir: Path, tz: str = "UTC") -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "CLAUDE_CONFIG_DIR": str(config_dir),
        "TZ": tz,
        **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}),
    }


def day_totals(daily: Daily) -> dict[str, Counts]:
    return {day: tuple(sum(c[i] for c in models.values()) for i in range(4)) for day, models in daily.items()}  # type: ignore[misc]


def run_ccusage(tmp_path: Path, config_dir: Path, tz: str = "UTC") -> Daily:
    """ccusage's daily report as {day: {model: counts}}, with the model-less rest under ""."""
    done = subprocess.run(
        [str(CCUSAGE), "claude", "daily", "--json", "--offline", "--timezone", tz],
        env=isolated_env(tmp_path, config_dir, tz),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    daily: Daily = {}
    for row in json.loads(done.stdout)["daily"]:
        models = {
            b["modelName"]: (
                b["inputTokens"],
                b["outputTokens"],
                b["cacheCreationTokens"],
                b["cacheReadTokens"],
            )
            for b in row["modelBreakdowns"]
        }
        total = (row["inputTokens"], row["outputTokens"], row["cacheCreationTokens"], row["cacheReadTokens"])
        rest = tuple(total[i] - sum(c[i] for c in models.values()) for i in range(4))
        if any(rest) or not models:
            models[""] = rest  # type: ignore[assignment]
        daily[row["date"]] = models
    return daily


def run_tackroom(tmp_path: Path, config_dir: Path, tz: str = "UTC") -> Daily:
    """tackroom's daily report in the same shape (contract: issue 10 §4, rows/models)."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tackroom",
            "usage",
            "daily",
            "--harness",
            "claude-code",
            "--json",
            "--timezone",
            tz,
        ],
        env=isolated_env(tmp_path, config_dir, tz),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, f"tackroom usage daily failed ({done.returncode}): {done.stderr[-3000:]}"
    report = json.loads(done.stdout)
    assert report["group"] == "daily"
    assert report["timezone"] == tz
    daily: Daily = {}
    for row in report["rows"]:
        models: dict[str, Counts] = {}
        for entry in row["models"]:
            name = entry["model"] if isinstance(entry["model"], str) else ""
            counts = tuple(entry[f] for f in FIELDS)
            assert all(isinstance(c, int) for c in counts), f"{row['key']} {name}: {counts}"
            previous = models.get(name, (0, 0, 0, 0))
            models[name] = tuple(a + b for a, b in zip(previous, counts, strict=True))  # type: ignore[assignment]
        total = tuple(row[f] for f in FIELDS)
        rest = tuple(total[i] - sum(c[i] for c in models.values()) for i in range(4))
        if any(rest):
            models[""] = tuple(a + b for a, b in zip(models.get("", (0, 0, 0, 0)), rest, strict=True))  # type: ignore[assignment]
        daily[row["key"]] = models
    return daily


def normal(daily: Daily) -> Daily:
    """Model-less tokens under whatever name a tool gives them ("", "unknown", "<synthetic>") as ""."""
    out: Daily = {}
    for day, models in daily.items():
        merged: dict[str, Counts] = {}
        for name, counts in models.items():
            key = "" if name in ("", "unknown", "<synthetic>", "not_reported") else name
            previous = merged.get(key, (0, 0, 0, 0))
            merged[key] = tuple(a + b for a, b in zip(previous, counts, strict=True))  # type: ignore[assignment]
        if merged.get("") == (0, 0, 0, 0):
            del merged[""]  # a day with nothing but zero-token, model-less lines
        out[day] = merged
    return out


def assert_same(got: Daily, want: Daily, who: str) -> None:
    got, want = normal(got), normal(want)
    problems = []
    for day in sorted(set(got) | set(want)):
        if day not in got or day not in want:
            problems.append(
                f"{day}: {who} {'lacks' if day not in got else 'has extra'} day ({want.get(day)})"
            )
            continue
        for model in sorted(set(got[day]) | set(want[day])):
            g, w = got[day].get(model), want[day].get(model)
            if g != w:
                name = model or "(no model)"
                problems.append(f"{day} {name}: {who} {g} != {w} (input, output, cache_write, cache_read)")
    assert not problems, "\n".join(problems[:40])
    assert day_totals(got) == day_totals(want)


# --- the generated corpus -------------------------------------------------------------------


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Daily]:
    root = tmp_path_factory.mktemp("corpus")
    manifest = trace_corpus.generate(root, size_mb=3, seed=1, resume=0.3, no_request_id=0.05)
    shapes = (
        "streamed responses",
        "responses without requestId",
        "resumed sessions",
        "copies without requestId (counted again)",
        "agent_progress copies",
        "subagent transcripts",
        "<synthetic> error lines",
    )
    missing = [shape for shape in shapes if not manifest["features"].get(shape)]
    assert not missing, f"the test corpus lacks {missing}: {manifest['features']}"
    expected: Daily = {
        day: {model: tuple(c) for model, c in models.items()}  # type: ignore[misc]
        for day, models in manifest["expected_daily_utc"].items()
    }
    return root, expected


def test_the_corpus_is_deterministic_and_shaped_like_claude_code(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    trace_corpus.generate(a, size_mb=0.5, seed=3)
    trace_corpus.generate(b, size_mb=0.5, seed=3)
    files = sorted(p.relative_to(a) for p in a.rglob("*.jsonl"))
    assert files == sorted(p.relative_to(b) for p in b.rglob("*.jsonl"))
    assert all((a / f).read_bytes() == (b / f).read_bytes() for f in files)
    assert any(f.parts[-2] == "subagents" and f.name.startswith("agent-") for f in files)
    kinds: set[str] = set()
    for f in files:
        for line in (a / f).read_text(encoding="utf-8").splitlines():
            assert ": " not in line[:200] or '"' in line  # compact separators
            record = json.loads(line)
            kinds.add(record["type"])
            if f.parts[-2] == "subagents":
                assert record["isSidechain"] is True and record["agentId"]
    assert {"user", "assistant", "file-history-snapshot"} <= kinds


@needs_ccusage
def test_ccusage_counts_the_corpus_as_the_generator_expects(
    tmp_path: Path, corpus: tuple[Path, Daily]
) -> None:
    root, expected = corpus
    assert_same(run_ccusage(tmp_path, root), expected, "ccusage")


def each_call_once(root: Path) -> Daily:
    """What the corpus holds, each call once: ccusage's count minus the copies it counts again."""
    manifest = json.loads((root / "corpus.json").read_text(encoding="utf-8"))
    out: Daily = {}
    for day, models in manifest["expected_daily_utc"].items():
        again = manifest["recounted_daily_utc"].get(day, {})
        out[day] = {
            model: tuple(a - b for a, b in zip(counts, again.get(model, (0, 0, 0, 0)), strict=True))  # type: ignore[misc]
            for model, counts in models.items()
        }
    return out


def test_tackroom_counts_each_call_of_the_corpus_once(tmp_path: Path, corpus: tuple[Path, Daily]) -> None:
    """The corpus holds resumed sessions whose copied lines have no requestId: ccusage counts those
    again (its key is then message id, session and time), tackroom once (the message id names the
    response). Everything else it counts as ccusage does."""
    root, _ = corpus
    manifest = json.loads((root / "corpus.json").read_text(encoding="utf-8"))
    assert manifest["recounted_daily_utc"], "the corpus should hold copies ccusage counts again"
    assert_same(run_tackroom(tmp_path, root), each_call_once(root), "tackroom")


@pytest.fixture(scope="module")
def corpus_with_request_ids(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every response with its requestId, as Claude Code 1.x and 2.0 write them (the benchmark's corpus)."""
    root = tmp_path_factory.mktemp("corpus-ids")
    manifest = trace_corpus.generate(root, size_mb=3, seed=2, resume=0.3, no_request_id=0.0)
    assert not manifest["recounted_daily_utc"]
    return root


@needs_ccusage
def test_tackroom_equals_ccusage_to_the_token(tmp_path: Path, corpus_with_request_ids: Path) -> None:
    root = corpus_with_request_ids
    assert_same(run_tackroom(tmp_path, root), run_ccusage(tmp_path, root), "tackroom")


# --- hand-made edge cases, pinned to ccusage 20.0.24's answers --------------------------------

T = "2026-11-01T10:00:00.000Z"


def line(
    mid: str | None = "m1",
    rid: str | None = "r1",
    *,
    model: str | None = "claude-sonnet-4-5",
    usage: Mapping[str, Any] | None = None,
    i: int = 10,
    o: int = 20,
    cw: int = 0,
    cr: int = 0,
    ts: str = T,
    sid: str | None = "s1",
    **extra: Any,
) -> str:
    """One assistant transcript line, compact JSON as Claude Code writes it."""
    message: dict[str, Any] = {}
    if mid is not None:
        message["id"] = mid
    if model is not None:
        message["model"] = model
    message["usage"] = (
        dict(usage)
        if usage is not None
        else {
            "input_tokens": i,
            "output_tokens": o,
            "cache_creation_input_tokens": cw,
            "cache_read_input_tokens": cr,
        }
    )
    record: dict[str, Any] = {"type": "assistant", "timestamp": ts}
    if sid is not None:
        record["sessionId"] = sid
    if rid is not None:
        record["requestId"] = rid
    record["message"] = message
    record.update(extra)
    return json.dumps(record, separators=(",", ":"))


def jsonl(*lines: str) -> bytes:
    return "".join(x + "\n" for x in lines).encode()


@dataclass
class Case:
    files: dict[str, bytes]
    want: Daily
    tz: str = "UTC"
    links: dict[str, str] = field(default_factory=dict)  # link path -> target, both relative


S = "claude-sonnet-4-5"
P = "projects/p/s1.jsonl"
Q = "projects/p/s2.jsonl"
D = "2026-11-01"

CASES: dict[str, Case] = {
    # Streamed copies of one response (same message.id + requestId): the largest total counts,
    # whole (not the last line, not a per-field maximum).
    "stream_duplicates_largest_total_wins": Case(
        {P: jsonl(line(o=5), line(i=100, o=1), line(o=50), line(o=20))},
        {D: {S: (100, 1, 0, 0)}},
    ),
    # The same response copied into another session's file counts once (requestId present).
    "duplicate_across_files": Case(
        {P: jsonl(line(o=5)), Q: jsonl(line(o=50, sid="s2"))},
        {D: {S: (10, 50, 0, 0)}},
    ),
    # The winner's timestamp decides the day.
    "winner_decides_the_day": Case(
        {P: jsonl(line(o=5), line(o=50, ts="2026-11-02T10:00:00.000Z"))},
        {"2026-11-02": {S: (10, 50, 0, 0)}},
    ),
    # Equal totals: the costlier wins (more output), else the first in path order.
    "equal_totals_costlier_then_first_file": Case(
        {
            P: jsonl(line(i=20, o=10), line(i=10, o=20)),
            "projects/a/x.jsonl": jsonl(line("m2", "r2", model="zz-a", ts="2026-11-03T10:00:00.000Z")),
            "projects/b/x.jsonl": jsonl(line("m2", "r2", model="zz-b", ts="2026-11-02T10:00:00.000Z")),
        },
        {D: {S: (10, 20, 0, 0)}, "2026-11-03": {"zz-a": (10, 20, 0, 0)}},
    ),
    # message.id without requestId: one per (session, exact timestamp); no message.id: never merged.
    "missing_ids": Case(
        {
            P: jsonl(
                line("a", None, o=5),
                line("a", None, o=50),
                line("a", None, o=7, ts="2026-11-01T10:00:01.000Z"),
                line("msg_01x", None, o=1),
                line("msg_01x", None, o=2, ts="2026-11-01T10:00:02.000Z"),
                line(None, "r9", o=100),
                line(None, "r9", o=100),
            ),
            Q: jsonl(line("a", None, o=50, sid="s2")),
        },
        {D: {S: (70, 310, 0, 0)}},
    ),
    # Without sessionId the path names the session: the file stem, or the directory above
    # subagents/, whatever the project.
    "session_from_path": Case(
        {
            P: jsonl(line("a", None, o=5, sid=None)),
            "projects/p/s1/subagents/agent-1.jsonl": jsonl(line("a", None, o=50, sid=None)),
            "projects/q/s1.jsonl": jsonl(line("a", None, o=40, sid=None)),
            Q: jsonl(line("a", None, o=7, sid=None)),
        },
        {D: {S: (20, 57, 0, 0)}},
    ),
    # A non-sidechain copy beats a larger sidechain one; a sidechain replay of a parent message
    # under a new requestId is dropped; a sidechain's own message counts.
    "sidechains": Case(
        {
            P: jsonl(line(o=5), line("m2", "r2", cr=20)),
            "projects/p/s1/subagents/agent-1.jsonl": jsonl(
                line(o=500, isSidechain=True),
                line("m2", "r-replay", cr=50000, isSidechain=True),
                line("m3", "r3", i=1, o=1, isSidechain=True),
            ),
        },
        {D: {S: (21, 26, 0, 20)}},
    ),
    # Lines ccusage skips whole, and lines it counts although one might not expect it.
    "which_lines_count": Case(
        {
            P: jsonl(
                line("k1", "k1", i=1, o=1),
                line("k2", "k2", i=1, o=1, type="user"),
                line("k3", "k3", i=1, o=1, type="summary"),
                line("k4", "k4", i=1, o=1, isApiErrorMessage=True),
                line("k5", "k5", i=1, o=1, version="2.0.1-beta.3"),
                line("k6", "k6", usage={"input_tokens": 1, "output_tokens": 1}),
                line("x1", "x1", usage={"input_tokens": 7}),
                line("x2", "x2", usage={"output_tokens": 7}),
                line(
                    "x3", "x3", usage={"input_tokens": 7, "output_tokens": 7, "cache_read_input_tokens": None}
                ),
                line("x4", "x4", i=-7),
                line("x5", "x5", usage={"input_tokens": 7.0, "output_tokens": 7}),
                line("x6", "x6", usage={"input_tokens": "7", "output_tokens": 7}),
                line("x7", "x7", model=""),
                line("x8", "x8", version="2.0"),
                line("x9", "x9", usage={"input_tokens": 7, "output_tokens": 7, "speed": "turbo"}),
                line("x10", "x10", toolUseResult={"id": None}),
                line("x11", "x11", cwd=None),
                line("x12", "x12", sid=""),
                line("x13", "x13", isSidechain="yes"),
                json.dumps(json.loads(line("x14", "x14"))),  # not compact: ccusage never sees it
                line("x15", "x15").replace('"input_tokens":10', '"input_tokens":10,"input_tokens":10'),
                line("x16", "x16", usage={"input_tokens": 2**64, "output_tokens": 7}),
            )
        },
        {D: {S: (6, 6, 0, 0)}},
    ),
    # No model, or `<synthetic>`: the tokens count in the day, under no model.
    "model_less_tokens": Case(
        {
            P: jsonl(
                line("a", "a", model=None),
                line("b", "b", model="<synthetic>", i=1, o=2),
                line("c", "c", i=0, o=0),
            )
        },
        {D: {S: (0, 0, 0, 0), "": (11, 22, 0, 0)}},
    ),
    # Cache writes: the `cache_creation` object's 5m + 1h sum when it is an object, else the field.
    "cache_creation_object_wins": Case(
        {
            P: jsonl(
                line(
                    "a",
                    "a",
                    usage={
                        "input_tokens": 1,
                        "output_tokens": 1,
                        "cache_creation_input_tokens": 100,
                        "cache_creation": {"ephemeral_5m_input_tokens": 7, "ephemeral_1h_input_tokens": 3},
                    },
                ),
                line(
                    "b",
                    "b",
                    usage={
                        "input_tokens": 1,
                        "output_tokens": 1,
                        "cache_creation_input_tokens": 100,
                        "cache_creation": {},
                    },
                ),
                line(
                    "c",
                    "c",
                    usage={
                        "input_tokens": 1,
                        "output_tokens": 1,
                        "cache_creation_input_tokens": 100,
                        "cache_creation": None,
                    },
                ),
                line("d", "d", cw=4, cr=3),
            )
        },
        {D: {S: (13, 23, 114, 3)}},
    ),
    # `speed: "fast"` is its own model row, "<model>-fast".
    "fast_mode": Case(
        {
            P: jsonl(
                line("a", "a"), line("b", "b", usage={"input_tokens": 1, "output_tokens": 2, "speed": "fast"})
            )
        },
        {D: {S: (10, 20, 0, 0), f"{S}-fast": (1, 2, 0, 0)}},
    ),
    # Only `YYYY-MM-DDTHH:MM:SS[.mmm](Z|±HH:MM)` timestamps; the day is the instant's in the zone.
    "timestamps": Case(
        {
            P: jsonl(
                line("a", "a", ts="2026-11-01T23:30:00Z"),
                line("b", "b", ts="2026-11-02T01:30:00+02:00"),
                line("c", "c", ts="2026-11-01T20:30:00.000-05:00"),
                line("x1", "x1", ts="2026-11-01T10:00:00.123456Z"),
                line("x2", "x2", ts="2026-11-01T10:00:00"),
                line("x3", "x3", ts="2026-11-01 10:00:00Z"),
                line("x4", "x4", ts="2026-11-01T10:00:00+0200"),
                line("x5", "x5", ts="2026-02-30T10:00:00Z"),
            )
        },
        {D: {S: (20, 40, 0, 0)}, "2026-11-02": {S: (10, 20, 0, 0)}},
    ),
    "timezone_new_york": Case(
        {
            P: jsonl(
                line("a", "a", ts="2026-11-02T03:30:00.000Z"), line("b", "b", ts="2026-11-02T12:00:00.000Z")
            )
        },
        {D: {S: (10, 20, 0, 0)}, "2026-11-02": {S: (10, 20, 0, 0)}},
        tz="America/New_York",
    ),
    # Every *.jsonl at any depth under projects/ (subagents, hidden ones); nothing else; no links.
    "which_files": Case(
        {
            "projects/top.jsonl": jsonl(line("a", "a", i=1, o=0)),
            "projects/p/s/subagents/agent-x.jsonl": jsonl(line("b", "b", i=2, o=0, isSidechain=True)),
            "projects/a/b/c/d.jsonl": jsonl(line("c", "c", i=4, o=0)),
            "projects/.hidden/s.jsonl": jsonl(line("d", "d", i=8, o=0)),
            "projects/p/s.json": jsonl(line("x1", "x1", i=100, o=0)),
            "projects/p/s.JSONL": jsonl(line("x2", "x2", i=100, o=0)),
            "projects/p/s.jsonl.bak": jsonl(line("x3", "x3", i=100, o=0)),
            "elsewhere/s.jsonl": jsonl(line("x4", "x4", i=100, o=0)),
        },
        {D: {S: (15, 0, 0, 0)}},
        links={"projects/p/linked.jsonl": "elsewhere/s.jsonl", "projects/linkdir": "elsewhere"},
    ),
    # Damaged files: a truncated last line, bad JSON, CRLF, a BOM (costs its line), garbage.
    "bad_input": Case(
        {
            P: jsonl(line("a", "a", i=1, o=0), "{not json", line("b", "b", i=2, o=0) + " trailing")
            + line("c", "c", i=4, o=0).encode()[:-9],
            Q: (line("d", "d", i=8, o=0) + "\r\n" + line("e", "e", i=16, o=0) + "\r\n").encode(),
            "projects/p/s3.jsonl": (
                "\ufeff" + line("f", "f", i=32, o=0) + "\n" + line("g", "g", i=64, o=0)
            ).encode(),
            "projects/p/s4.jsonl": b"\x00\x00\n" + jsonl(line("h", "h", i=128, o=0)) + b'{"usage":{\xff}\n',
        },
        {D: {S: (217, 0, 0, 0)}},
    ),
    # A subagent's message copied into the parent as `agent_progress` counts, once.
    "agent_progress": Case(
        {
            P: jsonl(
                json.dumps(
                    {
                        "type": "progress",
                        "sessionId": "s1",
                        "timestamp": T,
                        "data": {
                            "type": "agent_progress",
                            "message": {
                                "type": "assistant",
                                "timestamp": T,
                                "requestId": "rp",
                                "message": {
                                    "id": "mp",
                                    "model": S,
                                    "usage": {"input_tokens": 3, "output_tokens": 4},
                                },
                            },
                        },
                    },
                    separators=(",", ":"),
                ),
                json.dumps(
                    {
                        "type": "progress",
                        "sessionId": "s1",
                        "timestamp": T,
                        "data": {
                            "type": "agent_progress",
                            "message": {
                                "type": "assistant",
                                "timestamp": T,
                                "requestId": "rq",
                                "message": {
                                    "id": "mq",
                                    "model": S,
                                    "usage": {"input_tokens": 5, "output_tokens": 6},
                                },
                            },
                        },
                    },
                    separators=(",", ":"),
                ),
            ),
            "projects/p/s1/subagents/agent-1.jsonl": jsonl(line("mp", "rp", i=3, o=4, isSidechain=True)),
        },
        {D: {S: (8, 10, 0, 0)}},
    ),
    # A Task result's `toolUseResult.usage` is a summary, not a message's usage.
    "task_result_usage_is_not_counted": Case(
        {
            P: jsonl(
                json.dumps(
                    {
                        "type": "user",
                        "timestamp": T,
                        "sessionId": "s1",
                        "message": {"role": "user", "content": [{"type": "tool_result", "content": "done"}]},
                        "toolUseResult": {
                            "totalTokens": 99,
                            "usage": {"input_tokens": 90, "output_tokens": 9},
                        },
                    },
                    separators=(",", ":"),
                ),
                line("a", "a"),
            )
        },
        {D: {S: (10, 20, 0, 0)}},
    ),
    # A zero-token message still makes its day and model appear.
    "zero_tokens": Case({P: jsonl(line(i=0, o=0))}, {D: {S: (0, 0, 0, 0)}}),
}


def build(case: Case, root: Path) -> Path:
    for rel, data in case.files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    for rel, target in case.links.items():
        (root / rel).symlink_to(root / target)
    return root


@needs_ccusage
@pytest.mark.parametrize("name", sorted(CASES))
def test_ccusage_answers_as_pinned(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    root = build(case, tmp_path / "claude")
    assert_same(run_ccusage(tmp_path, root, case.tz), case.want, "ccusage")


NR, UNK = "not_reported", "unknown"
RawDaily = dict[str, dict[str, tuple[Any, ...]]]

# Where tackroom answers otherwise on purpose: its answer, and why. ccusage's answer is still pinned
# above (and proven against the real binary); these hold tackroom to its own rules.
DEPARTS: dict[str, tuple[RawDaily, str]] = {
    "agent_progress": (
        {D: {S: (8, 10, NR, NR)}},
        "a copy without cache figures: not_reported, where ccusage writes 0 (a value never invented)",
    ),
    "fast_mode": (
        {D: {S: (10, 20, 0, 0), f"{S}-fast": (1, 2, NR, NR)}},
        "the fast-mode line has no cache figures: not_reported, never 0",
    ),
    "cache_creation_object_wins": (
        {D: {S: (13, 23, 304, UNK)}},
        "cache writes are the API's cache_creation_input_tokens (what tackroom's run reports), not the "
        "sum of the breakdown object, which the mock leaves at 0; a line without cache reads makes the "
        "day's cache reads unknown",
    ),
    "missing_ids": (
        {D: {S: (40, 252, 0, 0)}},
        "the message id names one response: lines without a requestId but with the same message id are "
        "one call (ccusage counts them again when their time or session differs)",
    ),
    "session_from_path": (
        {D: {S: (10, 50, 0, 0)}},
        "the same: one message id, one call, whatever the session",
    ),
    "model_less_tokens": (
        {D: {S: (0, 0, 0, 0), "unknown": (10, 20, 0, 0)}},
        "a line without a model counts under 'unknown'; a <synthetic> line is Claude Code's own stand-in, "
        "not a model call, and its figures do not count",
    ),
    "timestamps": (
        {D: {S: (50, 100, 0, 0)}, "2026-11-02": {S: (10, 20, 0, 0)}, "unknown": {S: (20, 40, 0, 0)}},
        "tokens spent are counted whatever the time's format: any valid ISO 8601 instant has its day; "
        "a time without a zone or an invalid date is counted under 'unknown' (ccusage drops the line)",
    ),
    "which_lines_count": (
        {D: {S: (UNK, UNK, UNK, UNK), "unknown": (10, 20, 0, 0)}},
        "a line whose counts are not counts (a string, a negative, a float) makes its day's figure "
        "unknown rather than disappearing from it",
    ),
}


def run_tackroom_raw(tmp_path: Path, config_dir: Path, tz: str) -> RawDaily:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tackroom",
            "usage",
            "daily",
            "--harness",
            "claude-code",
            "--json",
            "--timezone",
            tz,
        ],
        env=isolated_env(tmp_path, config_dir, tz),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return {
        row["key"]: {m["model"]: tuple(m[f] for f in FIELDS) for m in row["models"]}
        for row in json.loads(done.stdout)["rows"]
    }


@pytest.mark.parametrize("name", sorted(set(CASES) - set(DEPARTS)))
def test_tackroom_answers_as_ccusage(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    root = build(case, tmp_path / "claude")
    assert_same(run_tackroom(tmp_path, root, case.tz), case.want, "tackroom")


@pytest.mark.parametrize("name", sorted(DEPARTS))
def test_tackroom_departs_from_ccusage_where_it_would_invent_or_double_count(
    name: str, tmp_path: Path
) -> None:
    case = CASES[name]
    want, why = DEPARTS[name]
    root = build(case, tmp_path / "claude")
    got = run_tackroom_raw(tmp_path, root, case.tz)
    assert got == want, why
    assert got != case.want  # a departure that no longer departs is a pin to move back


def test_the_comparison_can_fail() -> None:
    """The comparison itself: a token off, a model renamed or a day missing is a failure."""
    want: Daily = {D: {S: (1, 2, 3, 4)}}
    bad: list[Callable[[], None]] = [
        lambda: assert_same({D: {S: (1, 2, 3, 5)}}, want, "x"),
        lambda: assert_same({D: {"other": (1, 2, 3, 4)}}, want, "x"),
        lambda: assert_same({}, want, "x"),
        lambda: assert_same({D: {S: (1, 2, 3, 4)}, "2026-11-02": {S: (0, 0, 0, 1)}}, want, "x"),
    ]
    for check in bad:
        with pytest.raises(AssertionError):
            check()
    assert_same({D: {S: (1, 2, 3, 4), "unknown": (0, 0, 0, 0)}}, want, "x")


# --- random mixes, ccusage as the oracle ------------------------------------------------------

FILES = (P, Q, "projects/q/s1.jsonl", "projects/p/s1/subagents/agent-1.jsonl", "projects/p/deep/x/y.jsonl")
STAMPS = (
    T,
    "2026-11-01T10:00:01.000Z",
    "2026-11-01T23:59:59Z",
    "2026-11-02T00:30:00.000+02:00",
    "2026-11-03T08:00:00Z",
)


@st.composite
def transcript_line(draw: st.DrawFn) -> tuple[str, str]:
    """(file, line) in the shapes Claude Code 1.x and 2.0 write, where both tools mean to agree:
    ids from a small pool so that duplicates happen (in one file, across files, as side-chain
    copies), every response with its requestId and all four counts (DEPARTS has the rest)."""
    counts = st.integers(min_value=0, max_value=5000)
    usage: dict[str, Any] = {
        "input_tokens": draw(counts),
        "output_tokens": draw(counts),
        "cache_creation_input_tokens": draw(counts),
        "cache_read_input_tokens": draw(counts),
    }
    extra: dict[str, Any] = {}
    if draw(st.integers(0, 3)) == 0:
        extra["isSidechain"] = draw(st.booleans())
    message = draw(st.sampled_from(("m1", "m2", "msg_01a", "msg_01b")))
    text = line(
        message,
        f"req_{message}",  # one response, one request
        model=draw(st.sampled_from((S, S, "claude-haiku-4-5", "claude-opus-4-1"))),
        usage=usage,
        ts=draw(st.sampled_from(STAMPS)),
        sid=draw(st.sampled_from(("s1", "s2", None))),
        **extra,
    )
    return draw(st.sampled_from(FILES)), text


@needs_ccusage
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(transcript_line(), min_size=1, max_size=14))
def test_tackroom_equals_ccusage_on_random_mixes(lines: list[tuple[str, str]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        files: dict[str, list[str]] = {}
        for path, text in lines:
            files.setdefault(path, []).append(text)
        root = build(Case({p: jsonl(*texts) for p, texts in files.items()}, {}), work / "claude")
        assert_same(run_tackroom(work, root), run_ccusage(work, root), "tackroom")
