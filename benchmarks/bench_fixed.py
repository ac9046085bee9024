"""Every fixed cost of issue 24 item 4, side by side in one run, each against its target.

- CLI start: ``tackroom adapters list --json`` beside bare ``python -c pass`` (target: at most 60 ms).
- Run overhead: ``tackroom run fast "say hi" --mock-text hi --json`` beside the bare harness, the
  same argv and environment (target: at most +60 ms). The harness is a fast fake: a shell script
  that prints a recorded Claude Code stream, behind an operator adapter extending claude-code, so
  the difference is tackroom's own cost and not the harness's start-up.
- bwrap's own cost: the same run with ``--sandbox bwrap`` beside it (target: at most +30 ms more).
- The same commands served by a resident tackroom (``tackroom resident start``: the modules loaded
  once, each command forked from them), beside the same commands run by themselves
  (``TACKROOM_NO_RESIDENT=1``, every other row): CLI start, run overhead and the render, against the
  same targets.
- The same three commands as a user's commands run them by default: nothing started by hand, the
  first command starts a resident in the background (``tackroom.handover.start_for_next``), the ones
  after it are served (a cache directory of their own, so the resident above does not serve them).
- Profile render for 9 targets (the harnesses rulesync also knows; the profile of
  ``bench_profile.py``) as a user runs it, ``tackroom profile render NAMES --profile P --into DIR
  --json``, into a fresh directory (target: at most 100 ms), beside ``rulesync generate`` when it is
  installed (``bench_profile.py`` installs it). Beside it, what the disk costs: the same render into
  memory (``/dev/shm``), and the floor, the same 155 directories and 175 files made with bare system
  calls by a Python process (less bare Python's start).
- A RunSpec built and hashed (target: under 1 ms), beside planning the same run.
- With ``--usage-mb N``: ``tackroom usage daily --json`` first pass over an N MB Claude Code corpus
  with nothing cached, beside ccusage 20.0.24 (``trace_bench.py``'s rounds; target: at least 1x).

Whole processes, rounds alternating so load drift hits every side alike; medians. Writes the
``fixed`` section of RESULTS.md with ``--write``.

    .venv/bin/python benchmarks/bench_fixed.py [--runs 21] [--usage-mb 500] [--write]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine, write_section
from bench_profile import PEERS, realistic, rulesync_tree
from bench_sandbox import spec_costs

from tackroom.profile.write import write_profile
from tackroom.sandboxes.bwrap import BwrapSandbox

ROOT = Path(__file__).resolve().parent.parent
RECORDED = ROOT / "tests" / "golden" / "claude-code" / "claude-code-text" / "stream.jsonl"
RULESYNC = ROOT / ".cache" / "bench" / "rulesync" / "node_modules" / ".bin" / "rulesync"
FAKE = f"""#!/bin/sh
case "$1" in
  --version) echo "2.1.332 (Claude Code)" ;;
  *) cat {RECORDED} ;;
esac
"""
Argv = Callable[[int], list[str]]
ALONE = {"TACKROOM_NO_RESIDENT": "1"}
"""Every row but the resident's: the command runs by itself, a resident or not."""
SERVED = ("tackroom adapters list --json", "tackroom run", "profile render, 9 targets")
"""The rows measured a second time, served by a resident (``..., resident``)."""
BY_DEFAULT = ", by default"
"""The suffix of the :data:`SERVED` rows measured a third time, as they run with nothing said: served
by the resident the first of them started."""


def environment(scratch: Path) -> dict[str, str]:
    """A home, config and data of the benchmark's own, with the fast fake as adapter ``fast``."""
    fake = scratch / "fake-claude"
    fake.write_text(FAKE, encoding="utf-8")
    fake.chmod(0o755)
    drop_ins = scratch / "config" / "adapters.d"
    drop_ins.mkdir(parents=True)
    (drop_ins / "fast.toml").write_text(
        f'[adapter.fast]\nextends = "claude-code"\nexecutable = "{fake}"\n', encoding="utf-8"
    )
    (scratch / "work").mkdir()
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(scratch / "home"),
        "LANG": "C.UTF-8",
        "TACKROOM_CONFIG_DIR": str(scratch / "config"),
        "XDG_DATA_HOME": str(scratch / "data"),
        "XDG_CACHE_HOME": str(scratch / "cache"),
    }


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """Seconds ``argv`` takes to run to its end (it must succeed)."""
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{argv[:4]} failed ({done.returncode}): {done.stderr.decode()[-1500:]}")
    return elapsed


