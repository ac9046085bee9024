"""Usage from Claude Code transcripts: tackroom beside ccusage 20.0.24, on 100 MB and 500 MB.

The corpora come from ``trace_corpus.py`` (cached under ``.cache/trace-corpus/``). Each round
works on a fresh hard-linked copy of a corpus (the file that will grow is a real copy) and runs,
as whole processes:

- ccusage cold: ``ccusage claude daily --json --offline --timezone UTC``;
- tackroom first pass, nothing cached: ``tackroom usage daily --harness claude-code --json
  --timezone UTC`` with a fresh ``XDG_DATA_HOME`` and ``XDG_CACHE_HOME`` (as on a new machine: the
  adapters resolved and ``genai-prices`` imported for the first time);
- tackroom first pass: no index yet (a fresh ``XDG_DATA_HOME``), tackroom's own caches (resolved
  adapters, model prices) as any earlier command leaves them;
- tackroom repeat: the same again, nothing changed (the index answers, looking at each directory
  and log);
- tackroom repeat, directories changed: a file made and removed in every directory first, so no
  log changed but every directory did: the repeat walks the roots again before the index answers;
- tackroom after append: one session's worth of lines appended to one transcript.

Every round's copy of the corpus is made first, and the rounds start at least
:data:`SETTLE_S` after the last copy: a user's log directories were not all
made in the last two seconds, and a repeat trusts a directory's change time
only once it is that old (``tackroom.trace.shortcut.SETTLE_NS``; the "directories
changed" step measures the other case). After one unmeasured ccusage run (the page
cache warm for both), rounds alternate (median of N, default 3).

Per step: wall time, MB/s over the corpus, the peak RSS of the process tree (the larger of the
sum of RSS over the live tree, sampled every 5 ms, and the largest single process from
``wait4``), and whether tackroom's totals equal ccusage's to the token per day and model
(after the append, against ccusage run on the grown corpus).
CPU is the user and system seconds of the process with its threads and the workers it reaped
(wait4). Prints a Markdown table for RESULTS.md; ``--write`` puts it in RESULTS.md's ``traces`` section.

    .venv/bin/python benchmarks/trace_bench.py [--runs 3] [--sizes 100,500] [--seed 1]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import trace_corpus
from _common import BY_ITSELF, machine, write_section

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache"
CCUSAGE_VERSION = "20.0.24"
CCUSAGE = Path(
    os.environ.get("TACKROOM_CCUSAGE")
    or CACHE / "ccusage" / "node_modules" / "@ccusage" / "ccusage-linux-x64" / "bin" / "ccusage"
)
PAGE = os.sysconf("SC_PAGE_SIZE")
MB = 1024 * 1024
Counts = tuple[int, int, int, int]
Daily = dict[str, dict[str, Counts]]


def ccusage_bin() -> Path:
    """The pinned ccusage native binary, installed from npm into .cache/ccusage when missing."""
    if not CCUSAGE.is_file():
        subprocess.run(
            ["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(CACHE / "ccusage"),
             f"ccusage@{CCUSAGE_VERSION}"],
            check=True,
        )  # fmt: skip
    CCUSAGE.chmod(0o755)  # npm leaves the native binary without its executable bit
    return CCUSAGE


def corpus(size_mb: int, seed: int) -> tuple[Path, int]:
    """The cached corpus of ``size_mb`` (generated once) and its size in bytes."""
    root = CACHE / "trace-corpus" / f"{size_mb}mb-seed{seed}-ids"
    manifest = root / "corpus.json"
    fresh = manifest.is_file() and json.loads(manifest.read_text(encoding="utf-8")).get("version") == (
        trace_corpus.VERSION
    )
    if not fresh:
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        started = time.perf_counter()
        # Every response with its requestId, as Claude Code 1.x and 2.0 write them: the shapes where
        # both tools mean the same (docs/ccusage-semantics.md, "Where tackroom departs").
        trace_corpus.generate(root, size_mb, seed, no_request_id=0.0)
        print(f"generated {root} in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return root, int(json.loads(manifest.read_text(encoding="utf-8"))["bytes"])


def largest_transcript(root: Path) -> Path:
    return max((root / "projects").glob("*/*.jsonl"), key=lambda p: (p.stat().st_size, str(p)))


def linked_copy(src: Path, dst: Path, grow: Path) -> Path:
    """A hard-linked copy of ``src`` at ``dst``; the file ``grow`` (relative) is a real copy."""
    subprocess.run(["cp", "-al", str(src), str(dst)], check=True)
    target = dst / grow
    target.unlink()
    shutil.copyfile(src / grow, target)
    return target


# --- measuring a process tree --------------------------------------------------------------


def tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and all its descendants, now (0 once gone)."""
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        with contextlib.suppress(OSError, ValueError, IndexError):
            total += int(Path(f"/proc/{current}/statm").read_text().split()[1]) * PAGE
            for task in Path(f"/proc/{current}/task").iterdir():
                stack.extend(int(c) for c in (task / "children").read_text().split())
    return total


