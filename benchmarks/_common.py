"""Shared benchmark helpers: whole-process timing, medians, and RESULTS.md sections."""

from __future__ import annotations

import os
import statistics
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
BY_ITSELF = {"TACKROOM_NO_RESIDENT_START": "1"}
"""In a benchmark's environment: each ``tackroom`` command runs by itself, as measured, and starts no
resident for the commands after it (``bench_fixed.py`` measures those served apart)."""


def time_process(argv: Sequence[str], env: Mapping[str, str], cwd: Path | None = None) -> float:
    """Wall time of one whole process, in seconds; a failing command is an error, not a number."""
    start = time.perf_counter()
    done = subprocess.run(argv, env=dict(env), cwd=cwd, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{argv} failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
    return elapsed


def interleaved(
    commands: Mapping[str, Sequence[str]], env: Mapping[str, str], runs: int
) -> dict[str, list[float]]:
    """Run every command once per round, ``runs`` rounds, so load drift hits all of them alike."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, argv in commands.items():
            times[name].append(time_process(argv, env))
    return times


def median_ms(samples: Sequence[float]) -> float:
    return statistics.median(samples) * 1000


def machine() -> str:
    return f"{os.cpu_count()} cores, {os.uname().sysname} {os.uname().machine}"


def write_section(name: str, body: str) -> None:
    """Replace the ``name`` section of RESULTS.md (between its markers), keeping the others."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    text = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else "# Benchmark results\n"
    block = f"{start}\n{body.rstrip()}\n{end}"
    if start in text and end in text:
        head, rest = text.split(start, 1)
        text = head + block + rest.split(end, 1)[1]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    RESULTS.write_text(text, encoding="utf-8")
