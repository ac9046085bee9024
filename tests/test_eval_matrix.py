"""A matrix file: strict like the adapter tables (every problem at file:line), settings per axis and
per cell, the most specific winning."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from clikit import run_cli
from evalkit import BWRAP_MISSING, write_task
from tackroom.errors import ConfigError, MatrixError
from tackroom.eval.matrix import load_matrix
from tackroom.mock import Script

MOCK = '[[turns]]\ntext = "{text}"\n'

MATRIX = """# a quick matrix
[matrix]
tasks = ["tasks/*"]
harnesses = ["claude-code", "codex", "oracle"]
models = ["claude-sonnet-4-5", "gpt-5"]
repeats = 2
jobs = 3
agent_timeout = 300
mock = "mock/default.toml"

[options]
max_turns = 20

[harness.codex]
options = { max_turns = 5 }
verifier_timeout = 60
jobs = 1

[task.beta]
mock = "mock/beta.toml"

[[cell]]
task = "beta"
harness = "codex"
mock_text = "codex on beta"
"""


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    for name in ("alpha", "beta"):
        write_task(tmp_path / "tasks", name)
    (tmp_path / "mock").mkdir()
    for name in ("default", "beta"):
        (tmp_path / "mock" / f"{name}.toml").write_text(MOCK.format(text=name))
    (tmp_path / "matrix.toml").write_text(MATRIX)
    return tmp_path


def text(script: object) -> str:
    assert isinstance(script, Script)
    return script.turns[0].text


def test_a_matrix_makes_its_cells_with_the_most_specific_settings(suite: Path) -> None:
    matrix = load_matrix(suite / "matrix.toml")
    assert matrix.jobs == 3 and [t.path.name for t in matrix.tasks] == ["alpha", "beta"]
    assert matrix.per_harness == {"codex": 1}
    assert len(matrix.cells) == 2 * 3 * 2 * 2
    cells = {(c.task.path.name, c.harness, c.model, c.repeat): c for c in matrix.cells}
    claude = cells[("alpha", "claude-code", "gpt-5", 1)]
    assert text(claude.mock) == "default" and claude.options == {"max_turns": 20}
    assert claude.agent_timeout_s == 300 and claude.verifier_timeout_s is None
    codex = cells[("alpha", "codex", "claude-sonnet-4-5", 0)]
    assert codex.options == {"max_turns": 5} and codex.verifier_timeout_s == 60
    assert text(cells[("beta", "claude-code", "gpt-5", 0)].mock) == "beta"
    assert text(cells[("beta", "codex", "gpt-5", 0)].mock) == "codex on beta"
    oracle = cells[("beta", "oracle", "gpt-5", 0)]
    assert oracle.mock is None and oracle.options == {}
    assert len({c.id for c in matrix.cells}) == len(matrix.cells)


def test_every_problem_is_named_at_its_line(suite: Path) -> None:
    bad = (
        "[matrix]\n"  # 1
        'tasks = ["tasks/alpha", "tasks/nothing-*"]\n'  # 2
        'harnesses = ["claude-code", "claud"]\n'  # 3
        "repeats = 0\n"  # 4
        'sandbox = "chroot"\n'  # 5
        "shiny = true\n"  # 6
        'mock = "mock/missing.toml"\n'  # 7
        "[options]\n"  # 8
        'max_turns = "many"\n'  # 9
        "[harness.codex]\n"  # 10
        "agent_timeout = -1\n"  # 11
        "[[cell]]\n"  # 12
        'mock_text = "x"\n'  # 13
        'base_url = "http://127.0.0.1:1"\n'  # 14
    )
    (suite / "bad.toml").write_text(bad)
    with pytest.raises(MatrixError) as raised:
        load_matrix(suite / "bad.toml")
    found = {(p.line, p.key) for p in raised.value.problems}
    assert {
        (2, "matrix.tasks"),
        (3, "matrix.harnesses"),
        (4, "matrix.repeats"),
        (5, "matrix.sandbox"),
        (6, "matrix.shiny"),
        (7, "matrix.mock"),
        (9, "options.max_turns"),
        (11, "harness.codex.agent_timeout"),
        (12, "cell[0]"),
        (14, "cell[0].base_url"),
        (10, "harness.codex"),
    } <= found, raised.value
    said = str(raised.value)
    assert "'tasks/nothing-*' matches no task directory" in said and "no adapter 'claud'" in said


def test_a_matrix_without_its_table_or_with_broken_toml(tmp_path: Path) -> None:
    (tmp_path / "empty.toml").write_text("[options]\nmax_turns = 3\n")
    with pytest.raises(MatrixError, match="needs its \\[matrix\\] table"):
        load_matrix(tmp_path / "empty.toml")
    (tmp_path / "broken.toml").write_text("[matrix\n")
    with pytest.raises(ConfigError, match=r"broken\.toml:1: TOML syntax error"):
        load_matrix(tmp_path / "broken.toml")


@pytest.mark.skipif(BWRAP_MISSING is not None, reason=BWRAP_MISSING or "")
def test_eval_run_takes_a_matrix(tmp_path: Path) -> None:
    for name in ("alpha", "beta"):
        write_task(tmp_path / "tasks", name)
    write_task(tmp_path / "tasks", "gamma", solve="#!/bin/bash\necho no > /app/hello.txt\n")
    matrix = tmp_path / "matrix.toml"
    matrix.write_text('[matrix]\ntasks = ["tasks/*"]\nharnesses = ["oracle"]\nrepeats = 2\n')
    out = tmp_path / "eval"
    done = run_cli("eval", "run", str(matrix), "--out", str(out), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["total"] == 6 and report["passed"] == 4
    assert sorted((c["task"], c["passed"]) for c in report["cells"] if c["repeat"] == 0) == [
        ("alpha", True),
        ("beta", True),
        ("gamma", False),
    ]
    done = run_cli("eval", "run", str(matrix), "--task", "x")
    assert done.returncode == 2 and "drop those" in done.stderr


def test_a_matrix_sets_a_profile_a_gateway_and_its_key_per_axis(suite: Path) -> None:
    rules = suite / "profiles" / "base" / "rules"
    rules.mkdir(parents=True)
    (rules / "house.md").write_text("Answer tersely.\n")
    (suite / "matrix.toml").write_text(
        MATRIX.replace(
            'mock = "mock/default.toml"\n', 'mock = "mock/default.toml"\nprofile = "profiles/base"\n'
        )
        + '\n[model.gpt-5]\ngateway = "http://127.0.0.1:8300"\napi_key_env = "GATEWAY_KEY"\n'
        + '\n[[cell]]\nharness = "codex"\nprofile = []\n'
    )
    cells = {
        (c.task.path.name, c.harness, c.model, c.repeat): c for c in load_matrix(suite / "matrix.toml").cells
    }
    claude = cells[("alpha", "claude-code", "claude-sonnet-4-5", 0)]
    assert claude.profile is not None and [r.text for r in claude.profile.rules] == ["Answer tersely.\n"]
    assert claude.gateway is None and claude.api_key_env is None and claude.mock is not None
    through = cells[("alpha", "claude-code", "gpt-5", 0)]
    assert (through.gateway, through.api_key_env, through.mock) == (
        "http://127.0.0.1:8300",
        "GATEWAY_KEY",
        None,
    )
    # the gateway is the model's endpoint; a task's or a cell's mock is more specific and wins again
    assert text(cells[("beta", "codex", "gpt-5", 0)].mock) == "codex on beta"
    assert cells[("beta", "codex", "gpt-5", 0)].gateway is None
    assert cells[("alpha", "codex", "gpt-5", 0)].profile is None  # `profile = []`: none
    assert cells[("alpha", "oracle", "gpt-5", 0)].profile is None
    # the profile is part of what a cell is: another rule, another id
    (rules / "house.md").write_text("Answer at length.\n")
    again = {
        (c.task.path.name, c.harness, c.model, c.repeat): c for c in load_matrix(suite / "matrix.toml").cells
    }
    assert again[("alpha", "claude-code", "claude-sonnet-4-5", 0)].id != claude.id
    assert again[("alpha", "claude-code", "gpt-5", 0)].id != through.id


def test_an_endpoint_a_profile_or_a_key_that_cannot_be_is_named(suite: Path) -> None:
    bad = (
        "[matrix]\n"  # 1
        'tasks = ["tasks/alpha"]\n'  # 2
        'harnesses = ["claude-code"]\n'  # 3
        'gateway = "ftp://gw"\n'  # 4
        'profile = "profiles/missing"\n'  # 5
        'api_key_env = "NOT A NAME"\n'  # 6
        "[task.alpha]\n"  # 7
        "profile = 3\n"  # 8
        'gateway = "http://127.0.0.1:8300"\n'  # 9
        'mock_text = "x"\n'  # 10
    )
    (suite / "bad.toml").write_text(bad)
    with pytest.raises(MatrixError) as raised:
        load_matrix(suite / "bad.toml")
    found = {(p.line, p.key) for p in raised.value.problems}
    assert {
        (4, "matrix.gateway"),
        (5, "matrix.profile"),
        (6, "matrix.api_key_env"),
        (8, "task.alpha.profile"),
        (9, "task.alpha.gateway"),
    } <= found, raised.value
    assert "no profile directory" in str(raised.value) and "gateway URL 'ftp://gw'" in str(raised.value)
    (suite / "bad.toml").write_text(
        '[matrix]\ntasks = ["tasks/alpha"]\nharnesses = ["claude-code"]\ncapture = true\n'
        '[harness.claude-code]\ngateway = "http://127.0.0.1:8300"\n'
    )
    with pytest.raises(
        MatrixError, match=r"task 'alpha', harness 'claude-code': gateway .* capture starts one"
    ):
        load_matrix(suite / "bad.toml")
    (suite / "bad.toml").write_text(
        '[matrix]\ntasks = ["tasks/alpha"]\nharnesses = ["claude-code"]\napi_key_env = "KEY"\n'
    )
    with pytest.raises(MatrixError, match="api_key_env names the key for base_url or gateway"):
        load_matrix(suite / "bad.toml")


def test_eval_run_refuses_endpoints_that_cannot_go_together(tmp_path: Path) -> None:
    task = write_task(tmp_path / "tasks", "alpha")
    quick = ("eval", "run", "--task", str(task), "--harness", "claude-code")
    for extra, said in [
        (
            ("--mock-text", "x", "--gateway", "http://127.0.0.1:8300"),
            "choose one endpoint: --mock-text or --gateway",
        ),
        (("--gateway", "http://127.0.0.1:8300", "--capture"), "--capture starts one"),
        (("--api-key-env", "KEY"), "give one"),
        (("--base-url", "ftp://x"), "not an http(s)"),
        (("--profile", str(tmp_path / "nowhere")), "nowhere"),
        (("--auth", "token"), "must be 'api-key' or 'oauth'"),
        (("--mock-text", "x", "--auth", "oauth"), "a run against the mock gets no real credential"),
    ]:
        done = run_cli(*quick, *extra, "--out", str(tmp_path / "eval"))
        shown = " ".join(re.sub("[│╭╮╰╯─]", " ", done.stderr).split())
        assert done.returncode != 0 and said in shown, (extra, shown)
        assert not (tmp_path / "eval").exists()


def test_a_matrix_says_how_its_harnesses_sign_in(suite: Path) -> None:
    """``auth`` per axis: a subscription sign-in for one harness, a key for the others (issue 26 item 17)."""
    (suite / "matrix.toml").write_text(
        '[matrix]\ntasks = ["tasks/alpha"]\nharnesses = ["claude-code", "codex", "oracle"]\n'
        'base_url = "http://127.0.0.1:8400"\nauth = "api-key"\n'
        '[harness.claude-code]\nauth = "oauth"\n'
    )
    cells = {c.harness: c for c in load_matrix(suite / "matrix.toml").cells}
    assert (cells["claude-code"].auth, cells["codex"].auth, cells["oracle"].auth) == (
        "oauth",
        "api-key",
        None,
    )
    assert cells["claude-code"].id != cells["codex"].id
    (suite / "bad.toml").write_text(
        '[matrix]\ntasks = ["tasks/alpha"]\nharnesses = ["claude-code"]\nauth = "token"\n'
    )
    with pytest.raises(MatrixError) as raised:
        load_matrix(suite / "bad.toml")
    assert {(p.line, p.key) for p in raised.value.problems} == {(4, "matrix.auth")}
    assert "must be 'api-key' or 'oauth', got 'token'" in str(raised.value)
    (suite / "bad.toml").write_text(
        '[matrix]\ntasks = ["tasks/alpha"]\nharnesses = ["claude-code"]\nmock_text = "x"\nauth = "oauth"\n'
    )
    with pytest.raises(MatrixError, match="a run against the mock gets no real credential"):
        load_matrix(suite / "bad.toml")
