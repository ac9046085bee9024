"""The adapters CLI as a user runs it: real processes, exit codes, stdout and stderr."""

from __future__ import annotations

import json
from pathlib import Path

from clikit import run_cli
from tackroom.adapters.resolve import resolve_builtins


def test_list_json_has_every_builtin() -> None:
    done = run_cli("adapters", "list", "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [row["name"] for row in rows] == sorted(resolve_builtins())
    claude = next(row for row in rows if row["name"] == "claude-code")
    assert claude == {
        "name": "claude-code",
        "family": "claude-code",
        "extends": None,
        "source": "builtin",
        "executable": "claude",
        "verified_with": resolve_builtins()["claude-code"].verified_with,
        "hash": resolve_builtins()["claude-code"].hash,
    }


def test_list_cache_follows_operator_edits(config_dir: Path) -> None:
    first = json.loads(run_cli("adapters", "list", "--json").stdout)
    drop_in = config_dir / "adapters.d" / "10.toml"
    drop_in.write_text('[adapter.claude-x]\nextends = "claude-code"\nexecutable = "/x"\n', encoding="utf-8")
    second = json.loads(run_cli("adapters", "list", "--json").stdout)
    assert len(second) == len(first) + 1
    row = next(row for row in second if row["name"] == "claude-x")
    assert (row["source"], row["extends"], row["executable"]) == (str(drop_in), "claude-code", "/x")
    drop_in.write_text("[adapter.claude-x]\nexecutable = 1\n", encoding="utf-8")
    broken = run_cli("adapters", "list", "--json")
    assert broken.returncode == 1 and broken.stdout == ""


def test_list_table_for_people() -> None:
    done = run_cli("adapters", "list", env={"COLUMNS": "200"})
    verified = resolve_builtins()["claude-code"].verified_with
    assert verified and done.returncode == 0 and "claude-code" in done.stdout and verified in done.stdout


def test_show_attributes_each_field(config_dir: Path) -> None:
    path = config_dir / "tackroom.toml"
    path.write_text('[adapter.claude-code]\nexecutable = "/opt/claude"\n', encoding="utf-8")
    shown = json.loads(run_cli("adapters", "show", "claude-code", "--json").stdout)
    assert shown["effective"]["executable"] == "/opt/claude"
    assert shown["provenance"]["executable"] == f"{path}:2"
    assert shown["provenance"]["one_shot"] == "builtin"
    assert shown["provenance"]["version_argv"] == "builtin"
    people = run_cli("adapters", "show", "claude-code", env={"COLUMNS": "250"})
    assert f"{path}:2" in people.stdout


def test_diff_shows_only_the_override(config_dir: Path) -> None:
    (config_dir / "tackroom.toml").write_text(
        '[adapter.claude-code]\nexecutable = "/opt/claude"\n', encoding="utf-8"
    )
    done = run_cli("adapters", "diff", "claude-code", env={"COLUMNS": "250"})
    assert done.returncode == 0
    changed = [line for line in done.stdout.splitlines() if line[:1] in "~+-"]
    assert changed == [f'~ executable: "claude" -> "/opt/claude"  {config_dir / "tackroom.toml"}:2']


def test_render_json_hides_secrets_and_spawns_nothing(tmp_path: Path) -> None:
    done = run_cli(
        "adapters",
        "render",
        "claude-code",
        "--prompt",
        "hello",
        "--option",
        "max_turns=2",
        "--base-url",
        "http://127.0.0.1:1",
        "--json",
        "--workdir",
        str(tmp_path),
        env={"ANTHROPIC_API_KEY": "sk-very-secret"},
    )
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert plan["argv"][:3] == ["claude", "-p", "hello"] and plan["argv"][-2:] == ["--max-turns", "2"]
    assert plan["hash"] == resolve_builtins()["claude-code"].hash
    assert plan["env"]["ANTHROPIC_API_KEY"] == "<secret>"
    assert "sk-very-secret" not in done.stdout + done.stderr
    assert plan["cwd"] == str(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_render_unsupported_option_is_an_error_once() -> None:
    done = run_cli("adapters", "render", "claude-code", "--option", "sandbox=x")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("tackroom: error:") == 1
    assert "adapter 'claude-code'" in done.stderr and "'sandbox'" in done.stderr
    assert "Traceback" not in done.stderr


def test_debug_shows_a_traceback() -> None:
    done = run_cli("--debug", "adapters", "render", "claude-code", "--option", "sandbox=x")
    assert done.returncode == 1 and "Traceback" in done.stderr


def test_unknown_adapter_lists_known_ones() -> None:
    done = run_cli("adapters", "show", "generic")
    assert done.returncode == 1
    assert "unknown adapter 'generic'" in done.stderr and "claude-code" in done.stderr


def test_usage_error_exits_2() -> None:
    assert run_cli("adapters", "render").returncode == 2
    assert run_cli("adapters", "list", "--bogus").returncode == 2


def test_config_error_names_file_and_line(config_dir: Path) -> None:
    path = config_dir / "adapters.d" / "10.toml"
    path.write_text("[adapter.claude-code]\nmax_turns = 3\n", encoding="utf-8")
    done = run_cli("adapters", "list")
    assert done.returncode == 1
    assert f"{path}:2: adapter.claude-code.max_turns: unknown key" in done.stderr


def test_metrics_one_line_per_adapter(tmp_path: Path) -> None:
    done = run_cli("adapters", "metrics", env={"PATH": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("tackroom_adapter_info")]
    assert len(lines) == len(resolve_builtins())
    claude_hash = resolve_builtins()["claude-code"].hash
    expected = (
        f'tackroom_adapter_info{{adapter="claude-code",family="claude-code",hash="{claude_hash}",'
        'client_version="unknown"} 1'
    )
    assert expected in lines


def test_metrics_reads_the_client_version(tmp_path: Path, config_dir: Path) -> None:
    fake = tmp_path / "claude"
    fake.write_text("#!/bin/sh\necho '9.8.7 (Claude Code)'\n", encoding="utf-8")
    fake.chmod(0o755)
    (config_dir / "tackroom.toml").write_text(
        f'[adapter.claude-code]\nexecutable = "{fake}"\n', encoding="utf-8"
    )
    done = run_cli("adapters", "metrics")
    assert 'adapter="claude-code"' in done.stdout and 'client_version="9.8.7"' in done.stdout
    # 9.8.7 is no version claude-code was verified with: a drift sample names both.
    verified = resolve_builtins()["claude-code"].verified_with
    assert f'tackroom_adapter_drift{{adapter="claude-code",installed="9.8.7",verified="{verified}"}} 1' in (
        done.stdout.splitlines()
    )
    assert done.stdout.count("tackroom_adapter_drift{") == 1


def test_metrics_show_no_drift_for_a_previously_verified_client(tmp_path: Path, config_dir: Path) -> None:
    previous = resolve_builtins()["claude-code"].effective["previously_verified"][0]
    fake = tmp_path / "claude"
    fake.write_text(f"#!/bin/sh\necho '{previous} (Claude Code)'\n", encoding="utf-8")
    fake.chmod(0o755)
    (config_dir / "tackroom.toml").write_text(
        f'[adapter.claude-code]\nexecutable = "{fake}"\n', encoding="utf-8"
    )
    done = run_cli("adapters", "metrics")
    assert f'client_version="{previous}"' in done.stdout and "tackroom_adapter_drift{" not in done.stdout


def test_the_quick_listing_answers_as_the_full_command_does(config_dir: Path) -> None:
    """``adapters list --json`` is answered without the CLI framework, with the full command's output."""
    import subprocess
    import sys

    from typer.testing import CliRunner

    from tackroom.cli.app import app

    (config_dir / "adapters.d" / "10.toml").write_text(
        '[adapter.claude-x]\nextends = "claude-code"\nexecutable = "/x"\n', encoding="utf-8"
    )
    quick = run_cli("adapters", "list", "--json")
    assert quick.returncode == 0, quick.stderr
    full = CliRunner().invoke(app, ["adapters", "list", "--json"])
    assert full.exit_code == 0, full.output
    assert quick.stdout == full.stdout
    probe = (
        "import contextlib, io, sys\n"
        "from tackroom.cli.quick import adapters_quickly\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert adapters_quickly(['list', '--json'])\n"
        "    assert not adapters_quickly(['list']) and not adapters_quickly(['list', '--json', '--help'])\n"
        "print([m for m in ('typer', 'rich', 'pydantic', 'asyncio') if m in sys.modules])\n"
    )
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert found.stdout.strip() == "[]", found.stderr
    helped = run_cli("adapters", "list", "--json", "--help")  # left to the full command
    assert helped.returncode == 0 and "Every adapter" in helped.stdout


def test_render_shows_a_chatgpt_sign_in_as_the_run_would_take_it(tmp_path: Path) -> None:
    """``--auth``/``--credentials`` render as a run would: codex signed in with ChatGPT takes the ChatGPT
    backend route, its tokens nowhere in the output (issue 26 item 17)."""
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    access = "eyJhbGciOiJub25lIn0.eyJSRU5ERVJDSEFUR1BUIjoxfQ.c2ln"
    (home / ".codex" / "auth.json").write_text(json.dumps({"tokens": {"access_token": access}}))
    args = ["adapters", "render", "codex", "--base-url", "http://127.0.0.1:1", "--workdir", str(tmp_path)]
    env = {"HOME": str(home), "OPENAI_API_KEY": ""}
    done = run_cli(*args, "--credentials", "--json", env=env)
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert plan["auth"] == "oauth"
    assert "model_providers.tackroom.base_url=http://127.0.0.1:1/backend-api/codex" in plan["argv"]
    assert access not in done.stdout + done.stderr
    refused = run_cli(*args, "--auth", "oauth", env=env)
    assert refused.returncode == 1 and "add --credentials to use the sign-in in" in refused.stderr
    none = run_cli("adapters", "render", "aider", "--base-url", "http://127.0.0.1:1", "--auth", "oauth")
    assert none.returncode == 1 and "[adapter.aider.model_endpoint.oauth]" in none.stderr
