"""A run's spec and its sandbox, side by side (issue 24): what a RunSpec costs to build and hash, and
what bubblewrap adds to a whole ``tackroom run``.

Spec: a RunSpec with a prompt, options, a mock script and a workdir, built and hashed, against
planning the same run (``plan_run``, the work every run does anyway), in one process, median of
many. Sandbox: ``tackroom run <h> "say hi" --mock-text ... --json`` with no sandbox, in bwrap, and in
bwrap with no network (the relay in front), rounds alternating so load drift hits all alike.
Writes the ``sandbox`` section of RESULTS.md.

    .venv/bin/python benchmarks/bench_sandbox.py [--runs 8] [--harness claude-code codex]
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import BY_ITSELF, interleaved, machine, write_section

from tackroom.adapters.plan import Endpoint, plan_run
from tackroom.adapters.resolve import resolve_builtins
from tackroom.install import install
from tackroom.mock import Script, Turn
from tackroom.run.spec import RunSpec

ROOT = Path(__file__).resolve().parent.parent
TEXT = "BENCH-REPLY"


def per_call(work: Callable[[], object], rounds: int = 2000) -> float:
    """Median seconds of one call of ``work``, over batches of 100."""
    batches = []
    for _ in range(rounds // 100):
        start = time.perf_counter()
        for _ in range(100):
            work()
        batches.append((time.perf_counter() - start) / 100)
    return statistics.median(batches)


def spec_costs(workdir: Path) -> tuple[float, float]:
    script = Script([Turn.call("read_file", {"path": "README.md"}), Turn.reply("done")])
    options = {"max_turns": 4, "allowed_tools": ["Read", "Edit"]}
    adapter = resolve_builtins()["claude-code"]
    env = {"PATH": os.environ["PATH"], "HOME": str(workdir)}
    endpoint = Endpoint.for_mock("http://127.0.0.1:9")

    def spec() -> str:
        made = RunSpec(
            prompt="fix the bug", adapter="claude-code", options=options, workdir=workdir, mock=script
        )
        return made.hash

    def plan() -> object:
        return plan_run(
            adapter,
            "fix the bug",
            options=options,
            workdir=workdir,
            home=workdir,
            endpoint=endpoint,
            environ=env,
        )

    spec(), plan()
    return per_call(spec), per_call(plan)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--harness", nargs="+", default=["claude-code", "codex"])
    args = parser.parse_args()
    data = Path(os.environ.get("TACKROOM_TEST_DATA") or ROOT / ".cache" / "tackroom-test")
    rows = []
    with tempfile.TemporaryDirectory() as scratch_dir:
        scratch = Path(scratch_dir)
        spec_s, plan_s = spec_costs(scratch)
        print(f"spec built and hashed: {spec_s * 1e6:.0f} us; plan_run: {plan_s * 1e6:.0f} us")
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(scratch / "home"),
            "LANG": "C.UTF-8",
            "XDG_DATA_HOME": str(data),
            "XDG_CACHE_HOME": str(scratch / "cache"),
            "TACKROOM_CONFIG_DIR": str(scratch / "config"),
            **BY_ITSELF,
        }
        tackroom = str(Path(sys.executable).parent / "tackroom")
        for name in args.harness:
            install(resolve_builtins()[name], env={**os.environ, "XDG_DATA_HOME": str(data)})
            base = [tackroom, "run", name, "say hi", "--mock-text", TEXT, "--json", "--workdir", str(scratch)]
            commands = {
                "none": base,
                "bwrap": [*base, "--sandbox", "bwrap"],
                "offline": [*base, "--sandbox", "bwrap", "--network", "none"],
            }
            interleaved(commands, env, 1)  # warm the page cache for all three
            times = {k: statistics.median(v) for k, v in interleaved(commands, env, args.runs).items()}
            rows.append((name, times))
            print(name, {k: f"{v * 1000:.0f} ms" for k, v in times.items()})
    write_section("sandbox", report(spec_s, plan_s, rows, args.runs))


def report(spec_s: float, plan_s: float, rows: list[tuple[str, dict[str, float]]], runs: int) -> str:
    def cell(t: dict[str, float], key: str) -> str:
        return f"{t[key] * 1000:.0f} ({(t[key] - t['none']) * 1000:+.0f})"

    lines = "\n".join(
        f"| {name} | {t['none'] * 1000:.0f} | {cell(t, 'bwrap')} | {cell(t, 'offline')} |" for name, t in rows
    )
    return f"""## RunSpec and the bwrap sandbox (issue 24)

Measured {datetime.date.today()} on {machine()} with `.venv/bin/python benchmarks/bench_sandbox.py
--runs {runs}`.

A RunSpec (prompt, two options, a two-turn mock script, a workdir) built and hashed: **{spec_s * 1e6:.0f} us**
(target: under 1 ms), beside {plan_s * 1e6:.0f} us to plan the same run with `plan_run`.

`tackroom run <h> "say hi" --mock-text ... --json`, median wall time of whole processes over {runs}
alternating rounds, in ms (the difference to no sandbox in brackets; issue 24's target for bwrap's own
cost: at most +30 ms):

| harness | no sandbox | bwrap | bwrap, network none |
|---|---|---|---|
{lines}

What bwrap adds: one `bwrap ... true` per process to check, before anything starts, that namespaces
can be made here (about 5 ms), bwrap setting up its mounts and namespaces, and, with no network, the
relay's own Python start in front of the harness and the host relay thread. The harness's run
varies by more than that between rounds on this shared machine (a negative difference is noise).
"""


if __name__ == "__main__":
    main()
