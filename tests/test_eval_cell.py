"""Evaluation cells run for real in bubblewrap with the ``oracle`` agent (the task's own solve.sh): the
verifier contract, the failure classes, the paths a task hard-codes, the image approximation, steps,
and results that resume. The harnesses themselves run in ``tests/real/test_eval_real.py``."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from clikit import run_cli
from evalkit import BWRAP_MISSING, write_task
from tackroom.errors import EvaluationExistsError
from tackroom.eval.cell import Cell, CellResult, run_cell
from tackroom.eval.evaluate import evaluate, stored
from tackroom.eval.executors import LocalExecutor
from tackroom.eval.results import ResultStore
from tackroom.eval.tasks import load_task

pytestmark = pytest.mark.skipif(BWRAP_MISSING is not None, reason=BWRAP_MISSING or "")


def cell_of(task_dir: Path, **fields: Any) -> Cell:
    fields.setdefault("harness", "oracle")
    return Cell(task=load_task(task_dir), **fields)


def run(task_dir: Path, tmp_path: Path, **fields: Any) -> CellResult:
    cell = cell_of(task_dir, **fields)
    return asyncio.run(run_cell(cell, tmp_path / "cells" / cell.id[:12]))


def test_the_oracle_solves_the_task_and_the_exit_code_of_test_sh_is_ignored(tmp_path: Path) -> None:
    result = run(write_task(tmp_path), tmp_path)
    assert (result.outcome, result.rewards, result.reward_status, result.passed) == (
        "ok",
        {"reward": 1.0},
        "ok",
        True,
    )
    assert result.approximated and result.notes[0] == "image ubuntu:24.04 approximated by this host's system"
    cell_dir = Path(result.cell_dir)
    assert (cell_dir / "root" / "app" / "hello.txt").read_text() == "hello\n"  # /app, from the cell's root
    assert not (cell_dir / "root" / "tests").exists() and not (cell_dir / "root" / "solution").exists()
    assert set(result.timings) == {"setup", "agent", "verifier", "harness", "tests", "total"}
    assert (
        result.timings["harness"] <= result.timings["agent"]
        and result.timings["tests"] <= result.timings["verifier"]
    )


def test_a_wrong_answer_is_a_graded_zero(tmp_path: Path) -> None:
    result = run(write_task(tmp_path, solve="#!/bin/bash\necho goodbye > /app/hello.txt\n"), tmp_path)
    assert (result.outcome, result.reward, result.passed) == ("ok", 0.0, False)


@pytest.mark.parametrize(
    ("test", "status", "said"),
    [
        ("#!/bin/bash\nexit 0\n", "missing", "neither reward.json nor reward.txt"),
        ("#!/bin/bash\n: > /logs/verifier/reward.txt\n", "empty", "reward.txt is empty"),
        ("#!/bin/bash\necho PASSED > /logs/verifier/reward.txt\n", "unparsable", "must be one number"),
        ('#!/bin/bash\necho \'{"reward": "yes"}\' > /logs/verifier/reward.json\n', "unparsable", "finite"),
        ("#!/bin/bash\nln -s /etc/passwd /logs/verifier/reward.txt\n", "unparsable", "symbolic link"),
    ],
)
def test_no_valid_reward_is_never_a_zero(tmp_path: Path, test: str, status: str, said: str) -> None:
    result = run(write_task(tmp_path, test=test), tmp_path)
    assert (result.outcome, result.reward_status, result.rewards, result.reward, result.passed) == (
        "no_reward",
        status,
        None,
        None,
        None,
    )
    assert said in (result.reason or "")
    assert not result.policy.valid_reward and result.policy.graded


def test_stale_rewards_are_deleted_before_the_verifier(tmp_path: Path) -> None:
    # The agent writes a reward of its own: the verifier's contract deletes it before the tests run.
    solve = "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n"
    result = run(write_task(tmp_path, solve=solve, test="#!/bin/bash\ntrue\n"), tmp_path)
    assert result.outcome == "no_reward" and result.reward_status == "missing"


def test_a_verifier_that_hangs_times_out(tmp_path: Path) -> None:
    hang = "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\nsleep 600\n"
    result = run(write_task(tmp_path, test=hang), tmp_path, verifier_timeout_s=1.0)
    assert result.outcome == "verifier_timeout" and result.rewards is None
    assert result.reason == "the verifier timed out after 1s" and result.timings["verifier"] < 30


def test_an_agent_timeout_is_still_graded(tmp_path: Path) -> None:
    solve = "#!/bin/bash\necho hello > /app/hello.txt\nsleep 600\n"
    result = run(write_task(tmp_path, solve=solve), tmp_path, agent_timeout_s=1.0)
    assert (result.outcome, result.timed_out, result.reward, result.passed) == (
        "agent_timeout",
        True,
        1.0,
        True,
    )
    assert result.policy.valid_reward


def test_tests_and_solution_are_hidden_from_the_phase_that_must_not_see_them(tmp_path: Path) -> None:
    solve = (
        "#!/bin/bash\n"
        "[ -e /tests ] && echo tests-visible >> /app/seen\n"
        "[ -e /solution/solve.sh ] && echo solution-visible >> /app/seen\n"
        "pwd >> /app/seen\n"
    )
    test = (
        "#!/bin/bash\n"
        "[ -e /solution ] && echo solution-visible >> /app/seen\n"
        "[ -x /tests/test.sh ] || [ -f /tests/test.sh ] && echo tests-here >> /app/seen\n"
        "pwd >> /app/seen\n"
        "echo 1 > /logs/verifier/reward.txt\n"
    )
    result = run(write_task(tmp_path, solve=solve, test=test), tmp_path)
    assert result.outcome == "ok"
    seen = (Path(result.cell_dir) / "root" / "app" / "seen").read_text().split()
    assert seen == ["solution-visible", "/app", "tests-here", "/app"]
    stdout = Path(result.cell_dir) / "root" / "logs" / "verifier" / "test-stdout.txt"
    assert stdout.exists()


def test_the_image_is_approximated_copies_and_offline_steps_applied(tmp_path: Path) -> None:
    dockerfile = (
        "FROM python:3.13-slim\n"
        "WORKDIR /app\n"
        "ENV GREETING=hello\n"
        "COPY src/ ./src/\n"
        "RUN mkdir -p /app/data && echo ready > /app/data/state\n"
    )
    test = (
        "#!/bin/bash\n"
        '[ "$(cat /app/src/main.py)" = "print(1)" ] && [ "$(cat /app/data/state)" = ready ] && '
        '[ "$GREETING" = hello ] && echo 1 > /logs/verifier/reward.txt '
        "|| echo 0 > /logs/verifier/reward.txt\n"
    )
    task = write_task(
        tmp_path,
        dockerfile=dockerfile,
        test=test,
        solve="#!/bin/bash\ntrue\n",
        files={"environment/src/main.py": "print(1)"},
    )
    result = run(task, tmp_path)
    assert (result.outcome, result.reward) == ("ok", 1.0)


def test_a_step_the_host_cannot_do_makes_the_cell_unsupported(tmp_path: Path) -> None:
    result = run(write_task(tmp_path, dockerfile="FROM python:3.13\nRUN pip install numpy\n"), tmp_path)
    assert result.outcome == "unsupported" and result.reason is not None
    assert result.reason.startswith("unsupported: needs network: ") and "Dockerfile:2" in result.reason
    assert result.rewards is None and result.timings["agent"] == 0.0 if "agent" in result.timings else True
    # a RUN that writes where the host's system is read-only fails on the host, and says so
    result = run(
        write_task(tmp_path / "b", dockerfile="FROM a\nRUN mkdir /usr/share/tackroom-test\n"), tmp_path / "b"
    )
    assert result.outcome == "unsupported" and "RUN failed on this host's system" in (result.reason or "")


def test_a_task_without_network_gets_none(tmp_path: Path) -> None:
    solve = "#!/bin/bash\ntail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' > /app/interfaces\n"
    test = '#!/bin/bash\n[ "$(cat /app/interfaces)" = lo ] && echo 1 > /logs/verifier/reward.txt\n'
    assert run(write_task(tmp_path, solve=solve, test=test), tmp_path).reward == 1.0  # allow_internet = false
    public = 'schema_version = "1.4"\n[environment]\nnetwork_mode = "public"\n'
    result = run(write_task(tmp_path / "p", toml=public, solve=solve, test=test), tmp_path / "p")
    assert result.outcome == "no_reward"  # the host's interfaces are there too


@pytest.mark.parametrize("phase", ["agent", "verifier"])
def test_a_phase_without_network_gets_none_and_the_other_keeps_it(phase: str, tmp_path: Path) -> None:
    """``[agent]`` or ``[verifier]`` ``network_mode`` narrows the environment's for that phase alone."""
    toml = f'[environment]\nnetwork_mode = "public"\n[{phase}]\nnetwork_mode = "no-network"\n'
    interfaces = "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '"
    solve = f"#!/bin/bash\n{interfaces} > /app/agent-interfaces\n"
    test = (
        (
            f"#!/bin/bash\n{interfaces} > /app/verifier-interfaces\n"
            '[ "$(cat /app/${PHASE}-interfaces)" = lo ] && [ "$(cat /app/${OTHER}-interfaces)" != lo ] '
            "&& echo 1 > /logs/verifier/reward.txt\n"
        )
        .replace("${PHASE}", phase)
        .replace("${OTHER}", "verifier" if phase == "agent" else "agent")
    )
    result = run(write_task(tmp_path, toml=toml, solve=solve, test=test), tmp_path)
    assert (result.outcome, result.reward) == ("ok", 1.0), result.reason


