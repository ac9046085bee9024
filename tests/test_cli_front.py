"""The CLI's front door: ``tackroom`` alone, ``--help`` by what a user wants to do, shell completion."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from clikit import run_cli
from tackroom.cli.app import COMMANDS

PANELS = ("Run", "Configure", "Prove", "Observe", "Evaluate")


def _panels(text: str) -> dict[str, list[str]]:
    """Each help panel's title and the command names listed in it, in order."""
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        title = re.match(r"^╭─ (\w+) ─", line)
        if title:
            current = found.setdefault(title.group(1), [])
        elif line.startswith("╰"):
            current = None
        elif current is not None:
            name = re.match(r"^│ ([a-z]+)\s", line)
            if name:
                current.append(name.group(1))
    return found


def test_tackroom_alone_shows_the_commands_by_task_and_where_to_start() -> None:
    done = run_cli(env={"COLUMNS": "200"})
    assert done.returncode in (0, 2), done.stderr  # Click's no_args_is_help exits 2 on newer releases
    shown = done.stdout + done.stderr
    panels = _panels(shown)
    assert [p for p in panels if p in PANELS] == list(PANELS)
    assert sorted(name for p in PANELS for name in panels[p]) == sorted(COMMANDS)
    assert panels["Run"][0] == "run"
    assert 'tackroom run claude-code "Say hello" --mock-text' in " ".join(shown.split())


def test_help_lists_every_command_once_under_its_panel() -> None:
    done = run_cli("--help", env={"COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    panels = _panels(done.stdout)
    for name, (_, _, panel) in COMMANDS.items():
        assert name in panels[panel], (name, panel)
    listed = [name for names in panels.values() for name in names]
    assert len(listed) == len(set(listed))


def _complete(words: str, home: Path) -> list[str]:
    """What bash completes for ``words`` (the last one being typed), through the script
    ``--install-completion`` installed, sourced in a real bash."""
    script = home / ".bash_completions" / "tackroom.sh"
    bin_dir = str(Path(sys.executable).parent)
    shell = (
        f"source {script}\n"
        f"COMP_WORDS=({words}); COMP_CWORD={len(words.split()) - 1}\n"
        "_tackroom_completion tackroom\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    env = {**os.environ, "HOME": str(home), "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        ["bash", "--norc", "-c", shell], capture_output=True, text=True, env=env, timeout=60, check=True
    )
    return done.stdout.split()


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_bash_completion_installs_and_completes_commands_and_options(tmp_path: Path) -> None:
    tackroom = Path(sys.executable).with_name("tackroom")
    env = {**os.environ, "HOME": str(tmp_path), "SHELL": "/bin/bash"}
    done = subprocess.run(
        [str(tackroom), "--install-completion", "bash"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "tackroom.sh" in (tmp_path / ".bashrc").read_text(encoding="utf-8")
    assert _complete("tackroom ru", tmp_path) == ["run", "runs"]
    assert _complete("tackroom profile re", tmp_path) == ["render"]
    assert {"--mock", "--mock-text", "--mock-log"} <= set(_complete("tackroom run --mo", tmp_path))
