"""What a hostile harness costs tackroom: a flood against ``--timeout 3``, and a 100 MB stream.

Both drive the whole ``tackroom run`` CLI as a process against the scripted
fake harness (``tests/fakes/fake_harness.py``) behind an operator adapter
that extends claude-code:

* **flood**: the fake prints ``y`` lines as fast as the pipe takes them (a
  harness that is ``yes``) with ``--timeout 3``; measured is the wall time
  until the CLI has exited. A CLI still running after ``--give-up`` seconds is
  killed with its whole process group and reported as such.
* **stream**: the fake prints 100 MB of claude stream-json assistant lines,
  then exits 0; measured are the CLI's peak RSS (``wait4``'s ``ru_maxrss``: the
  largest of the CLI and the processes it reaped) and the size of the run
  directory it left.

Writes the ``bounds`` section of benchmarks/RESULTS.md.

    .venv/bin/python benchmarks/bench_bounds.py [--stream-mb 100] [--give-up 60]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine, write_section

ROOT = Path(__file__).resolve().parent.parent
FAKE = ROOT / "tests" / "fakes" / "fake_harness.py"
# Every option slot the claude-code adapter renders into, so the operator table loads.
SLOTS = [
    f"{{{{opt.{name}}}}}"
    for name in (
        "auto_accept",
        "model",
        "max_turns",
        "system_prompt_file",
        "append_system_prompt",
        "allowed_tools",
        "disallowed_tools",
        "reasoning_effort",
        "resume",
    )
]
# Spaced braces: "}}" in an argv element would read as a template.
LINE = '{"type": "assistant", "message": {"content": [{"type": "text", "text": "%s"} ], "usage": {} } }' % (
    "x" * 200
)


def environment(scratch: Path, stream_bytes: int) -> dict[str, str]:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(scratch / "home"),
        "LANG": "C.UTF-8",
        "XDG_DATA_HOME": str(scratch / "data"),
        "XDG_CONFIG_HOME": str(scratch / "config"),
        "XDG_CACHE_HOME": str(scratch / "cache"),
        "TACKROOM_CONFIG_DIR": str(scratch / "tackroom"),
    }
    drop_ins = scratch / "tackroom" / "adapters.d"
    drop_ins.mkdir(parents=True)
    for name, args in (
        ("flood", ["--flood", "y", "--lifetime", "600"]),
        ("stream", ["--flood", LINE, "--flood-bytes", str(stream_bytes)]),
    ):
        argv = ", ".join(json.dumps(a) for a in [*args, "--prompt", "{{prompt}}", *SLOTS])
        table = f'[adapter.{name}]\nextends = "claude-code"\nexecutable = "{FAKE}"\none_shot = [{argv}]\n'
        (drop_ins / f"{name}.toml").write_text(table, encoding="utf-8")
    return env


def run_cli(args: list[str], env: dict[str, str], give_up: float) -> tuple[float, int | None, int]:
    """Wall time, exit code (None: killed after ``give_up``) and peak RSS in KiB."""
    argv = [sys.executable, "-m", "tackroom", "run", *args]
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = start + give_up
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = -9
            return time.perf_counter() - start, None, usage.ru_maxrss
        time.sleep(0.05)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return elapsed, proc.returncode, usage.ru_maxrss


def dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--stream-mb", type=int, default=100)
    parser.add_argument("--give-up", type=float, default=60.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch_dir:
        scratch = Path(scratch_dir)
        env = environment(scratch, args.stream_mb * 1_000_000)
        flood = run_cli(["flood", "p", "--json", "--timeout", "3", "--no-profile"], env, args.give_up)
        stream = run_cli(["stream", "p", "--json", "--no-profile"], env, args.give_up * 10)
        run_dirs = sorted((scratch / "data" / "tackroom" / "runs").glob("*-stream-*"))
        disk = dir_size(run_dirs[-1]) if run_dirs else 0
    ended = (
        f"{flood[0]:.1f} s (exit {flood[1]})"
        if flood[1] is not None
        else f"not ended; killed at {flood[0]:.0f} s"
    )
    mb = args.stream_mb
    body = "\n".join(
        [
            f"## Hostile output ({machine()}, {time.strftime('%Y-%m-%d')})",
            "",
            "| scenario | before issue 7 (9db982f) | now |",
            "|---|---|---|",
            f"| `yes`-like flood, `--timeout 3`: CLI ended after | not ended; killed at 30 s | {ended} |",
            f"| {mb} MB stream-json: peak RSS | 273 MiB | {stream[2] / 1024:.0f} MiB |",
            f"| {mb} MB stream-json: run directory | 277 MiB | {disk / 2**20:.0f} MiB |",
            f"| {mb} MB stream-json: CLI wall time | 5.8 s (exit 0) | {stream[0]:.1f} s (exit {stream[1]}) |",
            "",
            "The stream has no final `result` line, so the run now fails (exit 1) as incomplete;",
            "before, it reported `ok: true`.",
        ]
    )
    write_section("bounds", body)
    print(body)


if __name__ == "__main__":
    main()