@dataclass
class Sample:
    seconds: float
    rss: int
    stdout: str
    single: int = 0
    """The largest single process's peak RSS (wait4: the child and its reaped descendants, the max)."""
    cpu: float = 0.0
    """User and system CPU seconds of the process, its threads and its reaped descendants (wait4)."""


def measure(argv: Sequence[str], env: dict[str, str]) -> Sample:
    """Run one process to its end: wall time, peak RSS of its tree, its stdout."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, stdout=out, stderr=err)
        peak = [0]
        done = threading.Event()

        def sample() -> None:
            while not done.wait(0.005):
                peak[0] = max(peak[0], tree_rss(proc.pid))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        done.set()
        sampler.join()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            tail = err.read().decode(errors="replace")[-2000:]
            raise RuntimeError(f"{' '.join(argv[:4])}... failed ({proc.returncode}): {tail}")
        single = usage.ru_maxrss * 1024  # Linux: KiB; the child and its reaped descendants
        cpu = usage.ru_utime + usage.ru_stime
        return Sample(elapsed, max(peak[0], single), out.read().decode(), single, cpu)


# --- reading the two reports -----------------------------------------------------------------


def ccusage_daily(text: str) -> Daily:
    daily: Daily = {}
    for row in json.loads(text)["daily"]:
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
        if any(rest):
            models[""] = rest  # type: ignore[assignment]
        daily[row["date"]] = models
    return daily


def tackroom_daily(text: str) -> Daily:
    fields = ("input", "output", "cache_write", "cache_read")
    daily: Daily = {}
    for row in json.loads(text)["rows"]:
        models: dict[str, Counts] = {}
        for entry in row["models"]:
            name = entry["model"] if isinstance(entry["model"], str) else ""
            name = "" if name in ("unknown", "<synthetic>") else name
            models[name] = tuple(entry[f] for f in fields)  # type: ignore[assignment]
        total = tuple(row[f] for f in fields)
        rest = tuple(total[i] - sum(c[i] for c in models.values()) for i in range(4))
        if any(rest):
            models[""] = rest  # type: ignore[assignment]
        daily[row["key"]] = {k: v for k, v in models.items() if k or any(v)}
    return daily


def same(tackroom: str, ccusage: str) -> str:
    """ "yes", or the first difference (a report that cannot be read is a difference too)."""
    try:
        ours, theirs = tackroom_daily(tackroom), ccusage_daily(ccusage)
    except (ValueError, KeyError, TypeError) as exc:
        return f"no: unreadable report ({exc!r})"
    for day in sorted(set(ours) | set(theirs)):
        a, b = ours.get(day, {}), theirs.get(day, {})
        for model in sorted(set(a) | set(b)):
            if a.get(model) != b.get(model):
                return f"no: {day} {model or '(no model)'}: tackroom {a.get(model)}, ccusage {b.get(model)}"
    return "yes"


# --- the rounds ----------------------------------------------------------------------------

STEPS = (
    "ccusage cold",
    "tackroom first pass, nothing cached",
    "tackroom first pass",
    "tackroom repeat",
    "tackroom repeat, directories changed",
    "tackroom after append",
)

SETTLE_S = 2.5
"""How long the copies are left before the first round (more than a repeat's settle time, 2 s)."""


@dataclass
class Result:
    size_mb: int
    bytes: int
    seconds: dict[str, list[float]] = field(default_factory=lambda: {s: [] for s in STEPS})
    rss: dict[str, list[int]] = field(default_factory=lambda: {s: [] for s in STEPS})
    single: dict[str, list[int]] = field(default_factory=lambda: {s: [] for s in STEPS})
    cpu: dict[str, list[float]] = field(default_factory=lambda: {s: [] for s in STEPS})
    equal: dict[str, list[str]] = field(default_factory=lambda: {s: [] for s in STEPS})
    errors: list[str] = field(default_factory=list)


WARM = CACHE / "trace-bench-caches"
"""tackroom's own caches (resolved adapters, model prices) as any earlier command leaves them."""


def env_for(config: Path, data: Path, home: Path, caches: Path | None = None) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_DATA_HOME": str(data),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(caches or home / ".cache"),
        "CLAUDE_CONFIG_DIR": str(config),
        "TZ": "UTC",
        **BY_ITSELF,
    }


def touch_directories(root: Path) -> None:
    """Make and remove a file in every directory under ``root``: each directory changes, no log does."""
    for directory in [root, *(p for p in root.rglob("*") if p.is_dir())]:
        mark = directory / ".trace-bench-touch"
        mark.touch()
        mark.unlink()


