"""``tackroom probe``: each harness's probe beside its bare start, and ``probe --all`` at 1 and 2 jobs.

For each installable harness: the bare start is one plain run of the harness
itself (the plan's argv and environment, a fresh home, a mock already
running, answering one text), median of ``--runs``; the probe is the whole
``tackroom probe NAME --json`` process (four real runs, twenty
capabilities). Then the whole ``tackroom probe --all`` process, once with
``--jobs 1`` and once with ``--jobs 2`` (probes of different harnesses at
once). The state database goes to a scratch data dir whose ``harnesses/`` is
a link to the installed ones. Writes the ``probe`` section of RESULTS.md.

    TACKROOM_TEST_DATA=... .venv/bin/python benchmarks/bench_probe.py [--runs 3] [--harness NAME ...]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine, write_section

from tackroom.adapters.plan import Endpoint, plan_run
from tackroom.adapters.resolve import resolve_builtins
from tackroom.harnesses import locate
from tackroom.mock import MockServer, Script
from tackroom.probe.builtin import TIMEOUT_RUN_MIN_S
from tackroom.run.home import prepare_home, stage_files

ROOT = Path(__file__).resolve().parent.parent
TACKROOM = str(Path(sys.executable).parent / "tackroom")
TEXT = "BENCH-REPLY"


def bare_once(name: str, mock: MockServer, env: dict[str, str], scratch: Path) -> float:
    """One plain run of the harness itself: the plan's argv and env, a fresh home, the shared mock."""
    adapter = resolve_builtins()[name]
    located = locate(adapter, env)
    assert located is not None, f"{name} is not installed"
    run_dir = Path(tempfile.mkdtemp(dir=scratch))
    home, workdir = run_dir / "home", run_dir / "work"
    workdir.mkdir()
    plan = plan_run(
        adapter, "say hi", workdir=workdir, home=home, endpoint=Endpoint.for_mock(mock.base_url), environ=env
    )
    prepare_home(adapter, run_dir, home, False, env, [])
    stage_files(plan.files, home)
    child_env = plan.environ()
    if located.bin_dir is not None:
        child_env["PATH"] = f"{located.bin_dir}{os.pathsep}{child_env['PATH']}"
    start = time.perf_counter()
    done = subprocess.run(
        [str(located.path), *plan.argv[1:]],
        env=child_env,
        cwd=workdir,
        capture_output=True,
        input=plan.stdin.encode() if plan.stdin is not None else b"",
        timeout=120,
        check=False,
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0 or not done.stdout:  # (the text may arrive split over stream lines)
        raise RuntimeError(f"bare {name} failed ({done.returncode}): {done.stderr.decode()[-800:]}")
    return elapsed


def probe_process(args: list[str], env: dict[str, str], cwd: Path) -> tuple[float, object]:
    """Wall time of one whole ``tackroom probe ...`` process, and its JSON output."""
    start = time.perf_counter()
    done = subprocess.run(
        [TACKROOM, "probe", *args, "--json"], env=env, cwd=cwd, capture_output=True, check=False
    )
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise RuntimeError(f"tackroom probe {args} failed ({done.returncode}): {done.stderr.decode()[-800:]}")
    return elapsed, json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--harness", nargs="+", default=None)
    args = parser.parse_args()
    data = Path(os.environ.get("TACKROOM_TEST_DATA") or ROOT / ".cache" / "tackroom-test")
    builtins = resolve_builtins()
    names = args.harness or sorted(n for n, a in builtins.items() if a.spec.verified_with and a.spec.install)
    with (
        tempfile.TemporaryDirectory(prefix="bench-probe-") as scratch_dir,
        MockServer(Script.text(TEXT)) as mock,
    ):
        scratch = Path(scratch_dir)
        (scratch / "data" / "tackroom").mkdir(parents=True)
        (scratch / "data" / "tackroom" / "harnesses").symlink_to(data / "tackroom" / "harnesses")
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(scratch / "home"),
            "LANG": "C.UTF-8",
            "XDG_DATA_HOME": str(scratch / "data"),
            "XDG_CACHE_HOME": str(scratch / "cache"),
            "XDG_CONFIG_HOME": str(scratch / "config"),
            "TACKROOM_CONFIG_DIR": str(scratch / "tackroom-config"),
        }
        per_harness = []
        for name in names:
            if locate(builtins[name], env) is None:
                print(f"{name}: not installed, skipped", file=sys.stderr)
                continue
            bare_once(name, mock, env, scratch)  # warm the page cache
            bare = statistics.median(bare_once(name, mock, env, scratch) for _ in range(args.runs))
            seconds, row = probe_process([name], env, scratch)
            assert isinstance(row, dict)
            per_harness.append((name, str(row["harness_version"]), bare, seconds, str(row["outcome"])))
            print(f"{name}: bare {bare:.2f}s, probe {seconds:.1f}s ({row['outcome']})", file=sys.stderr)
        alls = {}
        for jobs in (1, 2):
            seconds, rows = probe_process(["--all", "--jobs", str(jobs)], env, scratch)
            assert isinstance(rows, list)
            alls[jobs] = (seconds, sum(1 for r in rows if r["outcome"] != "not_installed"))
            print(f"probe --all --jobs {jobs}: {seconds:.1f}s", file=sys.stderr)
    body = report(per_harness, alls, args.runs)
    write_section("probe", body)
    print(body)


def report(
    per_harness: list[tuple[str, str, float, float, str]], alls: dict[int, tuple[float, int]], runs: int
) -> str:
    lines = "\n".join(
        f"| {name} {version} | {bare * 1000:.0f} | {probe:.1f} | {probe / bare:.1f}x | {outcome} |"
        for name, version, bare, probe, outcome in per_harness
    )
    total = sum(p for *_, p, _ in per_harness)
    one, two = alls[1][0], alls[2][0]
    return f"""## Probes: `tackroom probe` beside the bare harness, and `probe --all` (issue 8)

Measured {datetime.date.today()} on {machine()} (shared with other work), whole processes. Bare start =
one plain run of the harness itself (its plan's argv and environment, a fresh home, a mock already
running, one text answer), median of {runs}; probe = `tackroom probe NAME --json`: four real runs
(profile, tools, error, timeout) giving twenty capabilities, once.

| harness | bare start ms | probe s | probe / bare | outcome |
|---|---|---|---|---|
{lines}

Sum of the single probes: {total:.1f} s. `tackroom probe --all` ({alls[1][1]} installed harnesses; the
other adapters are listed as not installed):

| jobs | wall s |
|---|---|
| 1 | {one:.1f} |
| 2 | {two:.1f} |

Two jobs take {two / one:.0%} of one job's time. A probe is four harness runs, and its timeout run
waits for its own timeout (twice the time the harness took to reach the model in the profile run,
plus 2 s, at least {TIMEOUT_RUN_MIN_S:g} s), so a probe costs about four bare starts plus that wait;
on 2 cores shared with other work, two probes at once contend for the same CPUs. A `failed`
outcome is the probe's finding, not the benchmark's (see docs/capabilities.md).
"""


if __name__ == "__main__":
    main()
