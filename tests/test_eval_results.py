"""Where an evaluation's results are kept: the state database by default, another SQLite file, or a
real PostgreSQL server (the one a shared gateway uses), with the same contract on each; a store that
fails or a disk that fills stops nothing silently and loses no stored result."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.pgkit import PostgresServer, backend, postgres_server  # noqa: F401  (fixtures)

from clikit import run_cli
from evalkit import BWRAP_MISSING, write_task
from tackroom.errors import StateError, TackroomError
from tackroom.eval.cell import Cell, CellResult
from tackroom.eval.evaluate import evaluate, stored
from tackroom.eval.results import ResultStore
from tackroom.eval.tasks import load_task

needs_bwrap = pytest.mark.skipif(BWRAP_MISSING is not None, reason=BWRAP_MISSING or "")


def result(cell_id: str, attempt: int = 0, outcome: str = "ok", **fields: Any) -> CellResult:
    data = {
        "cell_id": cell_id,
        "task": "alpha",
        "harness": "oracle",
        "model": None,
        "repeat": 0,
        "outcome": outcome,
        "reason": None,
        "rewards": {"reward": 1.0} if outcome == "ok" else None,
        "reward_status": "ok" if outcome == "ok" else None,
        "attempt": attempt,
        "cell_dir": f"/evals/x/cells/{cell_id}",
        "exit_code": 0,
        "timed_out": False,
        "usage": None,
        "cost_usd": None,
        "timings": {"total": 1.0},
        "started_at": "2026-12-06T04:00:00Z",
        "finished_at": "2026-12-06T04:00:01Z",
        "run_dirs": [],
        "approximated": False,
        "notes": [],
        "steps": [],
        **fields,
    }
    return CellResult.from_json(data)


def test_the_store_keeps_every_attempt_and_flags_the_latest(backend: str) -> None:  # noqa: F811
    store = ResultStore(backend)
    first = store.evaluation(Path("/evals/one"))
    assert store.evaluation(Path("/evals/one")) == first and store.known(Path("/evals/one")) == first
    assert store.known(Path("/evals/none")) is None and store.last_directory() is None
    store.store(first, [result("c1"), result("c2", outcome="infra")])
    store.store(first, [result("c2", attempt=1)])
    other = store.evaluation(Path("/evals/two"))
    assert other != first
    store.store(other, [result("c1", outcome="harness_crash")])
    latest = store.latest(first)
    assert sorted(latest) == ["c1", "c2"] and latest["c2"].attempt == 1 and latest["c2"].outcome == "ok"
    assert store.attempts(first) == 3 and store.attempts(other) == 1
    assert store.latest(other)["c1"].outcome == "harness_crash"
    assert store.last_directory() == Path("/evals/two")
    # another process (or host) sees the same rows
    assert ResultStore(backend).latest(first) == latest
    # one latest attempt per cell, held by the schema itself
    with pytest.raises(TackroomError):
        store.store(first, [result("c3"), result("c3", attempt=1)])
    assert "c3" not in store.latest(first) and store.attempts(first) == 3


def test_a_store_that_cannot_be_reached_is_said_with_the_url_s_password_hidden(tmp_path: Path) -> None:
    with pytest.raises(StateError) as raised:
        ResultStore("postgresql://eval:s3cret-pw@127.0.0.1:1/results?connect_timeout=2")
    said = str(raised.value)
    assert "cannot reach the PostgreSQL server" in said and "s3cret-pw" not in said
    done = run_cli(
        "eval", "report", "--db", "postgresql://eval:s3cret-pw@127.0.0.1:1/results?connect_timeout=2"
    )
    assert done.returncode == 1 and "cannot reach the PostgreSQL server" in done.stderr
    assert "s3cret-pw" not in done.stderr and "Traceback" not in done.stderr


class FailingStore(ResultStore):
    """The state database's store, whose writes fail after the first (a server gone, a full disk)."""

    def __init__(self, db: Path) -> None:
        super().__init__(db)
        self.writes = 0

    def store(self, evaluation: int, results: Any) -> None:
        self.writes += 1
        if self.writes > 1:
            raise StateError(f"{self.where}: database or disk is full")
        super().store(evaluation, results)


