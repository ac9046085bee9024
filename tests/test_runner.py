"""The runner end to end with the scripted fake harness: a real subprocess, no patching.

An operator adapter extending claude-code points at ``tests/fakes/fake_harness.py``,
which replays a stream recorded from the real claude binary, hangs, or fails on
cue, so the runner's isolation, environment, timeout and result paths are
exercised without any harness installed.
"""

from __future__ import annotations

import json
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from clikit import run_cli
from runkit import RECORDED, fake_adapter
from tackroom.adapters.resolve import load_adapters
from tackroom.errors import HarnessNotFoundError
from tackroom.mock import Script
from tackroom.run.runner import run
from tackroom.run.spec import RunSpec


def test_replayed_stream_becomes_a_result(config_dir: Path, tmp_path: Path) -> None:
    adapter = fake_adapter(config_dir, "--replay", str(RECORDED))
    seen: list[str] = []
    result = run(
        adapter, "hello", workdir=tmp_path, runs_dir=tmp_path / "runs", on_event=lambda e: seen.append(e.kind)
    )
    assert result.ok and result.exit_code == 0
    assert result.final_text == "TACKROOM-TEXT-claude-code"
    assert result.usage.input == 1234 and result.usage.reasoning is None
    assert result.session_id and seen[0] == "session_started" and seen[-1] == "finished"
    files = {p.name for p in result.run_dir.iterdir()}
    assert {"home", "tmp", "stdout.log", "stderr.log", "events.jsonl", "result.json"} <= files
    saved = json.loads((result.run_dir / "result.json").read_text())
    assert saved["final_text"] == result.final_text and saved["usage"]["reasoning"] == "not_reported"
    assert saved["auth"] is None  # no endpoint set: the harness's own defaults


def test_environment_is_isolated_and_allowlisted(config_dir: Path, tmp_path: Path) -> None:
    adapter = fake_adapter(
        config_dir, "--print-env", "HOME", "CLAUDE_CONFIG_DIR", "TMPDIR", "STRAY", "CLAUDECODE"
    )
    environ = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "real-home"), "STRAY": "x", "CLAUDECODE": "1"}
    result = run(adapter, "p", workdir=tmp_path, runs_dir=tmp_path / "runs", environ=environ)
    printed = dict(line.split("=", 1) for line in (result.run_dir / "stdout.log").read_text().splitlines())
    home = result.run_dir / "home"
    assert printed == {
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "TMPDIR": str(result.run_dir / "tmp"),
    }
    assert not (tmp_path / "real-home").exists()