def one_round(result: Result, work: Path, grow: Path, seed: int, ccusage: Path, tackroom: list[str]) -> None:
    """One round on the corpus copy in ``work`` (made and settled beforehand; ``grow`` is its real copy)."""
    config = work / "claude"
    env = env_for(config, work / "data", work / "home", WARM)
    cold_env = env_for(config, work / "cold-data", work / "home")  # no index, no caches at all
    (work / "home").mkdir()
    ccusage_argv = [str(ccusage), "claude", "daily", "--json", "--offline", "--timezone", "UTC"]
    tackroom_argv = [*tackroom, "usage", "daily", "--harness", "claude-code", "--json", "--timezone", "UTC"]

    def record(step: str, sample: Sample, reference: str | None) -> None:
        result.seconds[step].append(sample.seconds)
        result.rss[step].append(sample.rss)
        result.single[step].append(sample.single)
        result.cpu[step].append(sample.cpu)
        if reference is not None:
            result.equal[step].append(same(sample.stdout, reference))

    cold = measure(ccusage_argv, env)
    record("ccusage cold", cold, None)
    try:
        record("tackroom first pass, nothing cached", measure(tackroom_argv, cold_env), cold.stdout)
        record("tackroom first pass", measure(tackroom_argv, env), cold.stdout)
        record("tackroom repeat", measure(tackroom_argv, env), cold.stdout)
        touch_directories(config / "projects")
        record("tackroom repeat, directories changed", measure(tackroom_argv, env), cold.stdout)
        trace_corpus.append_session(grow, seed + 1000)
        after = measure(ccusage_argv, env).stdout
        record("tackroom after append", measure(tackroom_argv, env), after)
    except RuntimeError as exc:
        result.errors.append(str(exc))


def run_size(size_mb: int, seed: int, runs: int, ccusage: Path, tackroom: list[str]) -> Result:
    source, size = corpus(size_mb, seed)
    result = Result(size_mb, size)
    grow = largest_transcript(source).relative_to(source)
    with contextlib.ExitStack() as stack:
        works = [
            Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="trace-bench-", dir=CACHE)))
            for _ in range(runs)
        ]
        for work in works:
            linked_copy(source, work / "claude", grow)
        copied = time.monotonic()
        # Warm-up, not measured: both tools then read the corpus from the page cache alike.
        measure([str(ccusage), "claude", "daily", "--json", "--offline"], env_for(source, CACHE, CACHE))
        with tempfile.TemporaryDirectory(prefix="trace-bench-warm-", dir=CACHE) as tmp:
            # Warm tackroom's own caches the same way (adapters, the corpus's model prices), not its index.
            warm = [*tackroom, "usage", "daily", "--harness", "claude-code", "--json"]
            measure(warm, env_for(source, Path(tmp) / "data", Path(tmp), WARM))
        time.sleep(max(0.0, copied + SETTLE_S - time.monotonic()))
        for n, work in enumerate(works):
            one_round(result, work, work / "claude" / grow, seed + n, ccusage, tackroom)
            print(f"{size_mb} MB round {n + 1}/{runs} done", file=sys.stderr)
    return result


def table(results: list[Result]) -> str:
    lines = [
        f"Machine: {machine()}; ccusage {CCUSAGE_VERSION} (native); median of the rounds.",
        "",
        "| corpus | step | wall (ms) | MB/s | CPU (s) | peak RSS, tree (MB) | largest process (MB) "
        "| equal to ccusage | vs ccusage cold |",
        "|---|---|---:|---:|---:|---:|---:|---|---:|",
    ]
    for r in results:
        base = statistics.median(r.seconds["ccusage cold"]) if r.seconds["ccusage cold"] else None
        for step in STEPS:
            times = r.seconds[step]
            if not times:
                lines.append(f"| {r.size_mb} MB | {step} | failed | | | | | | |")
                continue
            wall = statistics.median(times)
            rss = statistics.median(r.rss[step]) / MB
            single = statistics.median(r.single[step]) / MB
            cpu = statistics.median(r.cpu[step])
            equal = "; ".join(sorted(set(r.equal[step]))) or "(reference)"
            ratio = f"{base / wall:.2f}x" if base and step != "ccusage cold" else ""
            lines.append(
                f"| {r.size_mb} MB ({r.bytes / MB:.0f} MB) | {step} | {wall * 1000:.0f} | "
                f"{r.bytes / MB / wall:.0f} | {cpu:.2f} | {rss:.1f} | {single:.1f} | {equal} | {ratio} |"
            )
    errors = [e for r in results for e in r.errors]
    if errors:
        lines += ["", "Errors:", *(f"- {e.splitlines()[0][:300]}" for e in sorted(set(errors)))]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sizes", default="100,500", help="corpus sizes in MB, comma-separated")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--write", action="store_true", help="write the table to RESULTS.md")
    parser.add_argument(
        "--tackroom",
        default=str(Path(sys.executable).with_name("tackroom")),
        help="the tackroom command (space-separated argv)",
    )
    args = parser.parse_args(argv)
    CACHE.mkdir(exist_ok=True)
    ccusage = ccusage_bin()
    tackroom = args.tackroom.split()
    results = [run_size(int(s), args.seed, args.runs, ccusage, tackroom) for s in args.sizes.split(",")]
    body = "## Usage from transcripts (tackroom usage daily vs ccusage)\n\n" + table(results)
    print(body)
    if args.write:
        write_section("traces", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