@needs_bwrap
def test_a_store_that_fails_stops_the_evaluation_and_keeps_what_it_stored(tmp_path: Path) -> None:
    task = load_task(write_task(tmp_path))
    cells = [Cell(task=task, harness="oracle", repeat=n) for n in range(4)]
    store = FailingStore(tmp_path / "results.db")
    out = tmp_path / "eval"
    with pytest.raises(
        StateError, match=r"could not be stored: .*disk is full\. The evaluation stops"
    ) as raised:
        asyncio.run(evaluate(cells, out, jobs=1, store=store))
    assert f"--resume --out {out}" in str(raised.value)
    kept = stored(out, ResultStore(tmp_path / "results.db"))
    assert len(kept) == 1 and next(iter(kept.values())).outcome == "ok"
    # once the store works, resuming runs only the cells without a stored result
    again = asyncio.run(evaluate(cells, out, resume=True, store=ResultStore(tmp_path / "results.db")))
    assert [r.outcome for r in again] == ["ok"] * 4
    assert ResultStore(tmp_path / "results.db").attempts(1) == 4


@needs_bwrap
def test_eval_run_and_report_on_a_postgres_store(tmp_path: Path, postgres_server: PostgresServer) -> None:  # noqa: F811
    url = postgres_server.new_database()
    try:
        write_task(tmp_path / "tasks", "alpha")
        write_task(tmp_path / "tasks", "beta", solve="#!/bin/bash\necho no > /app/hello.txt\n")
        out = tmp_path / "eval"
        quick = (
            "eval",
            "run",
            "--task",
            str(tmp_path / "tasks" / "alpha"),
            "--task",
            str(tmp_path / "tasks" / "beta"),
        )
        done = run_cli(*quick, "--harness", "oracle", "--out", str(out), "--db", url, "--json")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["passed"] == 1
        report = run_cli("eval", "report", "--db", url, "--json")
        assert report.returncode == 0, report.stderr
        data = json.loads(report.stdout)
        assert data["directory"] == str(out) and data["grid"]["alpha"]["oracle"][0]["passed"] is True
        assert data["grid"]["beta"]["oracle"][0]["passed"] is False
        # the state database holds none of it: the evaluation lives in the server
        assert run_cli("eval", "report", str(out)).returncode == 1
        resumed = run_cli(*quick, "--harness", "oracle", "--out", str(out), "--db", url, "--resume", "--json")
        assert resumed.returncode == 0 and ResultStore(url).attempts(ResultStore(url).known(out) or 0) == 2
    finally:
        postgres_server.drop_database(url)


@needs_bwrap
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="a small disk is made with bwrap --size")
def test_a_disk_that_fills_fails_cells_with_their_reason_and_loses_no_result(tmp_path: Path) -> None:
    """The evaluation's directory on a 1 MiB filesystem (a tmpfs bubblewrap mounts, ``--size``) whose
    task writes 4 MiB: each cell fails with what filled, every result is stored, and the report reads
    them; ``eval run`` ends on its own, without a traceback."""
    big = "#!/bin/bash\nhead -c 4000000 /dev/zero > /app/big.bin\necho hello > /app/hello.txt\n"
    task = write_task(tmp_path / "tasks", "fill", solve=big)
    small = tmp_path / "small"
    small.mkdir()
    out = small / "eval"
    command = [
        "bwrap", "--dev-bind", "/", "/", "--size", str(1 << 20), "--tmpfs", str(small), "--",
        sys.executable, "-m", "tackroom", "eval", "run", "--task", str(task), "--harness", "oracle",
        "--repeats", "3", "--out", str(out), "--json",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    cells = json.loads(done.stdout)["cells"]
    assert len(cells) == 3 and all(c["passed"] is not True for c in cells)
    assert all(c["outcome"] == "infra" and "No space left on device" in c["reason"] for c in cells), cells
    kept = stored(out)
    assert len(kept) == 3 and {r.cell_id for r in kept.values()} == {c["cell_id"] for c in cells}


def test_eval_report_on_a_mistyped_db_path_is_an_error_not_a_new_database(tmp_path: Path) -> None:
    typo = tmp_path / "reslts" / "eval.db"
    done = run_cli("eval", "report", "--db", str(typo))
    assert done.returncode == 1 and "no result database there" in done.stderr, done.stderr
    assert not typo.parent.exists()
