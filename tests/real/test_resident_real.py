"""Real harnesses' runs served by the resident tackroom that a first command started (issue 24
item 4): the path a user's commands take by default. The run is the same as by itself: the harness's
answer, its usage from the mock, its session log found, its exit code.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from realkit import REAL

from residentkit import AUTO, answering, run_cli, stopped_or_killed
from tackroom.adapters.resolve import Adapter

pytestmark = pytest.mark.real
#: What differs between two runs of the same thing.
_PER_RUN = ("run_dir", "started_at", "duration_s", "events", "trace", "argv", "session_id", "workdir")


#: One harness of each kind of process a served run hands its streams, directory and signals to:
#: Node (claude-code, gemini), a Rust binary (codex), Python (aider), a compiled Bun binary
#: (opencode) and an ACP agent over stdio (claude-code-acp). The served path is the same code for
#: every harness; all 23 passed it once (2026-12-07), and these keep it so within CI's time.
SERVED = [
    name
    for name in ("claude-code", "gemini", "codex", "aider", "opencode", "claude-code-acp")
    if name in REAL
]


@pytest.mark.parametrize("harness", SERVED, indirect=True)
def test_a_served_run_of_a_real_harness_is_its_run_by_itself(
    harness: Adapter, harness_data: Path, workdir: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    (data / "tackroom").mkdir(parents=True)
    (data / "tackroom" / "harnesses").symlink_to(harness_data / "tackroom" / "harnesses")
    env = {"XDG_DATA_HOME": str(data), **AUTO}
    args = ("run", harness.name, "Say hello", "--mock-text", "Hello from the mock", "--json")
    args += ("--timeout", "120")
    # A workdir each: a harness may keep its history there (aider), which the next run would find.
    (workdir / "alone").mkdir()
    (workdir / "served").mkdir()
    first = run_cli(*args, "--workdir", str(workdir / "alone"), env=env)  # it starts a resident
    assert first.returncode == 0, first.stderr[-2000:]
    started = answering(env)
    assert started["state"] == "running" and started["auto"] is True, started
    pid = int(str(started["pid"]))
    try:
        served = run_cli(*args, "--workdir", str(workdir / "served"), env=env)
        after = json.loads(run_cli("resident", "status", "--json", env=env).stdout)
    finally:
        stopped_or_killed(pid, {**env, "TACKROOM_NO_RESIDENT": "1"}, within_s=15)
    assert served.returncode == 0, served.stderr[-2000:]
    assert after["served"] == 1 and after["refused"] == {}
    one, other = json.loads(first.stdout), json.loads(served.stdout)
    assert other["final_text"].strip() == "Hello from the mock" and other["usage"] == one["usage"]
    assert [len(run["trace"]["sessions"]) if run["trace"] else None for run in (one, other)] in (
        [1, 1],
        [None, None],
        [0, 0],
    )
    for key in _PER_RUN:
        one.pop(key, None)
        other.pop(key, None)
    assert other == one
