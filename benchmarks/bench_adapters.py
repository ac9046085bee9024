"""Cold start of ``tackroom adapters list --json`` and resolving + rendering every built-in.

Whole processes, interleaved rounds, medians; Python's own bare start
(``python -c pass``) is measured in the same run as the baseline. Writes the
``adapters`` section of benchmarks/RESULTS.md.

    .venv/bin/python benchmarks/bench_adapters.py [--runs 30]
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import BY_ITSELF, interleaved, machine, median_ms, time_process, write_section

RENDER_ALL = (
    "import os, pathlib\n"
    "from tackroom.adapters.resolve import load_adapters\n"
    "from tackroom.adapters.plan import Endpoint, plan_run\n"
    "for adapter in load_adapters(project=pathlib.Path.cwd()).values():\n"
    "    plan_run(adapter, 'p', options={}, workdir=pathlib.Path('/w'), home=pathlib.Path('/h'),\n"
    "             endpoint=Endpoint('http://127.0.0.1:1')\n"
    "             if adapter.effective.get('model_endpoint') else None)\n"
)
TARGET_MS = 150.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    python = sys.executable
    tackroom = str(Path(python).parent / "tackroom")
    with tempfile.TemporaryDirectory() as home:
        env = {"PATH": os.environ["PATH"], "HOME": home, "LANG": "C.UTF-8", **BY_ITSELF}
        commands = {
            "python -c pass": [python, "-c", "pass"],
            "tackroom adapters list --json": [tackroom, "adapters", "list", "--json"],
            "adapters list --json, no cache": [
                "env",
                "TACKROOM_NO_CACHE=1",
                tackroom,
                "adapters",
                "list",
                "--json",
            ],
            "resolve + render every built-in": [python, "-c", RENDER_ALL],
        }
        time_process(commands["tackroom adapters list --json"], env)  # fills the catalog cache
        times = interleaved(commands, env, args.runs)
    medians = {name: median_ms(samples) for name, samples in times.items()}
    bare = medians["python -c pass"]
    listed = medians["tackroom adapters list --json"]
    rows = "\n".join(
        f"| {name} | {ms:.1f} | {ms / bare:.2f}x | {ms - bare:+.1f} |" for name, ms in medians.items()
    )
    verdict = "met" if listed <= TARGET_MS else "missed"
    body = f"""## Adapters: cold start and render (issue 2)

Measured {datetime.date.today()} on {machine()}, {args.runs} interleaved runs each, whole processes,
median wall time. Baseline: Python's bare start in the same run.

| command | median ms | vs bare python | over bare ms |
|---|---|---|---|
{rows}

Target `adapters list --json` <= {TARGET_MS:.0f} ms median: **{verdict}** ({listed:.1f} ms).
"No cache" is the first listing after an adapter file changes: it parses and validates every table.
"""
    write_section("adapters", body)
    print(body)


if __name__ == "__main__":
    main()
