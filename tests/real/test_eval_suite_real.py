"""The example suite (examples/suite: six Harbor tasks, a mock script each) across every harness that
edits files against the mock, with the local pool and on a Ray cluster, and the exact report: which
cells pass, the token totals the scripts fix, the cost from the price table.

Each script makes one shell call and one closing text, with fixed usage (Qwen Code reads the file
it fixes first, its two calls sharing the one call's figures: it refuses to edit an unread file;
Aider, which has no tools, gets one reply per run in its own edit format with the same figures).
The scripts solve fix-failing-test, rename-across-files and multi-step (both steps), fail
add-function on purpose, and leave verifier-timeout to its hanging verifier; needs-network never
reaches its agent.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from evalkit import BWRAP_MISSING
from tackroom.adapters.adapter import Adapter
from tackroom.adapters.resolve import resolve_builtins
from tackroom.errors import InstallError
from tackroom.eval.evaluate import evaluate
from tackroom.eval.matrix import load_matrix
from tackroom.eval.report import build
from tackroom.install import install

pytestmark = pytest.mark.skipif(BWRAP_MISSING is not None, reason=BWRAP_MISSING or "")

SUITE = Path(__file__).resolve().parents[2] / "examples" / "suite"
MODEL = "claude-sonnet-4-5"
RUNS = 6
"""Agent runs per harness: five tasks reach their agent, multi-step twice."""

# What one run reports, by the wire its harness speaks (tackroom's figures: ``input`` is uncached, so
# an OpenAI-style report's cached tokens come out of its prompt tokens; an OpenAI or Gemini wire has
# no cache write to report). None: the harness reports no usage (its capability row says n/o).
ANTHROPIC = {"input": 2100, "output": 120, "cache_read": 200, "cache_write": 50}
OPENAI = {"input": 1900, "output": 120, "cache_read": 200, "cache_write": 50}
NO_CACHE_WRITE = {"input": 1900, "output": 120, "cache_read": 200, "cache_write": "not_reported"}
# Aider prints its figures rounded ("2.1k sent"): only the exact one is taken.
OUTPUT_ONLY = {
    "input": "not_reported",
    "output": 120,
    "cache_read": "not_reported",
    "cache_write": "not_reported",
}
PER_RUN: dict[str, dict[str, Any] | None] = {
    "aider": OUTPUT_ONLY,
    "claude-code": ANTHROPIC,
    "droid": ANTHROPIC,
    "kilo": ANTHROPIC,
    "opencode": ANTHROPIC,
    "codex": OPENAI,
    "copilot": NO_CACHE_WRITE,
    "gemini": NO_CACHE_WRITE,
    "gptme": NO_CACHE_WRITE,
    "mini-swe-agent": NO_CACHE_WRITE,
    "omp": NO_CACHE_WRITE,
    "pi": NO_CACHE_WRITE,
    "qwen": NO_CACHE_WRITE,
    "codex-acp": None,
    "gemini-acp": None,
    "grok": None,
    "qwen-acp": None,
}
# What the tokens and the cost count, where it is not the harness's report: each figure from the
# gateway first (every cell runs through one), at the wire. Codex counts its cache writes inside its
# input; at the wire the input excludes them. A wire with no cache-write figure (Gemini, OpenAI chat)
# leaves the total unknown, whoever reports what.
OPENAI_WIRE = {"input": 1850, "output": 120, "cache_read": 200, "cache_write": 50}
COUNTED: dict[str, dict[str, Any] | None] = {"codex": OPENAI_WIRE, "codex-acp": OPENAI_WIRE}
# Harnesses that cannot be told their model (no `model` option): a matrix with models refuses them,
# so they run the suite in a matrix of their own without one (no model: no price, the cost unknown).
NOT_REPORTED = dict.fromkeys(("input", "output", "cache_read", "cache_write"), "not_reported")
NO_MODEL: dict[str, dict[str, Any] | None] = {
    "claude-code-acp": ANTHROPIC,
    "opencode-acp": NOT_REPORTED,
    "cline": NO_CACHE_WRITE,
    "kimi": NO_CACHE_WRITE,
    "openhands": NO_CACHE_WRITE,
}
# OpenCode over ACP asks a small model for a title at each run: the mock answers that unscripted
# call with its default figures (1234 in, 56 out, 78 cache read, 9 cache write) on top of the script's.
COUNTED["opencode-acp"] = {
    "input": 2100 + 1234,
    "output": 120 + 56,
    "cache_read": 200 + 78,
    "cache_write": 50 + 9,
}
EXTRA = {"aider": {"output": 20}}
"""Figures a harness's runs add beyond RUNS × its per-run figures: Aider asks once more in the
multi-step task's second step (the file its reply names is in the repository by then: it adds it to
the chat and sends again), and the script's closing text answers with 20 output tokens."""
# claude-sonnet-4-5: $3/M input, $15/M output, $0.30/M cache read, $3.75/M cache write.
PRICE = {"input": 3e-6, "output": 15e-6, "cache_read": 0.3e-6, "cache_write": 3.75e-6}
EXPECTED = {
    "fix-failing-test": ("ok", True),
    "rename-across-files": ("ok", True),
    "tackroom-examples/multi-step": ("ok", True),
    "tackroom-examples/add-function": ("ok", False),
    "verifier-timeout": ("verifier_timeout", None),
    "needs-network": ("unsupported", None),
}


