"""The hot commands' fixed costs, guarded without a clock (issue 24 item 4): the modules each imports.

Importing is most of what a quick command costs (Typer about 40 ms, Rich 15, pydantic and the
adapter schema over 100, asyncio 10), and a change that pulls something heavy onto a hot path
does so for every user on every call. Each command below runs as a user runs it, twice (the
first fills tackroom's caches, as any earlier command would); the second's imports, read from
``python -X importtime``, must hold none of what its path does not need, and at most a budget of
modules: today's count and a margin, so a few more modules pass and a heavy package does not.
``benchmarks/bench_fixed.py`` measures what the same commands cost in time.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from runkit import RECORDED

GOLDEN_LOGS = Path(__file__).parent / "golden" / "claude-code"
#: Imported by every command (the Python it runs on), so never a finding here.
_HEAVY_FOR_ALL = ("rich", "pydantic", "aiohttp", "genai_prices", "psycopg", "tomlkit", "anthropic", "openai")


def imported(args: list[str], cwd: Path) -> tuple[set[str], str]:
    """The modules ``tackroom ARGS`` imports on its second run, and that run's stdout."""
    argv = [sys.executable, "-X", "importtime", "-m", "tackroom", *args]
    for _ in range(2):
        done = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, timeout=120, check=False)
        assert done.returncode == 0, done.stderr[-3000:]
    lines = [line for line in done.stderr.splitlines() if line.startswith("import time:")]
    names = {line.rsplit("|", 1)[1].strip() for line in lines[1:]}  # the first line is the header
    return names, done.stdout


def check(names: set[str], forbidden: tuple[str, ...], budget: int) -> None:
    heavy = sorted(n for n in names if any(n == f or n.startswith(f"{f}.") for f in forbidden))
    assert not heavy, f"a hot command imports what its path does not need: {heavy}"
    assert len(names) <= budget, (
        f"{len(names)} modules imported, budget {budget}: a change pulled in more than a few modules"
    )


def test_the_adapter_listing(tmp_path: Path) -> None:
    names, out = imported(["adapters", "list", "--json"], tmp_path)
    assert '"name": "claude-code"' in out
    forbidden = (*_HEAVY_FOR_ALL, "typer", "asyncio", "ssl", "email", "http", "msgspec", "yaml", "tomli")
    check(names, (*forbidden, "sqlite3", "_sqlite3", "tomllib", "tackroom.families"), budget=112)


def test_a_usage_report_first_pass(tmp_path: Path) -> None:
    """The report reads the logs fresh each time (its index removed between runs); prices are derived
    in a child, never in the report's process."""
    projects = Path(os.environ["HOME"]) / ".claude" / "projects"
    projects.mkdir(parents=True)
    for case in ("claude-code-text", "claude-code-shell"):
        for log in (GOLDEN_LOGS / case).glob("**/*.jsonl"):
            target = projects / case / log.name
            target.parent.mkdir(exist_ok=True)
            target.write_bytes(log.read_bytes())
    index = Path(os.environ["XDG_DATA_HOME"]) / "tackroom"
    argv = [sys.executable, "-X", "importtime", "-m", "tackroom", "usage", "daily", "--json"]
    subprocess.run(argv, capture_output=True, cwd=tmp_path, timeout=120, check=True)
    for db in index.glob("state.db*"):
        db.unlink()
    done = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, timeout=120, check=True)
    names = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines()[1:] if "|" in line}
    assert '"daily"' in done.stdout
    check(names, (*_HEAVY_FOR_ALL, "typer", "asyncio", "ssl", "email", "http"), budget=280)


def test_a_json_run_of_a_fast_harness(config_dir: Path, tmp_path: Path) -> None:
    fake = tmp_path / "fake-claude"
    fake.write_text(f'#!/bin/sh\n[ "$1" = --version ] && echo "2.1.332 (Claude Code)" || cat {RECORDED}\n')
    fake.chmod(0o755)
    (config_dir / "adapters.d" / "fast.toml").write_text(
        f'[adapter.fast]\nextends = "claude-code"\nexecutable = "{fake}"\n', encoding="utf-8"
    )
    names, out = imported(["run", "fast", "say hi", "--mock-text", "hi", "--json"], tmp_path)
    assert '"ok": true' in out
    forbidden = (*_HEAVY_FOR_ALL, "typer", "tackroom.detect", "tackroom.gateway", "tackroom.profile.load")
    # The harness never calls the model and writes no session log: the mock's HTTP server (loaded on
    # its first connection) and the transcript reader (loaded for a log to read) never come.
    lazy = ("http", "email", "tackroom.mock._http", "tackroom.mock.dispatch", "msgspec")
    # No file to parse (a text answer, no project file, the adapters from their cache): no TOML parser.
    toml = ("tomli", "tomllib", "tackroom._toml")
    check(
        names,
        (*forbidden, *lazy, *toml, "yaml", "sqlite3", "tackroom.families.claude_code.transcripts"),
        budget=250,
    )


@pytest.mark.parametrize("targets", [["claude-code", "codex", "copilot", "opencode", "pi", "qwen"]])
def test_a_profile_render(tmp_path: Path, targets: list[str]) -> None:
    profile = tmp_path / "profile"
    (profile / "rules").mkdir(parents=True)
    (profile / "rules" / "style.md").write_text("# Style\n\nSmall functions.\n")
    (profile / "skills" / "tidy").mkdir(parents=True)
    (profile / "skills" / "tidy" / "SKILL.md").write_text(
        "---\nname: tidy\ndescription: Tidy up.\n---\nDo.\n"
    )
    args = [
        "profile",
        "render",
        *targets,
        "--profile",
        str(profile),
        "--into",
        str(tmp_path / "out"),
        "--json",
    ]
    names, _ = imported(args, tmp_path)
    heavy = ("aiohttp", "genai_prices", "psycopg", "anthropic", "openai", "asyncio", "msgspec", "sqlite3")
    # PyYAML only for a head that is more than plain words (tackroom.profile.frontmatter)
    # No stream is parsed: the families come for their engines, without their parsers and the events
    check(
        names,
        (*heavy, "typer", "rich", "yaml", "tackroom.run", "tackroom.gateway", "tackroom.trace"),
        budget=150,
    )
