"""``tackroom run <h> --mock-text ...`` against the bare harness invocation, side by side.

For each harness: the bare run is the exact argv and environment tackroom
would use (taken from the plan), pointed at a mock server already running in
this process, with a fresh home per run; the tackroom run is the whole
``tackroom run`` process, which resolves the adapter, starts its own mock,
makes a run directory, spawns the same harness and parses its stream. Rounds
alternate the two so load drift hits both alike. The mock's own latency per
request is read from its recorder. Writes the ``run`` section of RESULTS.md.

    .venv/bin/python benchmarks/bench_run.py [--runs 8] [--harness claude-code codex pi]
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import BY_ITSELF, machine, write_section

from tackroom.adapters.plan import Endpoint, plan_run
from tackroom.adapters.resolve import resolve_builtins
from tackroom.harnesses import locate
from tackroom.install import install
from tackroom.mock import MockServer, Script
from tackroom.run.home import prepare_home, stage_files

ROOT = Path(__file__).resolve().parent.parent
TEXT = "BENCH-REPLY"
TARGET = 0.10


def bare_once(name: str, mock: MockServer, env: dict[str, str], scratch: Path) -> float:
    """One bare invocation: the plan's argv and env, a fresh home, the shared mock."""
    adapter = resolve_builtins()[name]
    located = locate(adapter, env)
    assert located is not None, f"{name} is not installed"
    run_dir = Path(tempfile.mkdtemp(dir=scratch))
    home = run_dir / "home"
    workdir = run_dir / "work"
    workdir.mkdir()
    endpoint = Endpoint.for_mock(mock.base_url)
    plan = plan_run(adapter, "say hi", workdir=workdir, home=home, endpoint=endpoint, environ=env)
    prepare_home(adapter, run_dir, home, False, env, [])  # the home a run gets, made before the clock starts
    stage_files(plan.files, home)
    child_env = plan.environ()
    if located.bin_dir is not None:
        child_env["PATH"] = f"{located.bin_dir}{os.pathsep}{child_env['PATH']}"
    argv = [str(located.path), *plan.argv[1:]]
    start = time.perf_counter()
    done = subprocess.run(
        argv, env=child_env, cwd=workdir, capture_output=True, stdin=subprocess.DEVNULL, timeout=120
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0 or TEXT.encode() not in done.stdout:
        raise RuntimeError(f"bare {name} failed ({done.returncode}): {done.stderr.decode()[-1000:]}")
    return elapsed


def tackroom_once(name: str, env: dict[str, str], scratch: Path) -> float:
    workdir = Path(tempfile.mkdtemp(dir=scratch))
    argv = [
        str(Path(sys.executable).parent / "tackroom"),
        "run",
        name,
        "say hi",
        "--mock-text",
        TEXT,
        "--json",
    ]
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=workdir, capture_output=True, timeout=120)
    elapsed = time.perf_counter() - start
    if done.returncode != 0 or TEXT.encode() not in done.stdout:
        raise RuntimeError(f"tackroom run {name} failed ({done.returncode}): {done.stderr.decode()[-1000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--harness", nargs="+", default=["claude-code", "codex", "pi"])
    args = parser.parse_args()
    data = Path(os.environ.get("TACKROOM_TEST_DATA") or ROOT / ".cache" / "tackroom-test")
    rows, latencies = [], []
    with tempfile.TemporaryDirectory() as scratch_dir, MockServer(Script.text(TEXT)) as mock:
        scratch = Path(scratch_dir)
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(scratch / "home"),
            "LANG": "C.UTF-8",
            "XDG_DATA_HOME": str(data),
            "XDG_CACHE_HOME": str(scratch / "cache"),
            "TACKROOM_CONFIG_DIR": str(scratch / "config"),
            **BY_ITSELF,
        }
        for name in args.harness:
            install(resolve_builtins()[name], env={**os.environ, "XDG_DATA_HOME": str(data)})
            bare_once(name, mock, env, scratch)  # warm the page cache for both
            tackroom_once(name, env, scratch)
            bare, wrapped = [], []
            for _ in range(args.runs):
                bare.append(bare_once(name, mock, env, scratch))
                wrapped.append(tackroom_once(name, env, scratch))
            b, t = statistics.median(bare), statistics.median(wrapped)
            rows.append((name, b, t))
            print(f"{name}: bare {b * 1000:.0f} ms, tackroom {t * 1000:.0f} ms, +{(t / b - 1) * 100:.1f}%")
        startup = statistics.median(startup_once(env, scratch) for _ in range(args.runs))
        latencies = mock.latencies()
    body = report(rows, latencies, args.runs, startup)
    write_section("run", body)
    print(body)


def startup_once(env: dict[str, str], scratch: Path) -> float:
    """tackroom's own fixed start-up: the CLI answering a cached listing, no harness involved."""
    start = time.perf_counter()
    argv = [str(Path(sys.executable).parent / "tackroom"), "adapters", "list", "--json"]
    subprocess.run(argv, env=env, cwd=scratch, capture_output=True, check=True)
    return time.perf_counter() - start


def report(rows: list[tuple[str, float, float]], latencies: list[float], runs: int, startup: float) -> str:
    lines = "\n".join(
        f"| {name} | {b * 1000:.0f} | {t * 1000:.0f} | {t / b:.3f} | {(t - b) * 1000:+.0f} | "
        f"{'met' if t / b - 1 <= TARGET else 'missed'} |"
        for name, b, t in rows
    )
    lat = sorted(latencies)
    p50 = statistics.median(lat) * 1000 if lat else float("nan")
    p95 = lat[int(len(lat) * 0.95) - 1] * 1000 if lat else float("nan")
    return f"""## Run overhead: `tackroom run` vs the bare harness (issue 3)

Measured {datetime.date.today()} on {machine()}, {runs} alternating rounds per harness, median wall
time of whole processes. Bare = the same argv and environment (from the plan), a fresh home per run,
pointed at a mock already running; tackroom = `tackroom run <h> "say hi" --mock-text ... --json`, which
also resolves the adapter, starts its own mock, makes the run directory and parses the stream.

| harness | bare ms | tackroom ms | ratio | overhead ms | target <= +{TARGET:.0%} |
|---|---|---|---|---|---|
{lines}

Mock server latency per request (received -> last byte written), over {len(lat)} requests:
median {p50:.2f} ms, p95 {p95:.2f} ms.

The overhead is a roughly constant cost, not a share of the harness's time: tackroom's own start-up
(Python, the CLI, a cached adapter listing) measured in the same run is {startup * 1000:.0f} ms; the
rest is importing the runner and the mock, the run directory and its home, and parsing and saving the
stream. It weighs least on the slowest harness. The 10 % target is not met for any of the three.
"""


if __name__ == "__main__":
    main()
