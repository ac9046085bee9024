"""Which run a session belongs to: certain from a run's home, by directory and time from the real home."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tackroom.trace import api
from tackroom.trace.attribute import RunWindow, attribute, moment
from tackroom.trace.model import SessionMeta


def _run(root: Path, run_id: str, *, workdir: str, started: str, duration: float, home: str = "real") -> None:
    run = root / run_id
    run.mkdir(parents=True)
    result = {
        "adapter": "claude-code",
        "workdir": workdir,
        "started_at": started,
        "duration_s": duration,
        "home": home,
    }
    (run / "result.json").write_text(json.dumps(result), encoding="utf-8")


def _session(projects: Path, session: str, cwd: str, ts: str) -> None:
    line = {"type": "user", "sessionId": session, "cwd": cwd, "timestamp": ts, "message": {"content": "hi"}}
    path = projects / "p" / f"{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")


@pytest.fixture
def places(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return isolated_home / ".claude/projects", isolated_home / ".local/share/tackroom/runs"


def test_a_real_home_session_goes_to_the_one_run_in_its_directory_then(places: tuple[Path, Path]) -> None:
    projects, runs = places
    _run(
        runs,
        "20261101-100000-claude-code-aaaaaa",
        workdir="/w/a",
        started="2026-11-01T10:00:00+00:00",
        duration=60,
    )
    _run(
        runs,
        "20261101-100000-claude-code-bbbbbb",
        workdir="/w/b",
        started="2026-11-01T10:00:00+00:00",
        duration=60,
    )
    _run(
        runs,
        "20261101-120000-claude-code-cccccc",
        workdir="/w/a",
        started="2026-11-01T12:00:00+00:00",
        duration=60,
    )
    _run(
        runs,
        "20261101-120000-claude-code-dddddd",
        workdir="/w/a",
        started="2026-11-01T12:00:30+00:00",
        duration=60,
    )
    _session(projects, "s-a", "/w/a", "2026-11-01T10:00:01.000Z")  # one run in /w/a then
    _session(projects, "s-late", "/w/a", "2026-11-01T11:00:00.000Z")  # no run then
    _session(projects, "s-both", "/w/a", "2026-11-01T12:00:45.000Z")  # two overlapping runs
    found = {s.session_id: s for s in api.list_sessions(harness="claude-code")}
    assert found["s-a"].run_id == "20261101-100000-claude-code-aaaaaa"
    assert found["s-late"].run_id is None and found["s-late"].candidates == ()
    assert found["s-both"].run_id is None
    assert found["s-both"].candidates == (
        "20261101-120000-claude-code-cccccc",
        "20261101-120000-claude-code-dddddd",
    )


def test_an_isolated_run_never_claims_a_real_home_session() -> None:
    start = moment("2026-11-01T10:00:00Z")
    assert start is not None
    isolated = RunWindow("r1", "claude-code", "/w", start, start, isolated=True)
    meta = SessionMeta("s", cwd="/w", started="2026-11-01T10:00:00Z")
    assert attribute("claude-code", meta, None, [isolated]).run_id is None
    other_harness = RunWindow("r2", "codex", "/w", start, start, isolated=False)
    assert attribute("claude-code", meta, None, [other_harness]).run_id is None
    assert attribute("claude-code", meta, "r9", [other_harness]).run_id == "r9"


def test_a_log_without_time_or_directory_is_nobodys() -> None:
    start = moment("2026-11-01T10:00:00Z")
    assert start is not None
    window = RunWindow("r1", "claude-code", "/w", start, start, isolated=False)
    assert attribute("claude-code", SessionMeta("s", cwd="/w"), None, [window]).run_id is None
    naive = SessionMeta("s", cwd="/w", started="2026-11-01T10:00:00")  # no zone: not an instant
    assert attribute("claude-code", naive, None, [window]).run_id is None
