"""An evaluation cell with a real harness: Claude Code in bubblewrap, offline, against the mock, in a
Harbor task's own paths (/app), graded by the task's verifier; usage exact from the script, the
transcript agreeing, the cost from the price table."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from tests.pgkit import PostgresServer, postgres_server  # noqa: F401  (fixtures)

from clikit import run_cli
from evalkit import BWRAP_MISSING, write_task
from tackroom.adapters.adapter import Adapter
from tackroom.eval.cell import Cell, run_cell
from tackroom.eval.tasks import load_task
from tackroom.gateway import Gateway
from tackroom.mock import MockServer, Script, Turn, Usage
from tackroom.profile.model import Profile, Rule
from tackroom.run.runner import vocabulary

pytestmark = pytest.mark.skipif(BWRAP_MISSING is not None, reason=BWRAP_MISSING or "")


def script(content: str) -> Script:
    return Script(
        [
            Turn.call("shell", {"command": f"echo {content} > /app/hello.txt"}, usage=Usage(100, 20, 30, 4)),
            Turn.reply("done", usage=Usage(130, 5, 0, 0)),
        ]
    )


@pytest.mark.parametrize("harness", ["claude-code"], indirect=True)
@pytest.mark.parametrize(("content", "reward"), [("hello", 1.0), ("goodbye", 0.0)])
def test_a_harness_solves_or_fails_a_task_in_its_cell(
    harness: Adapter, harness_environ: dict[str, str], tmp_path: Path, content: str, reward: float
) -> None:
    task = load_task(write_task(tmp_path))
    cell = Cell(
        task=task, harness=harness.name, model="claude-sonnet-4-5", mock=script(content), agent_timeout_s=120
    )
    result = asyncio.run(run_cell(cell, tmp_path / "cell", environ=harness_environ))
    assert (result.outcome, result.reward, result.reward_status) == ("ok", reward, "ok"), result.reason
    assert result.usage is not None
    exact = {"input": 230, "output": 25, "cache_read": 30, "cache_write": 4}
    assert result.usage["reported"] == exact and result.usage["transcript"] == exact
    assert result.usage["disagree"] == []
    # claude-sonnet-4-5 at $3/M input, $15/M output, $0.30/M cache read, $3.75/M cache write
    assert result.cost_usd == pytest.approx((230 * 3 + 25 * 15 + 30 * 0.3 + 4 * 3.75) / 1e6)
    assert len(result.run_dirs) == 1 and Path(result.run_dirs[0]).is_relative_to(tmp_path / "cell")


@pytest.mark.parametrize("harness", ["claude-code"], indirect=True)
def test_a_captured_cell_has_its_usage_three_ways(
    harness: Adapter, harness_environ: dict[str, str], tmp_path: Path
) -> None:
    task = load_task(write_task(tmp_path))
    cell = Cell(
        task=task, harness=harness.name, model="claude-sonnet-4-5", mock=script("hello"), capture=True
    )
    result = asyncio.run(run_cell(cell, tmp_path / "cell", environ=harness_environ))
    assert (result.outcome, result.reward) == ("ok", 1.0), result.reason
    exact = {"input": 230, "output": 25, "cache_read": 30, "cache_write": 4}
    assert result.usage is not None
    assert result.usage["reported"] == result.usage["transcript"] == result.usage["gateway"] == exact
    assert result.usage["disagree"] == []


@pytest.mark.parametrize("harness", ["claude-code"], indirect=True)
def test_the_tasks_environment_reaches_the_harness(
    harness: Adapter, harness_environ: dict[str, str], tmp_path: Path
) -> None:
    toml = '[environment]\nnetwork_mode = "no-network"\n[environment.env]\nWORD = "hello"\n'
    task = load_task(write_task(tmp_path, toml=toml))
    said = Script([Turn.call("shell", {"command": "echo $WORD > /app/hello.txt"}), Turn.reply("done")])
    cell = Cell(task=task, harness=harness.name, mock=said)
    result = asyncio.run(run_cell(cell, tmp_path / "cell", environ=harness_environ))
    assert (result.outcome, result.reward) == ("ok", 1.0), result.reason


@pytest.mark.parametrize("harness", ["claude-code"], indirect=True)
def test_a_cell_through_a_running_gateway_with_a_profile(
    harness: Adapter, harness_environ: dict[str, str], tmp_path: Path
) -> None:
    """A matrix's ``gateway`` and ``profile``: the cell's harness talks to a running gateway (in front
    of the mock, as one in front of a provider) under the cell's own trace id, and the profile's rule
    is rendered into its home, where the real binary reads it: its text reaches the model."""
    rule = "TACKROOM-EVAL-RULE-5521: answer tersely."
    profile = Profile(rules=(Rule(name="house", text=rule),))
    task = load_task(write_task(tmp_path))
    with (
        MockServer(script("hello"), tools=vocabulary(harness)) as mock,
        Gateway(mock.base_url, db=tmp_path / "gateway.db") as gateway,
    ):
        cell = Cell(
            task=task,
            harness=harness.name,
            model="claude-sonnet-4-5",
            gateway=gateway.url,
            profile=profile,
            agent_timeout_s=120,
        )
        environ = {**harness_environ, "ANTHROPIC_API_KEY": "sk-ant-eval-through-gateway-01"}
        result = asyncio.run(run_cell(cell, tmp_path / "cell", environ=environ))
        assert (result.outcome, result.reward) == ("ok", 1.0), result.reason
        bodies = [json.dumps(r.body) for r in mock.requests if "/messages" in r.path]
        traced = gateway.store.calls(run=Path(result.run_dirs[0]).name)
    assert bodies and all(rule in body for body in bodies)
    assert traced and {c["trace_id"] or c["run_id"] for c in traced} == {Path(result.run_dirs[0]).name}
    exact = {"input": 230, "output": 25, "cache_read": 30, "cache_write": 4}
    assert result.usage is not None
    assert result.usage["reported"] == result.usage["gateway"] == exact


@pytest.mark.parametrize("harness", ["claude-code"], indirect=True)
def test_eval_run_with_a_postgres_db_stores_results_and_calls_there(
    harness: Adapter,
    harness_environ: dict[str, str],
    tmp_path: Path,
    postgres_server: PostgresServer,  # noqa: F811
) -> None:
    """``eval run --db postgresql://...``: the cell's result and the calls its gateway captured
    (under the run's id) are in the server, and the report reads them from there."""
    url = postgres_server.new_database()
    try:
        task = write_task(tmp_path / "tasks")
        (tmp_path / "hello.toml").write_text(
            '[[turns]]\ntool = "shell"\nargs = { command = "echo hello > /app/hello.txt" }\n'
            "usage = { input = 100, output = 20, cache_read = 30, cache_write = 4 }\n"
            '[[turns]]\ntext = "done"\nusage = { input = 130, output = 5, cache_read = 0, cache_write = 0 }\n'
        )
        done = run_cli(
            *("eval", "run", "--task", str(task), "--harness", "claude-code", "--model", "claude-sonnet-4-5"),
            *("--mock", str(tmp_path / "hello.toml"), "--out", str(tmp_path / "eval"), "--db", url, "--json"),
            env=harness_environ,
        )
        assert done.returncode == 0, done.stderr
        (cell,) = json.loads(done.stdout)["cells"]
        assert (cell["outcome"], cell["passed"]) == ("ok", True), cell["reason"]
        assert cell["usage"]["gateway"] == {"input": 230, "output": 25, "cache_read": 30, "cache_write": 4}
        run_id = Path(cell["run_dirs"][0]).name
        import psycopg

        with psycopg.connect(url) as db:
            query = "SELECT count(*) FROM gateway_calls WHERE coalesce(run_id, trace_id) = %s"
            calls = db.execute(query, (run_id,)).fetchone()
            query = "SELECT outcome FROM eval_results WHERE cell_id = %s"
            stored = db.execute(query, (cell["cell_id"],)).fetchall()
        assert calls is not None and calls[0] >= 2 and stored == [("ok",)]
        report = run_cli("eval", "report", "--db", url, "--json", env=harness_environ)
        assert report.returncode == 0
        assert json.loads(report.stdout)["groups"][0]["tokens"] == 230 + 25 + 30 + 4
    finally:
        postgres_server.drop_database(url)
