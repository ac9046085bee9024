"""Evaluation at scale (issue 25): cells per minute for the example suite on the mock, the local pool
beside a Ray cluster on this machine, tackroom's overhead per cell, scaling with --jobs, and the
results store and report for 10,000 synthetic cells.

- The suite: examples/suite (six Harbor tasks, a mock script each) with Claude Code and the oracle,
  ``--repeats R``: 12 × R cells. Each cell's overhead is its wall time less the harness's own run
  (its process, start to exit) and the verifier's script: setting up the cell's root, the sandbox,
  planning and preparing the run, the mock, reading the transcript, grading, storing; on Ray also
  Ray's part (the task shipped in, the cell's directory packed, returned and unpacked).
- Local pool at ``--jobs`` 1, 2 and 4; Ray: a head and a worker node on loopback, one CPU each.
- 10,000 synthetic cell results written to the state database in batches, then the report's data
  and its HTML built from them.

    .venv/bin/python benchmarks/bench_eval.py [--repeats 3] [--write]

Needs Claude Code installed (``tackroom install claude-code``, into ``$TACKROOM_TEST_DATA``), bwrap,
and Ray (``pip install 'tackroom[ray]'``).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from _common import machine, write_section

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "examples" / "suite"


def suite_cells(scratch: Path, repeats: int) -> list[Any]:
    from tackroom.eval.matrix import load_matrix

    copy = scratch / "suite"
    shutil.copytree(SUITE, copy, dirs_exist_ok=True)
    matrix = copy / "matrix.toml"
    matrix.write_text(matrix.read_text().replace("repeats = 1", f"repeats = {repeats}"))
    return list(load_matrix(matrix).cells)


def run(
    cells: list[Any], out: Path, store: Any, executor: Any = None, jobs: int | None = None
) -> dict[str, float]:
    from tackroom.eval.evaluate import evaluate

    started = time.perf_counter()
    results = asyncio.run(evaluate(cells, out, jobs=jobs, executor=executor, store=store))
    wall = time.perf_counter() - started
    ran = [r for r in results if r.outcome != "unsupported"]  # those never start a sandbox
    overheads = [r.timings["total"] - r.timings.get("harness", 0) - r.timings.get("tests", 0) for r in ran]
    totals = [r.timings["total"] for r in ran]
    return {
        "cells": len(results),
        "wall_s": wall,
        "cells_per_min": len(results) / wall * 60,
        "overhead_ms": statistics.median(overheads) * 1000,
        "overhead_share": sum(overheads) / sum(totals),
        "cell_s": statistics.median(totals),
        "ray_ms": statistics.median(r.timings.get("ray", 0.0) for r in ran) * 1000,
    }


def synthetic(count: int, scratch: Path) -> dict[str, float]:
    from tackroom.eval.cell import CellResult
    from tackroom.eval.report import build
    from tackroom.eval.report.html import render_html
    from tackroom.eval.results import ResultStore
    from tackroom.state.db import StateDB

    store = ResultStore(StateDB(scratch / "state.db"))
    directory = scratch / "synthetic"
    evaluation = store.evaluation(directory)
    harnesses = ["claude-code", "codex", "gemini", "opencode", "pi"]
    results = []
    for i in range(count):
        reward = float((i * 7919) % 3 != 0)
        results.append(
            CellResult(
                cell_id=f"{i:064x}",
                task=f"task-{i % 200:03d}",
                harness=harnesses[i % len(harnesses)],
                model="claude-sonnet-4-5",
                repeat=i // 1000,
                outcome="ok",
                reason=None,
                rewards={"reward": reward},
                reward_status="ok",
                exit_code=0,
                usage={"reported": {"input": 2100, "output": 120, "cache_read": 200, "cache_write": 50}},
                cost_usd=0.0083475,
                timings={"setup": 0.03, "agent": 1.2, "verifier": 0.05, "total": 1.3},
                cell_dir=str(directory / "cells" / f"{i:064x}"),
            )
        )
    started = time.perf_counter()
    for start in range(0, count, 500):
        store.store(evaluation, results[start : start + 500])
    written = time.perf_counter() - started
    started = time.perf_counter()
    data = build(directory, details=False, store=store)
    built = time.perf_counter() - started
    started = time.perf_counter()
    html = render_html(data)
    rendered = time.perf_counter() - started
    assert len(data["cells"]) == count
    return {"write_s": written, "report_s": built, "html_s": rendered, "html_mb": len(html) / 1e6}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--synthetic", type=int, default=10_000)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    data = os.environ.get("TACKROOM_TEST_DATA") or str(ROOT / ".cache" / "tackroom-test")
    scratch = Path(tempfile.mkdtemp(prefix="bench-eval-"))
    home = scratch / "home"
    os.environ.update(
        HOME=str(home),
        XDG_DATA_HOME=data,
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_CACHE_HOME=str(home / "cache"),
        TACKROOM_CONFIG_DIR=str(home / "tackroom-config"),
    )
    from tackroom.eval.ray import RayExecutor
    from tackroom.eval.results import ResultStore
    from tackroom.state.db import StateDB

    store = ResultStore(StateDB(scratch / "state.db"))  # the harnesses are installed under XDG_DATA_HOME
    cells = suite_cells(scratch, args.repeats)
    rows: list[tuple[str, dict[str, float]]] = []
    for jobs in (1, 2, 4):
        fresh = [replace(c) for c in cells]  # the same cells: each run is an evaluation of its own
        rows.append((f"local, --jobs {jobs}", run(fresh, scratch / f"local-{jobs}", store, jobs=jobs)))
        print(rows[-1], flush=True)
    from raykit import ray_cluster

    with ray_cluster(scratch / "ray-home", data=Path(data)) as address:
        rows.append(
            ("Ray, 2 nodes × 1 CPU", run(cells, scratch / "ray", store, executor=RayExecutor(address)))
        )
        print(rows[-1], flush=True)
    big = synthetic(args.synthetic, scratch)
    print(big, flush=True)
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "## Evaluation at scale: cells per minute, overhead per cell, the report of 10,000 cells (issue 25)",
        "",
        f"Measured {when} on {machine()}, `benchmarks/bench_eval.py --repeats {args.repeats}`: the example "
        f"suite (examples/suite, six Harbor tasks) with Claude Code and the oracle on the mock, "
        f"{len(cells)} cells, each in bubblewrap. Overhead per cell = its wall time less the harness's own "
        "run and the verifier's script (median over the cells that start a sandbox); its share = the "
        "sum of overheads over the sum of cell times. On Ray the overhead includes Ray's part (the "
        "task shipped in, the cell's directory packed, returned and unpacked), also shown alone.",
        "",
        "| executor | cells | wall s | cells/min | median cell s | overhead per cell ms | of which Ray's ms "
        "| overhead share |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, row in rows:
        lines.append(
            f"| {name} | {row['cells']:.0f} | {row['wall_s']:.1f} | {row['cells_per_min']:.1f} | "
            f"{row['cell_s']:.2f} | {row['overhead_ms']:.0f} | {row['ray_ms']:.0f} | "
            f"{row['overhead_share']:.1%} |"
        )
    lines += [
        "",
        f"{args.synthetic:,} synthetic cell results: stored in {big['write_s']:.2f} s (batches of 500), "
        f"the report's data built in **{big['report_s']:.2f} s** (target: under 2 s), its HTML "
        f"({big['html_mb']:.1f} MB) in {big['html_s']:.2f} s.",
    ]
    print("\n".join(lines))
    if args.write:
        write_section("eval", "\n".join(lines))
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