def test_mock_endpoint_reaches_the_harness(config_dir: Path, tmp_path: Path) -> None:
    adapter = fake_adapter(config_dir, "--print-env", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY")
    result = run(adapter, "p", workdir=tmp_path, runs_dir=tmp_path / "runs", mock_text="hi")
    printed = dict(line.split("=", 1) for line in (result.run_dir / "stdout.log").read_text().splitlines())
    assert printed["ANTHROPIC_BASE_URL"].startswith("http://127.0.0.1:")
    assert printed["ANTHROPIC_API_KEY"] == "sk-tackroom-mock"
    assert result.auth == "api-key"  # the mock's dummy key, said in result.json
    assert json.loads((result.run_dir / "result.json").read_text())["auth"] == "api-key"


def test_timeout_kills_the_group_and_says_so(config_dir: Path, tmp_path: Path) -> None:
    adapter = fake_adapter(config_dir, "--replay", str(RECORDED), "--hang", "--spawn-children", "2")
    started = time.monotonic()
    result = run(adapter, "p", workdir=tmp_path, runs_dir=tmp_path / "runs", timeout_s=1.0)
    assert time.monotonic() - started < 1.0 + 3.0 + 3.0
    assert result.timed_out and not result.ok
    assert result.error is not None and result.error.startswith("timed out after 1s")


def test_a_failing_exit_is_explained(config_dir: Path, tmp_path: Path) -> None:
    adapter = fake_adapter(config_dir, "--stderr", "boom: no credentials", "--exit-code", "3")
    result = run(adapter, "p", workdir=tmp_path, runs_dir=tmp_path / "runs")
    assert result.exit_code == 3 and not result.ok and not result.model_failed
    assert result.error == "exit code 3: boom: no credentials"


def test_missing_executable_says_how_to_install(config_dir: Path, tmp_path: Path) -> None:
    (config_dir / "tackroom.toml").write_text('[adapter.claude-code]\nexecutable = "claude-nowhere"\n')
    adapter = load_adapters(config=config_dir)["claude-code"]
    with pytest.raises(HarnessNotFoundError, match="tackroom install claude-code"):
        run(adapter, "p", workdir=tmp_path, environ={"PATH": str(tmp_path)})


def test_cli_json_events_and_exit_codes(config_dir: Path, tmp_path: Path) -> None:
    fake_adapter(config_dir, "--replay", str(RECORDED))
    done = run_cli("run", "fake", "hello", "--json", "--workdir", str(tmp_path))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    for key in (
        "exit_code",
        "timed_out",
        "duration_s",
        "session_id",
        "final_text",
        "usage",
        "model_failed",
        "error",
        "run_dir",
        "harness_version",
    ):
        assert key in result
    assert result["final_text"] == "TACKROOM-TEXT-claude-code"
    events = run_cli("run", "fake", "hello", "--events", "--workdir", str(tmp_path))
    kinds = [json.loads(line)["type"] for line in events.stdout.splitlines()]
    assert kinds[0] == "session_started" and kinds[-2:] == ["finished", "result"]
    people = run_cli("run", "fake", "hello", "--workdir", str(tmp_path))
    assert "TACKROOM-TEXT-claude-code" in people.stdout and "ok" in people.stdout


def test_cli_exit_code_follows_the_harness(config_dir: Path, tmp_path: Path) -> None:
    fake_adapter(config_dir, "--exit-code", "7", name="seven")
    assert run_cli("run", "seven", "p", "--json", "--workdir", str(tmp_path)).returncode == 7
    fake_adapter(config_dir, "--hang", name="hangs")
    done = run_cli("run", "hangs", "p", "--json", "--timeout", "1", "--workdir", str(tmp_path))
    assert done.returncode == 124 and json.loads(done.stdout)["timed_out"] is True


def test_cli_rejects_two_endpoints(tmp_path: Path) -> None:
    done = run_cli("run", "claude-code", "p", "--mock-text", "x", "--base-url", "http://127.0.0.1:1")
    assert done.returncode == 2


def test_mock_server_is_stopped_after_the_run(config_dir: Path, tmp_path: Path) -> None:
    adapter = fake_adapter(config_dir, "--print-env", "ANTHROPIC_BASE_URL")
    script = Script.text("hi")
    result = run(adapter, "p", workdir=tmp_path, runs_dir=tmp_path / "runs", mock=script)
    url = (result.run_dir / "stdout.log").read_text().split("=", 1)[1].strip()
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(url + "/v1/models", timeout=2)


@pytest.mark.parametrize(
    "where", [".gitconfig", ".config/git/config", "xdg/git/config"], ids=["home", "config", "xdg"]
)
def test_isolated_home_gets_a_copy_of_the_git_identity(config_dir: Path, tmp_path: Path, where: str) -> None:
    """From whichever file ``git config --global`` reads (``$XDG_CONFIG_HOME`` where it is set)."""
    real = tmp_path / "real-home"
    (real / where).parent.mkdir(parents=True, exist_ok=True)
    (real / where).write_text("[user]\n\tname = Real Person\n")
    adapter = fake_adapter(config_dir, "--exit-code", "0")
    environ = {"PATH": "/usr/bin:/bin", "HOME": str(real)}
    environ |= {"XDG_CONFIG_HOME": str(real / "xdg")} if where.startswith("xdg") else {}
    result = run(adapter, "p", workdir=tmp_path, runs_dir=tmp_path / "runs", environ=environ)
    copied = result.run_dir / "home" / ".gitconfig"
    name = subprocess.run(
        ["git", "config", "--file", str(copied), "--get", "user.name"], capture_output=True, text=True
    )
    assert name.stdout == "Real Person\n"
    assert copied.stat().st_ino != (real / where).stat().st_ino


def test_the_default_profile_renders_into_isolated_runs(config_dir: Path, tmp_path: Path) -> None:
    fake_adapter(config_dir, "--exit-code", "0")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    rules = repo / ".tackroom" / "profile" / "rules"
    rules.mkdir(parents=True)
    (rules / "style.md").write_text("Be brief. DEFAULT-PROFILE-MARKER\n")
    done = run_cli("run", "fake", "p", "--json", "--workdir", str(repo), cwd=repo)
    home = Path(json.loads(done.stdout)["run_dir"]) / "home"
    assert "DEFAULT-PROFILE-MARKER" in (home / ".claude" / "CLAUDE.md").read_text()
    skipped = run_cli("run", "fake", "p", "--json", "--no-profile", "--workdir", str(repo), cwd=repo)
    assert not (Path(json.loads(skipped.stdout)["run_dir"]) / "home" / ".claude" / "CLAUDE.md").exists()


def test_the_run_s_trace_id_reaches_the_harness_and_is_the_gateway_s(
    config_dir: Path, tmp_path: Path
) -> None:
    """``TACKROOM_TRACE_ID`` is the run id, the trace its calls carry through the gateway; a value the
    spec's own variables give does not replace it."""
    fake_adapter(config_dir, "--print-env", "TACKROOM_TRACE_ID", "ANTHROPIC_BASE_URL")
    spec = RunSpec(
        prompt="p",
        adapter="fake",
        workdir=tmp_path,
        mock=Script.text("hi"),
        capture=True,
        env={"TACKROOM_TRACE_ID": "forged"},
    )
    result = run(spec, runs_dir=tmp_path / "runs", capture_db=tmp_path / "gateway.db")
    printed = dict(line.split("=", 1) for line in (result.run_dir / "stdout.log").read_text().splitlines())
    assert printed["TACKROOM_TRACE_ID"] == result.run_dir.name
    assert printed["ANTHROPIC_BASE_URL"].endswith(f"/t/{result.run_dir.name}")


def test_a_harness_s_terminal_escapes_never_reach_the_terminal(config_dir: Path, tmp_path: Path) -> None:
    """Gemini's trust refusal prints ``ESC[31m``: the summary line shows it as text, never sends it."""
    fake_adapter(
        config_dir, "--stderr", "\x1b[31mrefused\x1b[0m \x1b]0;pwned\x07", "--exit-code", "3", name="red"
    )
    done = run_cli("run", "red", "p", "--workdir", str(tmp_path))
    assert done.returncode == 3
    assert "\x1b" not in done.stdout + done.stderr and "\x07" not in done.stdout + done.stderr
    assert "\\x1b[31mrefused\\x1b[0m" in done.stdout + done.stderr