def sides(scratch: Path, env: dict[str, str], tackroom: str, memory: Path | None) -> dict[str, Argv]:
    work = scratch / "work"
    run = [tackroom, "run", "fast", "say hi", "--mock-text", "hi", "--json", "--workdir", str(work)]
    # The bare harness: the argv the run itself spawned, from its result (the warm-up run).
    first = subprocess.run(run, env={**env, **ALONE}, capture_output=True, text=True, check=True)
    bare = json.loads(first.stdout)["argv"]
    profile, targets = scratch / "profile", list(PEERS)
    write_profile(realistic(), profile)
    found: dict[str, Argv] = {
        "python -c pass": lambda n: [sys.executable, "-c", "pass"],
        "tackroom adapters list --json": lambda n: [tackroom, "adapters", "list", "--json"],
        "bare fake harness": lambda n: bare,
        "tackroom run": lambda n: run,
    }
    if BwrapSandbox.available() is None:
        found["tackroom run --sandbox bwrap"] = lambda n: [*run, "--sandbox", "bwrap"]

    def render(root: Path) -> Argv:
        return lambda n: [
            tackroom, "profile", "render", *targets, "--profile", str(profile),
            "--into", str(root / f"render-{n}"), "--json",
        ]  # fmt: skip

    found["profile render, 9 targets"] = render(scratch)
    if memory is not None:
        found["profile render, 9 targets, into memory"] = render(memory)
        tree = scratch / "render-tree.json"
        subprocess.run(render(scratch)(-1), env={**env, **ALONE}, capture_output=True, check=True)
        tree.write_text(json.dumps(_tree(scratch / "render--1")), encoding="utf-8")
        found["the disk's floor: the same tree, bare system calls"] = lambda n: [
            sys.executable, "-c", FLOOR, str(tree), str(scratch / f"floor-{n}")
        ]  # fmt: skip
    if RULESYNC.is_file():
        rulesync_tree(realistic(), scratch / "rs")
        features = "rules,mcp,subagents,commands,skills,hooks"
        found["rulesync generate, 9 targets"] = lambda n: [
            str(RULESYNC), "generate", "-t", ",".join(PEERS.values()), "-f", features, "-s"
        ]  # fmt: skip
    for name in SERVED:
        found[f"{name}, resident"] = found[name]
        found[name + BY_DEFAULT] = found[name]
    return found


FLOOR = """
import json, os, sys
tree = json.load(open(sys.argv[1]))
root = sys.argv[2]
for directory in tree["dirs"]:
    os.mkdir(os.path.join(root, directory))
for name, size in tree["files"]:
    fd = os.open(os.path.join(root, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    os.write(fd, b"x" * size)
    os.close(fd)
"""
"""Make the directories and files a render made, nothing else: what the file system alone costs."""


def _tree(root: Path) -> dict[str, list[Any]]:
    dirs = ["", *sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_dir())]
    files = sorted([str(p.relative_to(root)), p.stat().st_size] for p in root.rglob("*") if p.is_file())
    return {"dirs": dirs, "files": files}


def rounds(found: dict[str, Argv], env: dict[str, str], scratch: Path, runs: int) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in found}
    for n in range(runs + 1):
        for name, argv in found.items():
            cwd = scratch / "rs" if name.startswith("rulesync") else scratch / "work"
            if name.startswith("rulesync"):
                shutil.rmtree(cwd / ".claude", ignore_errors=True)
            elapsed = timed(argv(n), _env_of(name, env, scratch), cwd)
            if n:  # the first round warms the page cache and tackroom's own caches
                times[name].append(elapsed)
    return {name: statistics.median(samples) * 1000 for name, samples in times.items()}


