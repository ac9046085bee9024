"""``tackroom doctor``: every check says what it found; a failed one says how to fix it; exit 0 only when
nothing failed; a wrong operator override shows up as a false capability naming the file and line."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from clikit import run_cli
from probekit import AGENT_CAPABILITIES, agent_adapter
from tackroom.adapters.resolve import Adapter, load_adapters, resolve_builtins
from tackroom.probe.doctor import Report, adoctor, declared_capabilities, what_to_change
from tackroom.state import CapabilityRows, StateDB

PATH = {"PATH": "/usr/bin:/bin"}


def doctor(adapter: Adapter, tmp_path: Path, prove: bool = False, **environ: str) -> Report:
    store = CapabilityRows(StateDB(tmp_path / "state.db"))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home"), **environ}
    # The fake agent runs no tools: --prove asks only what it can show (MCP and hooks stay untested).
    return asyncio.run(
        adoctor(
            adapter,
            store,
            environ=env,
            workdir=tmp_path,
            prove=prove,
            capabilities=AGENT_CAPABILITIES,
            timeout_s=20,
        )
    )


def checks(report: Report) -> dict[str, tuple[str, str, str]]:
    return {c.name: (c.status, c.message, c.fix) for c in report.checks}


def test_a_healthy_adapter_passes_with_what_it_found(config_dir: Path, tmp_path: Path) -> None:
    report = doctor(agent_adapter(config_dir), tmp_path, prove=True, ANTHROPIC_API_KEY="sk-very-secret")
    found = checks(report)
    assert report.ok, report.checks
    assert found["executable"][0] == "ok" and "fake_agent.py" in found["executable"][1]
    assert found["version"] == ("ok", "2.1.197 (at least 2.1.0)", "")
    assert found["verified"][0] == "ok"
    assert found["home"][0] == found["transcripts"][0] == "ok"
    assert found["credentials"] == ("ok", "set: ANTHROPIC_API_KEY (values not shown)", "")
    assert found["proof"][0] == "ok" and "outcome ok" in found["proof"][1]
    # The fake runs no tools: MCP and hooks stay unproven, which is said, not failed.
    assert found["capabilities"][0] == "warn" and "untested: mcp.offered" in found["capabilities"][1]
    assert "sk-very-secret" not in json.dumps(report.to_json())


def test_a_wrong_rules_path_makes_rules_read_false_and_names_what_to_change(
    config_dir: Path, tmp_path: Path
) -> None:
    extra = '[adapter.fake.capabilities.rules]\npath = "~/.claude/NOT-READ.md"\nrender = "concat"\n'
    report = doctor(agent_adapter(config_dir, extra=extra), tmp_path, prove=True)
    assert not report.ok
    status, message, fix = checks(report)["rules.read"]
    assert status == "fail" and "rules.read is false" in message
    assert (
        f"capabilities.rules.path = '~/.claude/NOT-READ.md' is set in {config_dir}/adapters.d/fake.toml:"
        in fix
    )
    assert "the built-in says '${CLAUDE_CONFIG_DIR:-~/.claude}/CLAUDE.md'" in fix


def test_a_missing_executable_fails_with_the_fix(config_dir: Path, tmp_path: Path) -> None:
    (config_dir / "adapters.d" / "gone.toml").write_text(
        f'[adapter.gone]\nextends = "claude-code"\nexecutable = "{tmp_path}/nowhere/claude"\n'
    )
    report = doctor(load_adapters(config=config_dir)["gone"], tmp_path)
    status, message, fix = checks(report)["executable"]
    assert not report.ok and status == "fail"
    assert message == f"{tmp_path}/nowhere/claude (the adapter's executable) does not exist"
    assert "set [adapter.gone] executable" in fix
    assert "proof" in checks(report)  # the rest is still checked


def test_a_too_old_harness_fails_and_drift_warns_naming_both(config_dir: Path, tmp_path: Path) -> None:
    old = doctor(agent_adapter(config_dir, extra='min_version = "3.0"\n'), tmp_path)
    assert checks(old)["version"][0] == "fail" and "older than 3.0" in checks(old)["version"][1]
    drift = doctor(
        agent_adapter(config_dir, extra='verified_with = "2.1.400"\npreviously_verified = []\n'), tmp_path
    )
    status, message, fix = checks(drift)["verified"]
    assert status == "warn" and "2.1.197 is installed, the adapter was verified with 2.1.400" in message
    assert "--version 2.1.400" in fix
    assert drift.ok  # a warning is not a failure
    # A release proven before (previously_verified) is no drift.
    older = doctor(agent_adapter(config_dir, extra='previously_verified = ["2.1.197"]\n'), tmp_path)
    assert checks(older)["verified"][0] == "ok" and "was verified too" in checks(older)["verified"][1]


def test_a_transcript_root_that_cannot_be_made_fails(config_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "home").write_text("a file where the home should be")
    report = doctor(agent_adapter(config_dir), tmp_path)
    status, message, fix = checks(report)["transcripts"]
    assert status == "fail" and "is not a directory" in message and fix.startswith("make ")


def test_a_probe_that_failed_fails_the_proof(config_dir: Path, tmp_path: Path) -> None:
    report = doctor(agent_adapter(config_dir, "--crash"), tmp_path, prove=True)
    status, message, fix = checks(report)["proof"]
    assert status == "fail" and "outcome failed" in message and "crashing on purpose" in message
    assert "--prove" in fix


def test_never_probed_is_a_warning_saying_how(config_dir: Path, tmp_path: Path) -> None:
    found = checks(doctor(agent_adapter(config_dir), tmp_path))
    assert found["proof"] == (
        "warn",
        "never probed: nothing it claims is proven here",
        "run `tackroom doctor fake --prove`",
    )


def test_what_to_change_names_the_builtin_when_nothing_was_overridden() -> None:

    fix = what_to_change(resolve_builtins()["claude-code"], "mcp.offered")
    assert f"tackroom install claude-code --version {resolve_builtins()['claude-code'].verified_with}" in fix


def test_declared_capabilities_follow_the_adapter_data() -> None:

    builtins = resolve_builtins()
    assert len(declared_capabilities(builtins["claude-code"])) == 20
    # qwen fires SessionStart headless from 0.24.4 (a since entry), not in 0.15.10.
    assert "hooks.session-start.fire" not in declared_capabilities(builtins["qwen"].at("0.15.10"))
    assert "hooks.session-start.fire" in declared_capabilities(builtins["qwen"].at("0.24.4"))
    assert declared_capabilities(builtins["aider"]) == [
        "rules.read",
        "usage.exact",
        "endpoint.model",
        "error.detected",
        "process.tree_killed",
        "transcripts.written",
    ]
    # Roots read for the user's own runs, while tackroom's runs send the log to stdout (runs = false).
    mini = builtins["mini-swe-agent"]
    assert mini.spec.transcripts is not None and not mini.spec.transcripts.runs
    assert "transcripts.written" not in declared_capabilities(mini)
    assert "transcripts.written" in declared_capabilities(builtins["letta"])


def test_cli_exit_codes_and_json(config_dir: Path, tmp_path: Path) -> None:
    agent_adapter(config_dir)
    done = run_cli("doctor", "fake", "--json", env=PATH)
    assert done.returncode == 0, done.stderr
    [report] = json.loads(done.stdout)
    assert report["adapter"] == "fake" and report["ok"] is True
    assert {c["check"] for c in report["checks"]} >= {"executable", "version", "proof", "credentials"}
    broken = run_cli("doctor", "fake", "codex", env=PATH)
    assert broken.returncode == 1
    assert "FAIL executable" in broken.stdout and "fix: run `tackroom install codex" in broken.stdout


def test_without_a_name_doctor_checks_the_project_harness(config_dir: Path, tmp_path: Path) -> None:
    agent_adapter(config_dir)
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "tackroom.toml").write_text('harness = "fake"\n')
    done = run_cli("doctor", "--json", cwd=repo, env=PATH)
    assert [r["adapter"] for r in json.loads(done.stdout)] == ["fake"]


@pytest.mark.parametrize("installed", [True, False])
def test_without_a_name_or_project_doctor_checks_what_is_installed(
    config_dir: Path, tmp_path: Path, installed: bool
) -> None:
    if installed:
        agent_adapter(config_dir)
    done = run_cli("doctor", "--json", cwd=tmp_path, env=PATH)
    if installed:
        assert [r["adapter"] for r in json.loads(done.stdout)] == ["fake"]
    else:
        assert done.returncode == 1 and "nothing to check" in done.stderr and "Traceback" not in done.stderr


def test_with_no_name_doctor_checks_what_the_repository_is_set_up_for(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".codex").mkdir()
    done = run_cli("doctor", "--json", cwd=repo)
    assert f"tackroom: checking codex: detected in {repo} (score 10)" in done.stderr
    assert [r["adapter"] for r in json.loads(done.stdout)] == ["codex"]
    (repo / "tackroom.toml").write_text('harness = "gemini"\n', encoding="utf-8")
    done = run_cli("doctor", "--json", cwd=repo)
    assert f'checking gemini: harness = "gemini" in {repo / "tackroom.toml"}' in done.stderr