def test_an_allowlist_task_gets_no_network_and_is_told(tmp_path: Path) -> None:
    """No sandbox here lets some hosts through and not others: an allowlist lets through none."""
    solve = "#!/bin/bash\ntail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' > /app/interfaces\n"
    test = '#!/bin/bash\n[ "$(cat /app/interfaces)" = lo ] && echo 1 > /logs/verifier/reward.txt\n'
    toml = '[environment]\nnetwork_mode = "allowlist"\nallowed_hosts = ["pypi.org"]\n'
    result = run(write_task(tmp_path, toml=toml, solve=solve, test=test), tmp_path)
    assert (result.outcome, result.reward) == ("ok", 1.0), result.reason
    assert any("allowlist (pypi.org)" in note and "no network" in note for note in result.notes), result.notes


def test_a_task_of_steps_is_gated_by_min_reward(tmp_path: Path) -> None:
    toml = (
        'schema_version = "1.1"\n'
        "[[steps]]\n"
        'name = "one"\n'
        "min_reward = 1.0\n"
        "[[steps]]\n"
        'name = "two"\n'
        "min_reward = 1.0\n"
        "[[steps]]\n"
        'name = "three"\n'
    )
    files = {
        "steps/one/instruction.md": "Write one.\n",
        "steps/one/solution/solve.sh": "echo one > /app/one\n",
        "steps/one/tests/test.sh": "[ -f /app/one ] && echo 1 > /logs/verifier/reward.txt\n",
        "steps/two/instruction.md": "Write two.\n",
        "steps/two/workdir/setup.sh": "echo set > /app/setup-ran\n",
        "steps/two/solution/solve.sh": "echo nope\n",
        "steps/two/tests/test.sh": "echo 0 > /logs/verifier/reward.txt\n",
        "steps/three/instruction.md": "Write three.\n",
        "steps/three/solution/solve.sh": "echo three > /app/three\n",
    }
    task = write_task(tmp_path, toml=toml, instruction=None, solve=None, files=files)
    result = run(task, tmp_path)
    assert [(s["step"], s["rewards"]) for s in result.steps] == [
        ("one", {"reward": 1.0}),
        ("two", {"reward": 0.0}),
    ]
    assert result.rewards == {"reward": 0.5}  # the mean over the steps that ran
    app = Path(result.cell_dir) / "root" / "app"
    assert (app / "setup-ran").exists() and not (app / "three").exists()


