"""Cells on a real Ray cluster: a head and a worker node started by the test on loopback (no mocked
Ray), the same cells and results as the local pool, the cells' directories brought back, a worker
killed mid-cell making that cell ``worker_lost`` and ``--resume`` doing it again."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalkit import BWRAP_MISSING, write_task
from raykit import free_port, pids_matching, ray_cluster
from tackroom.errors import RayUnavailableError
from tackroom.eval.cell import Cell
from tackroom.eval.evaluate import evaluate, stored
from tackroom.eval.ray import RayExecutor
from tackroom.eval.results import ResultStore
from tackroom.eval.tasks import load_task

ray = pytest.importorskip(
    "ray", reason="Ray is not installed: pip install 'tackroom[ray]' (scripts/test does)"
)

pytestmark = [
    pytest.mark.skipif(BWRAP_MISSING is not None, reason=BWRAP_MISSING or ""),
    pytest.mark.timeout(300),
]
RAY = Path(sys.executable).with_name("ray")
SLOW = "7.125"  # the slow task's sleep: a marker to find its processes by


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with ray_cluster(tmp_path_factory.mktemp("ray-home")) as address:
        yield address


def suite(root: Path) -> list[Cell]:
    write_task(root, "a-pass")
    write_task(root, "b-fail", solve="#!/bin/bash\necho no > /app/hello.txt\n")
    write_task(root, "c-no-reward", test="#!/bin/bash\nexit 0\n")
    return [
        Cell(task=load_task(root / name), harness="oracle") for name in ("a-pass", "b-fail", "c-no-reward")
    ]


@pytest.mark.parametrize(
    ("in_place", "how"),
    [(True, "in the evaluation's directory"), (False, "its directory shipped back")],
    ids=["in-place", "shipped"],
)
def test_cells_run_on_the_cluster_as_they_run_here(
    cluster: str, tmp_path: Path, in_place: bool, how: str
) -> None:
    """Workers here see the evaluation's directory, so they run cells in it; ``in_place=False``
    takes the way cells take across machines: the task shipped in, the directory packed back."""
    cells = suite(tmp_path / "tasks")
    on_ray = asyncio.run(evaluate(cells, tmp_path / "ray", executor=RayExecutor(cluster, in_place=in_place)))
    here = asyncio.run(evaluate(cells, tmp_path / "local", jobs=2))
    summary = [(r.task, r.outcome, r.reward, r.reward_status) for r in on_ray]
    assert summary == [(r.task, r.outcome, r.reward, r.reward_status) for r in here]
    assert summary == [
        ("a-pass", "ok", 1.0, "ok"),
        ("b-fail", "ok", 0.0, "ok"),
        ("c-no-reward", "no_reward", None, "missing"),
    ]
    assert [r.cell_id for r in on_ray] == [c.id for c in cells]  # the same cells, by id
    for result in on_ray:  # each cell's directory came back into the evaluation's
        cell_dir = Path(result.cell_dir)
        assert cell_dir == tmp_path / "ray" / "cells" / result.cell_id
        assert (cell_dir / "result.json").is_file() and (cell_dir / "instruction.md").is_file()
        assert result.notes[-1] == f"ran on Ray node {socket.gethostname()}, {how}"
        # Ray's part (the task shipped in, the directory back) is counted in the cell's time
        timings = result.timings
        assert 0 < timings["ray"] < timings["total"] and timings["total"] >= timings["setup"] + timings["ray"]
    assert all("ray" not in r.timings for r in here)
    assert (tmp_path / "ray" / "cells" / cells[0].id / "root" / "app" / "hello.txt").read_text() == "hello\n"
    assert set(stored(tmp_path / "ray")) == {c.id for c in cells}


def test_a_worker_killed_mid_cell_is_worker_lost_and_resume_redoes_it(cluster: str, tmp_path: Path) -> None:
    slow = write_task(
        tmp_path / "tasks", "slow", solve=f"#!/bin/bash\nsleep {SLOW}\necho hello > /app/hello.txt\n"
    )
    cells = [Cell(task=load_task(slow), harness="oracle")]
    out = tmp_path / "eval"

    async def kill_when_running() -> None:
        deadline = time.monotonic() + 120
        while not pids_matching(SLOW) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        workers = [p for p in pids_matching("_run_remote") if p not in pids_matching(SLOW)]
        for pid in workers or pids_matching("ray::"):
            if "_run_remote" in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"):
                os.kill(pid, signal.SIGKILL)

    async def both() -> list[object]:
        return list(
            await asyncio.gather(evaluate(cells, out, executor=RayExecutor(cluster)), kill_when_running())
        )

    results, _ = asyncio.run(both())
    (lost,) = results  # type: ignore[misc]
    assert lost.outcome == "worker_lost" and "lost" in (lost.reason or ""), lost
    assert lost.policy.retry and not lost.policy.graded
    deadline = time.monotonic() + 20
    while pids_matching(SLOW) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not pids_matching(SLOW), "the lost cell's processes outlived its worker"
    (again,) = asyncio.run(evaluate(cells, out, resume=True, executor=RayExecutor(cluster)))
    assert (again.outcome, again.reward, again.attempt) == ("ok", 1.0, 1)
    store = ResultStore()
    evaluation = store.known(out)
    assert evaluation is not None and store.attempts(evaluation) == 2


def test_a_ray_address_that_does_not_answer_is_a_clear_error(tmp_path: Path) -> None:
    ray.shutdown()
    cells = suite(tmp_path / "tasks")[:1]
    address = f"127.0.0.1:{free_port()}"
    started = time.monotonic()
    with pytest.raises(RayUnavailableError, match=f"the Ray cluster at {address} does not answer"):
        asyncio.run(evaluate(cells, tmp_path / "eval", executor=RayExecutor(address)))
    assert time.monotonic() - started < 120
    assert stored(tmp_path / "eval") == {}