def _env_of(name: str, env: dict[str, str], scratch: Path) -> dict[str, str]:
    """The row's environment: served by the resident started by hand, by the one its own first
    round starts (a cache directory of its own), or by itself."""
    if name.endswith(", resident"):
        return env
    if name.endswith(BY_DEFAULT):
        return {**env, "XDG_CACHE_HOME": str(scratch / "cache-by-default")}
    return {**env, **ALONE}


def usage_first_pass(size_mb: int, runs: int, tackroom: str) -> tuple[float, float]:
    """Medians (ms) of ccusage cold and tackroom's first pass with nothing cached, over ``size_mb``."""
    import trace_bench

    result = trace_bench.run_size(size_mb, 1, runs, trace_bench.ccusage_bin(), [tackroom])
    if result.errors:
        raise RuntimeError("; ".join(result.errors))
    seconds = result.seconds
    return (
        statistics.median(seconds["ccusage cold"]) * 1000,
        statistics.median(seconds["tackroom first pass, nothing cached"]) * 1000,
    )


def row(stage: str, ms: float, beside: str, target: str, met: bool) -> str:
    return f"| {stage} | {ms:.4g} | {beside} | {target} | {'**met**' if met else 'missed'} |"


def report(ms: dict[str, float], spec_s: tuple[float, float], usage: tuple[float, float] | None) -> str:
    python, bare = ms["python -c pass"], ms["bare fake harness"]
    start, run = ms["tackroom adapters list --json"], ms["tackroom run"]
    render = ms["profile render, 9 targets"]
    lines = [
        "| stage | median ms | beside | target | |",
        "|---|---:|---|---|---|",
        row("CLI start: `tackroom adapters list --json`", start,
            f"{start - python:+.1f} over bare Python ({python:.1f})", "at most 60 ms", start <= 60),
        row("run overhead: `tackroom run` over the bare harness", run,
            f"{run - bare:+.1f} over the bare harness ({bare:.1f})", "at most +60 ms", run - bare <= 60),
    ]  # fmt: skip
    if "tackroom run --sandbox bwrap" in ms:
        boxed = ms["tackroom run --sandbox bwrap"]
        lines.append(row("bwrap's own cost", boxed, f"{boxed - run:+.1f} over the run with no sandbox",
                         "at most +30 ms", boxed - run <= 30))  # fmt: skip
    peer = ms.get("rulesync generate, 9 targets")
    beside = f"rulesync {peer:.0f} ms: {peer / render:.1f}x faster" if peer else "rulesync not installed"
    lines.append(row("profile render, 9 targets", render, beside, "at most 100 ms", render <= 100))
    if "profile render, 9 targets, into memory" in ms:
        memory = ms["profile render, 9 targets, into memory"]
        floor = ms["the disk's floor: the same tree, bare system calls"] - python
        disk = f"{render - memory:+.1f} for the disk; the same tree made bare there: {floor:.1f} ms"
        lines.append(row("the same render into memory (/dev/shm)", memory, disk, "at most 100 ms",
                         memory <= 100))  # fmt: skip
    spec, plan = (seconds * 1000 for seconds in spec_s)
    lines.append(row("RunSpec built and hashed", spec, f"planning the same run: {plan:.3f} ms",
                     "under 1 ms", spec < 1))  # fmt: skip
    served = {name: ms[f"{name}, resident"] for name in SERVED if f"{name}, resident" in ms}
    if served:
        start, run, render = (served[name] for name in SERVED)
        lines += [
            row("CLI start, resident", start, f"{start - python:+.1f} over bare Python", "at most 60 ms",
                start <= 60),
            row("run overhead, resident", run, f"{run - bare:+.1f} over the bare harness", "at most +60 ms",
                run - bare <= 60),
            row("profile render, 9 targets, resident", render,
                f"rulesync {peer:.0f} ms: {peer / render:.1f}x faster" if peer else "", "at most 100 ms",
                render <= 100),
        ]  # fmt: skip
    by_default = [ms[name + BY_DEFAULT] for name in SERVED if name + BY_DEFAULT in ms]
    if by_default:
        start, run, render = by_default
        lines += [
            row("CLI start, by default (the first command starts a resident)", start,
                f"{start - python:+.1f} over bare Python", "at most 60 ms", start <= 60),
            row("run overhead, by default", run, f"{run - bare:+.1f} over the bare harness",
                "at most +60 ms", run - bare <= 60),
            row("profile render, 9 targets, by default", render,
                f"rulesync {peer:.0f} ms: {peer / render:.1f}x faster" if peer else "", "at most 100 ms",
                render <= 100),
        ]  # fmt: skip
    if usage is not None:
        ccusage, ours = usage
        lines.append(row("usage daily first pass, nothing cached", ours,
                         f"ccusage {ccusage:.0f} ms: {ccusage / ours:.2f}x its speed", "at least 1x",
                         ours <= ccusage))  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--usage-mb", type=int, default=0, help="also the usage first pass over N MB")
    parser.add_argument("--usage-runs", type=int, default=3)
    parser.add_argument("--tackroom", default=str(Path(sys.executable).with_name("tackroom")))
    parser.add_argument("--write", action="store_true", help="write the fixed section of RESULTS.md")
    args = parser.parse_args()
    shm = Path("/dev/shm")
    in_memory = shm if shm.is_dir() and os.access(shm, os.W_OK) else None
    with (
        tempfile.TemporaryDirectory(prefix="bench-fixed-") as tmp,
        tempfile.TemporaryDirectory(prefix="bench-fixed-", dir=in_memory) as mem,
    ):
        scratch = Path(tmp)
        env = environment(scratch)
        memory = Path(mem) if in_memory is not None else None
        found = sides(scratch, env, args.tackroom, memory)
        # What the resident says goes to stderr: stdout is the table.
        start = [args.tackroom, "resident", "start", "--idle", "600"]
        subprocess.run(start, env=env, check=True, stdout=sys.stderr)
        try:
            ms = rounds(found, env, scratch, args.runs)
            said = subprocess.run(
                [args.tackroom, "resident", "status", "--json"], env=env, capture_output=True
            )
            served = json.loads(said.stdout)
            if served.get("served") != len(SERVED) * (args.runs + 1) or served.get("refused"):
                raise RuntimeError(f"the resident did not serve every resident round: {served}")
            by_default = _env_of(BY_DEFAULT, env, scratch)
            said = subprocess.run(
                [args.tackroom, "resident", "status", "--json"], env=by_default, capture_output=True
            )
            started = json.loads(said.stdout)
            least = len(SERVED) * args.runs  # all but the first round, whose first command started it
            if not started.get("auto") or started.get("served", 0) < least or started.get("refused"):
                raise RuntimeError(f"the resident the first run started did not serve the rest: {started}")
        finally:
            for where in (env, _env_of(BY_DEFAULT, env, scratch)):
                subprocess.run([args.tackroom, "resident", "stop"], env=where, check=True, stdout=sys.stderr)
        spec_s = spec_costs(scratch / "work")
    usage = usage_first_pass(args.usage_mb, args.usage_runs, args.tackroom) if args.usage_mb else None
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    flags = f"--runs {args.runs}"
    flags += f" --usage-mb {args.usage_mb} --usage-runs {args.usage_runs}" if args.usage_mb else ""
    body = (
        "## Fixed costs, side by side (issue 24 item 4)\n\n"
        f"Measured {when} on {machine()} with `.venv/bin/python benchmarks/bench_fixed.py {flags}`: whole "
        f"processes, {args.runs} alternating rounds after a warm-up, medians.\n\n"
        + report(ms, spec_s, usage)
        + "\n"
    )
    print(body)
    if args.write:
        write_section("fixed", body)


if __name__ == "__main__":
    main()