def suite_cells(tmp_path: Path, *harnesses: str, model: bool = True) -> list[Any]:
    """The suite's matrix with ``harnesses`` and the oracle (copied: a test never writes into the repo),
    with its model, or (``model=False``) with none."""
    copy = tmp_path / ("suite" if model else "suite-no-model")
    shutil.copytree(SUITE, copy)
    matrix = copy / "matrix.toml"
    if not model:
        matrix.write_text(matrix.read_text().replace(f'models = ["{MODEL}"]\n', ""))
    names = ", ".join(f'"{name}"' for name in ("oracle", *harnesses))
    matrix.write_text(
        matrix.read_text().replace('harnesses = ["oracle", "claude-code"]', f"harnesses = [{names}]")
    )
    return list(load_matrix(matrix).cells)


def check_report(directory: Path, harness: str, *, priced: bool = True) -> None:
    report = build(directory)
    cells = {(c["task"], c["harness"]): c for c in report["cells"]}
    for task, (outcome, passed) in EXPECTED.items():
        cell = cells[(task, harness)]
        assert (cell["outcome"], cell["passed"]) == (outcome, passed), (task, cell["reason"])
        oracle = cells[(task, "oracle")]
        assert (oracle["outcome"], oracle["passed"]) == (outcome, True if passed is not None else None), task
    (group,) = [g for g in report["groups"] if g["harness"] == harness]
    assert (group["cells"], group["scored"], group["passed"]) == (6, 4, 3)
    assert group["outcomes"] == {"ok": 4, "unsupported": 1, "verifier_timeout": 1}
    assert group["pass_rate"] == 0.75
    per_run = PER_RUN[harness] if harness in PER_RUN else NO_MODEL[harness]
    extra = EXTRA.get(harness, {})
    if per_run is not None:
        totals = _reported(report, harness)
        assert totals == {
            k: v * RUNS + extra.get(k, 0) if isinstance(v, int) else v for k, v in per_run.items()
        }
    counted = COUNTED.get(harness, per_run)
    if counted is None or not all(isinstance(v, int) for v in counted.values()):
        assert group["tokens"] is None and group["cost_usd"] is None  # unknown, never 0
        return
    assert group["tokens"] == sum(counted.values()) * RUNS
    if not priced:
        assert group["cost_usd"] is None  # no model, no price: unknown, never 0
        return
    assert group["cost_usd"] == pytest.approx(sum(PRICE[k] * v for k, v in counted.items()) * RUNS)
    assert group["cost_per_solved_task"] == pytest.approx(group["cost_usd"] / 3)


def _reported(report: dict[str, Any], harness: str) -> dict[str, Any]:
    totals: dict[str, Any] = {}
    for cell in report["cells"]:
        if cell["harness"] != harness or cell["usage"] is None:
            continue
        for name, value in cell["usage"]["reported"].items():
            before = totals.get(name, 0)
            totals[name] = before + value if isinstance(value, int) and isinstance(before, int) else value
    return totals


@pytest.mark.timeout(900)
@pytest.mark.parametrize("harness", sorted(PER_RUN), indirect=True)
def test_the_example_suite_on_the_local_pool(
    harness: Adapter, harness_environ: dict[str, str], tmp_path: Path
) -> None:
    cells = suite_cells(tmp_path, harness.name)
    out = tmp_path / "eval"
    asyncio.run(evaluate(cells, out, jobs=2, environ=harness_environ))
    check_report(out, harness.name)


@pytest.mark.timeout(900)
@pytest.mark.parametrize("harness", sorted(NO_MODEL), indirect=True)
def test_the_example_suite_with_a_harness_that_cannot_be_told_its_model(
    harness: Adapter, harness_environ: dict[str, str], tmp_path: Path
) -> None:
    cells = suite_cells(tmp_path, harness.name, model=False)
    out = tmp_path / "eval"
    asyncio.run(evaluate(cells, out, jobs=2, environ=harness_environ))
    check_report(out, harness.name, priced=False)


@pytest.mark.timeout(1800)
def test_the_example_suite_on_a_ray_cluster(harness_data: Path, tmp_path: Path) -> None:
    """Every harness of the local test in one matrix on a Ray cluster (a head and a worker on
    loopback, one CPU each): the same report, harness by harness."""
    pytest.importorskip("ray", reason="Ray is not installed: pip install 'tackroom[ray]' (scripts/test does)")
    from raykit import ray_cluster
    from tackroom.eval.ray import RayExecutor

    names, missing = [], []
    for name in sorted({*PER_RUN, *NO_MODEL}):
        adapter = resolve_builtins()[name]
        try:
            install(adapter, adapter.verified_with, env={**os.environ, "XDG_DATA_HOME": str(harness_data)})
        except InstallError as exc:
            missing.append(f"{name} ({exc})")
        else:
            names.append(name)
    told = [name for name in names if name in PER_RUN]
    untold = [name for name in names if name in NO_MODEL]
    cells = [*suite_cells(tmp_path, *told), *suite_cells(tmp_path, *untold, model=False)]
    out = tmp_path / "eval"
    with ray_cluster(tmp_path / "ray-home", data=harness_data) as address:
        asyncio.run(evaluate(cells, out, executor=RayExecutor(address)))
    for name in names:
        check_report(out, name, priced=name in PER_RUN)
    if missing:
        pytest.skip(f"checked on Ray: {', '.join(names)}; not installable here: {'; '.join(missing)}")