def test_no_sandbox_is_refused_with_the_reason(tmp_path: Path) -> None:
    result = run(write_task(tmp_path), tmp_path, sandbox="none")
    assert result.outcome == "invalid" and "choose a sandbox that shows them" in (result.reason or "")


def test_cell_ids_are_values(tmp_path: Path) -> None:
    task = write_task(tmp_path)
    a, b = cell_of(task), cell_of(task)
    assert a.id == b.id and cell_of(task, repeat=1).id != a.id and cell_of(task, model="m").id != a.id
    (task / "instruction.md").write_text("Write hello to /app/hello.txt, please.\n")
    assert cell_of(task).id != a.id  # another task is another cell


def test_results_are_stored_once_each_and_resume_reruns_only_what_is_missing(tmp_path: Path) -> None:
    good = write_task(tmp_path, "good")
    bad = write_task(tmp_path, "bad", test="#!/bin/bash\nexit 0\n")
    cells = [cell_of(good), cell_of(bad), cell_of(good, repeat=1)]
    out = tmp_path / "eval"
    store = ResultStore()
    first = asyncio.run(evaluate(cells, out, jobs=2))
    assert [r.outcome for r in first] == ["ok", "no_reward", "ok"]
    evaluation = store.known(out)
    assert evaluation is not None and store.attempts(evaluation) == 3
    harbor = json.loads((Path(first[0].cell_dir) / "result.json").read_text())
    assert harbor["task_name"] == "good" and harbor["verifier_result"] == {"rewards": {"reward": 1.0}}
    assert harbor["agent_info"]["name"] == "oracle" and harbor["exception_info"] is None
    assert harbor["reward_valid"] is True
    with pytest.raises(EvaluationExistsError, match="holds an evaluation \\(3 cells stored\\): --resume it"):
        asyncio.run(evaluate(cells, out))
    again = asyncio.run(evaluate(cells, out, resume=True))
    assert [r.attempt for r in again] == [0, 0, 0] and store.attempts(evaluation) == 3  # nothing ran again
    retried = asyncio.run(evaluate(cells, out, resume=True, retry_failed=True))
    assert [r.attempt for r in retried] == [0, 1, 0]
    assert store.attempts(evaluation) == 4  # the first attempt kept, the new one flagged latest
    assert stored(out)[cells[1].id].attempt == 1
    # a cell added to the evaluation later is the only one that runs on resume
    more = [*cells, cell_of(good, repeat=2)]
    grown = asyncio.run(evaluate(more, out, resume=True))
    assert [r.attempt for r in grown] == [0, 1, 0, 0] and store.attempts(evaluation) == 5


