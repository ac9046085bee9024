"""Every example in the README and the documentation runs, against the mock, with the real harnesses.

One test per page runs the page's examples in order, in a scratch project of its own (a git
repository holding a ``CLAUDE.md`` and a copy of ``examples/``), with a home and an
``XDG_DATA_HOME`` of its own that sees the shared harness installs:

- a ``sh`` block runs in bash (``set -euo pipefail``) and must exit 0;
- a ``console`` block runs each ``$ command`` and holds its output (stdout and stderr) to the
  lines shown under it, whitespace aside, ``...`` standing for any text (as doctest's ELLIPSIS);
- ``python`` blocks run as one script, after the page's shell blocks, and call any ``test_*``
  function they define;
- a ``toml`` block whose first line is a comment naming a file (``# ~/.config/tackroom/...toml``,
  ``# 20-mine.toml``) is that file, written before the blocks after it run; any other must parse;
- ``text`` and ``json`` blocks are shown, not run (a command's synopsis, an output).

A block that cannot run here says why on the line before it (``<!-- not run: why -->``); each
one is a skipped test of its own, with that reason.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(
    [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")],
    key=lambda p: str(p.relative_to(ROOT)),
)
GENERATED = {"docs/reference/cli.md", "docs/reference/api.md", "docs/reference/adapter-schema.md"}
_FENCE = re.compile(r"^```(\w*)")
_NOT_RUN = re.compile(r"^<!-- not run: (.+?) -->$")
_FILE = re.compile(r"^# (~/|\./)?([\w./-]+\.toml)$")


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    lang: str
    body: str
    not_run: str | None


def blocks(page: Path) -> list[Block]:
    rel = str(page.relative_to(ROOT))
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    at = 0
    while at < len(lines):
        fence = _FENCE.match(lines[at])
        if fence is None:
            at += 1
            continue
        end = at + 1
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        before = _NOT_RUN.match(lines[at - 1]) if at else None
        body = "\n".join(lines[at + 1 : end]) + "\n"
        found.append(Block(rel, at + 1, fence.group(1), body, before.group(1) if before else None))
        at = end + 1
    return found


def runnable(page: Path) -> bool:
    return any(b.lang in ("sh", "console", "python", "toml") and not b.not_run for b in blocks(page))


CHECKED = [p for p in PAGES if str(p.relative_to(ROOT)) not in GENERATED and runnable(p)]
NOT_RUN = [b for p in PAGES for b in blocks(p) if b.not_run]


@dataclass
class Scenario:
    work: Path
    home: Path
    env: dict[str, str]

    def shell(self, script: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-c", "set -euo pipefail\n" + script],
            cwd=self.work,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )


def scenario(tmp_path: Path, harness_data: Path) -> Scenario:
    """A project of its own (git, a CLAUDE.md, the example suite), a home and a data
    directory of its own (the harness installs shared), a fake ``xdg-open``, ``.venv`` as here."""
    work, home, data, bin_dir = (tmp_path / n for n in ("work", "home", "data", "bin"))
    for directory in (work, home, bin_dir, data / "tackroom"):
        directory.mkdir(parents=True)
    (data / "tackroom" / "harnesses").symlink_to(harness_data / "tackroom" / "harnesses")
    shutil.copytree(ROOT / "examples", work / "examples")
    (work / "CLAUDE.md").write_text("# Project rules\n\nRun the tests before you commit.\n", encoding="utf-8")
    (work / ".venv").symlink_to(Path(sys.executable).parent.parent)
    opener = bin_dir / "xdg-open"
    opener.write_text('#!/bin/sh\ntest -f "$1"\n', encoding="utf-8")  # a browser here: the file must exist
    opener.chmod(0o755)
    env = {
        "PATH": os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), os.environ["PATH"]]),
        "HOME": str(home),
        "XDG_DATA_HOME": str(data),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "LANG": "C.UTF-8",
        "TZ": "UTC",
        "COLUMNS": "120",
        "GIT_AUTHOR_NAME": "Docs",
        "GIT_AUTHOR_EMAIL": "docs@example.invalid",
        "GIT_COMMITTER_NAME": "Docs",
        "GIT_COMMITTER_EMAIL": "docs@example.invalid",
        "PYTHONDONTWRITEBYTECODE": "1",
        "TACKROOM_NO_RESIDENT_START": "1",  # each command by itself, nothing left running
    }
    found = Scenario(work, home, env)
    done = found.shell("git init -q . && git add -A && git commit -qm 'a project'")
    assert done.returncode == 0, done.stderr
    return found


def matches(expected: str, got: str) -> bool:
    """``got`` is ``expected``, whitespace aside, each ``...`` standing for any text."""
    squeeze = re.compile(r"\s+")
    parts = [re.escape(squeeze.sub("", part)) for part in expected.split("...")]
    return re.fullmatch(".*".join(parts), squeeze.sub("", got), re.DOTALL) is not None


def run_console(block: Block, where: Scenario) -> None:
    commands: list[tuple[str, list[str]]] = []
    for line in block.body.splitlines():
        if line.startswith("$ "):
            commands.append((line[2:], []))
        elif commands:
            commands[-1][1].append(line)
    assert commands, f"{block.page}:{block.line}: a console block without a `$ command`"
    for command, shown in commands:
        done = where.shell(command)
        got = done.stdout + done.stderr
        assert matches("\n".join(shown), got), (
            f"{block.page}:{block.line}: `{command}` printed\n{got[-3000:]}\nwhere the page shows\n"
            + "\n".join(shown)
        )


def write_file(block: Block, where: Scenario) -> bool:
    """A toml block that is a file: written where its first line says; False for any other."""
    first, _, rest = block.body.partition("\n")
    named = _FILE.match(first.strip())
    if named is None:
        return False
    base = where.home if named.group(1) == "~/" else where.work
    path = base / named.group(2)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(rest, encoding="utf-8")
    return True


@pytest.mark.parametrize("page", CHECKED, ids=[str(p.relative_to(ROOT)) for p in CHECKED])
def test_every_example_on_the_page_runs(page: Path, tmp_path: Path, harness_data: Path) -> None:
    where = scenario(tmp_path, harness_data)
    python: list[str] = []
    for block in blocks(page):
        if block.not_run:
            continue
        if block.lang == "toml":
            if not write_file(block, where):
                tomllib.loads(block.body)  # a fragment shown: it must at least be TOML
        elif block.lang == "sh":
            done = where.shell(block.body)
            assert done.returncode == 0, (
                f"{block.page}:{block.line}: exit {done.returncode}\n{block.body}\n"
                f"stdout: {done.stdout[-2000:]}\nstderr: {done.stderr[-3000:]}"
            )
        elif block.lang == "console":
            run_console(block, where)
        elif block.lang == "python":
            python.append(f"# {block.page}:{block.line}\n{block.body}")
    if python:
        script = "\n".join(python) + (
            "\nfor _name, _value in list(globals().items()):\n"
            "    if _name.startswith('test_') and callable(_value):\n"
            "        _value()\n"
        )
        (where.work / "example.py").write_text(script, encoding="utf-8")
        done = where.shell(f"{sys.executable} example.py")
        assert done.returncode == 0, f"{page.relative_to(ROOT)}: python\nstdout: {done.stdout[-2000:]}\n" + (
            f"stderr: {done.stderr[-4000:]}"
        )


@pytest.mark.parametrize("block", NOT_RUN, ids=[f"{b.page}:{b.line}" for b in NOT_RUN])
def test_an_example_not_run_here_says_why(block: Block) -> None:
    pytest.skip(f"{block.page}:{block.line}: {block.not_run}")


def test_the_conventions_find_what_they_should() -> None:
    """The runner's own parts, on a page of its own making."""
    assert matches("error: ...10.toml:2: unknown key", "error: /h/x/10.toml:2:  unknown key\n")
    assert not matches("exit 0", "exit 1")
    pretty = '{\n  "root": "/w",\n  "best": "claude-code",\n  "x": 1\n}'
    assert matches('{"root": "...", "best": "claude-code", ...}', pretty)
    assert [b.lang for b in blocks(ROOT / "docs" / "tour.md")][:1] == ["sh"]
    assert CHECKED and all(p.suffix == ".md" for p in CHECKED)
