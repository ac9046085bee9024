"""tackroom inside someone else's program: a running event loop, many runs at once on one loop."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import pytest

from runkit import FAKE, RECORDED, RECORDED_TEXT, SLOTS, fake_adapter
from tackroom.adapters.resolve import Adapter, load_adapters, resolve_builtins
from tackroom.run.result import Result
from tackroom.run.runner import arun, run


def test_run_works_inside_a_running_event_loop(config_dir: Path, tmp_path: Path) -> None:
    """Jupyter and async applications call ``run`` with their loop running: it used to raise
    ``asyncio.run() cannot be called from a running event loop``."""
    adapter = fake_adapter(config_dir, "--replay", str(RECORDED))

    async def inside() -> Result:
        asyncio.get_running_loop()  # a loop is running here, as in a notebook cell
        return run(adapter, "hello", workdir=tmp_path, runs_dir=tmp_path / "runs")

    result = asyncio.run(inside())
    assert result.ok and result.final_text == RECORDED_TEXT


def _slow_version_adapter(config_dir: Path, tmp_path: Path) -> Adapter:
    """The fake harness behind a launcher whose ``--version`` takes a second, as a cold node CLI's can."""
    version = resolve_builtins()["claude-code"].verified_with
    launcher = tmp_path / "slow-version-harness"
    launcher.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = --version ]; then sleep 1; echo "{version} (Claude Code)"; exit 0; fi\n'
        f'exec {sys.executable} {FAKE} "$@"\n',
        encoding="utf-8",
    )
    launcher.chmod(0o755)
    args = json.dumps(["--replay", str(RECORDED)])[1:-1]
    (config_dir / "adapters.d" / "slow.toml").write_text(
        f'[adapter.slow]\nextends = "claude-code"\nexecutable = "{launcher}"\n'
        f'one_shot = [{args}, "--prompt", "{{{{prompt}}}}", {SLOTS}]\n',
        encoding="utf-8",
    )
    return load_adapters(config=config_dir)["slow"]


@pytest.mark.timing
def test_sixteen_concurrent_runs_never_stall_the_loop(config_dir: Path, tmp_path: Path) -> None:
    """Every blocking step of a run (the version probe, the home, the profile, the traces) is off
    the loop: 16 runs whose harness takes 1 s to say its version leave it free all along (the
    version probe alone on the loop stalled it for a second per run; a /proc scan, the spawn and
    its child watcher's thread start for tens of milliseconds each)."""
    adapter = _slow_version_adapter(config_dir, tmp_path)
    # A first run imports what runs need, once per process, with the interpreter lock held.
    warm = fake_adapter(config_dir, "--replay", str(RECORDED), name="warm")
    assert run(warm, "hello", workdir=tmp_path, runs_dir=tmp_path / "runs").ok

    async def main() -> tuple[list[Result], float]:
        done = asyncio.Event()
        worst = 0.0

        async def watch() -> None:
            nonlocal worst
            while not done.is_set():
                before = time.perf_counter()
                await asyncio.sleep(0.005)
                worst = max(worst, time.perf_counter() - before - 0.005)

        watcher = asyncio.create_task(watch())
        await asyncio.sleep(0)
        runs = [
            arun(adapter, "hello", workdir=tmp_path, runs_dir=tmp_path / "runs", timeout_s=60)
            for _ in range(16)
        ]
        results = await asyncio.gather(*runs)
        done.set()
        await watcher
        return list(results), worst

    results, worst = asyncio.run(main())
    assert all(r.ok and r.final_text == RECORDED_TEXT for r in results), [r.error for r in results]
    assert {r.harness_version for r in results} == {resolve_builtins()["claude-code"].verified_with}
    assert worst < 0.050, f"the loop stalled for {worst * 1000:.0f} ms"