def test_eval_run_command(tmp_path: Path) -> None:
    task = write_task(tmp_path)
    out = tmp_path / "eval"
    done = run_cli(
        "eval",
        "run",
        "--task",
        str(task),
        "--harness",
        "oracle",
        "--repeats",
        "2",
        "--out",
        str(out),
        "--json",
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["total"] == 2 and report["passed"] == 2 and report["outcomes"] == {"ok": 2}
    assert [c["repeat"] for c in report["cells"]] == [0, 1]
    assert "[2/2] hello × oracle #" in done.stderr
    done = run_cli("eval", "run", "--task", str(tmp_path / "nowhere"), "--harness", "oracle")
    assert done.returncode == 1 and "no task directory here" in done.stderr and "Traceback" not in done.stderr
    assert any((out / "cells").iterdir())
    done = run_cli("eval", "run", "--task", str(task), "--harness", "claudecode")
    assert done.returncode == 1
    assert "unknown adapter 'claudecode'; known adapters: oracle, aider" in done.stderr


def test_the_healthcheck_runs_before_the_agent(tmp_path: Path) -> None:
    healthy = (
        'schema_version = "1.4"\n[environment.healthcheck]\ncommand = "test -f /app/ready"\n'
        "interval_sec = 0.05\nretries = 1\n"
    )
    dockerfile = "FROM ubuntu:24.04\nWORKDIR /app\nRUN touch /app/ready\n"
    assert run(write_task(tmp_path / "a", toml=healthy, dockerfile=dockerfile), tmp_path / "a").reward == 1.0
    sick = healthy.replace("test -f /app/ready", "test -f /app/never")
    result = run(write_task(tmp_path / "b", toml=sick, dockerfile=dockerfile), tmp_path / "b")
    assert result.outcome == "infra" and result.rewards is None
    assert result.reason == "the task's healthcheck failed 2 times (last: exited 1): test -f /app/never"
    assert not (Path(result.cell_dir) / "root" / "app" / "hello.txt").exists()  # the agent never ran


def test_the_local_pool_caps_a_harness(tmp_path: Path) -> None:
    solve = "#!/bin/bash\nsleep 0.3\necho hello > /app/hello.txt\n"
    cells = [cell_of(write_task(tmp_path, f"t{i}", solve=solve)) for i in range(3)]
    capped = asyncio.run(
        evaluate(cells, tmp_path / "capped", executor=LocalExecutor(3, per_harness={"oracle": 1}))
    )
    spans = sorted((r.started_at, r.finished_at) for r in capped)
    assert all(spans[i][1] <= spans[i + 1][0] for i in range(2)), spans  # one at a time
    free = asyncio.run(evaluate(cells, tmp_path / "free", executor=LocalExecutor(3)))
    spans = sorted((r.started_at, r.finished_at) for r in free)
    assert any(spans[i][1] > spans[i + 1][0] for i in range(2)), spans  # side by side


def test_a_terminal_gets_a_live_status_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    task = write_task(tmp_path)
    master, slave = os.openpty()
    argv = [sys.executable, "-m", "tackroom", "eval", "run", "--task", str(task), "--harness", "oracle"]
    process = subprocess.Popen(
        [*argv, "--out", str(tmp_path / "eval")],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=slave,
        env={**os.environ, "TERM": "xterm-256color", "COLUMNS": "200"},
    )
    os.close(slave)
    seen = b""
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # the terminal's other end closed
            break
        if not data:
            break
        seen += data
    os.close(master)
    assert process.wait(timeout=60) == 0
    text = seen.decode(errors="replace")
    assert "[1/1] hello × oracle #0: ok, reward 1" in text
    assert "1/1 done, running 0, failed 0, tokens 0, cost $0.0000" in text
    assert "; 1/1 done" not in text  # on a terminal the status is its own line, not appended


def test_a_harness_that_is_not_installed_is_an_infra_cell_that_says_so(
    config_dir: Path, tmp_path: Path
) -> None:
    drop_ins = config_dir / "adapters.d"
    drop_ins.mkdir(parents=True, exist_ok=True)
    (drop_ins / "ghost.toml").write_text(
        '[adapter.ghost]\nextends = "claude-code"\nexecutable = "/nonexistent/ghost-claude"\n'
    )
    from tackroom.mock import Script, Turn

    result = run(write_task(tmp_path), tmp_path, harness="ghost", mock=Script([Turn.reply("hi")]))
    assert result.outcome == "infra" and result.policy.retry and result.rewards is None, result.reason
    assert "(adapter 'ghost') is not installed by tackroom and not on PATH" in (result.reason or "")
