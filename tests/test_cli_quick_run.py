"""``tackroom run``'s common forms are taken without Typer (issue 24 item 4), exactly as Typer takes them.

The quick path parses the options :mod:`tackroom.cli.run` declares and checks their values as it
does; anything else (help, a third word, an option it does not take, a value it would refuse) is
left to the full command, which says what is wrong. Runs go through the scripted fake harness, a
real subprocess, both ways.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from clikit import run_cli
from runkit import RECORDED, RECORDED_TEXT, fake_adapter
from tackroom.cli.app import app
from tackroom.cli.quick import _RUN_OPTIONS, parse_run

#: What differs between two runs of the same thing.
_PER_RUN = ("run_dir", "started_at", "duration_s", "trace", "events", "argv", "workdir")


def test_the_options_it_takes_are_the_commands_own() -> None:
    """Each option this path takes is one ``run`` declares, of the same kind (flag, value, repeated)."""
    from tackroom.cli.app import _command

    declared: dict[str, tuple[str, str]] = {}
    for param in _command("run").params:
        kind = "flag" if getattr(param, "is_flag", False) else "many" if param.multiple else "value"
        for opt in param.opts:
            declared[opt] = (str(param.name), kind)
    assert {opt: declared.get(opt) for opt in _RUN_OPTIONS} == _RUN_OPTIONS
    assert set(declared) - set(_RUN_OPTIONS) == {"--profile", "words"}


def _same(quick: dict[str, Any], full: dict[str, Any]) -> None:
    for key in _PER_RUN:
        quick.pop(key, None)
        full.pop(key, None)
    assert quick == full


@pytest.mark.parametrize(
    "extra",
    [
        ["--json"],
        ["--json", "--timeout=30", "-m", "sonnet", "--option", "max_turns=3", "--no-profile"],
        ["--mock-text", "from the mock", "--json", "--network", "host", "--home", "isolated"],
        ["--mock-text", "from the mock", "--json", "--auth", "api-key"],
    ],
    ids=["plain", "options", "mock", "auth"],
)
def test_a_quick_run_is_the_full_commands_run(config_dir: Path, tmp_path: Path, extra: list[str]) -> None:
    fake_adapter(config_dir, "--replay", str(RECORDED))
    args = ["fake", "say hi", *extra, "--workdir", str(tmp_path)]
    assert parse_run(args) is not None
    quick = run_cli("run", *args)
    full = CliRunner().invoke(app, ["run", *args])
    assert quick.returncode == full.exit_code, (quick.stderr, full.output)
    ours, theirs = json.loads(quick.stdout), json.loads(full.stdout)
    # The same argv either way (the fake refuses --model, so that run fails: the same way).
    assert ours["argv"][3:] == theirs["argv"][3:]
    assert "--model" in ours["argv"] if "-m" in extra else ours["final_text"] == RECORDED_TEXT
    _same(ours, theirs)


def test_a_quick_run_exits_with_the_harness_code(config_dir: Path, tmp_path: Path) -> None:
    fake_adapter(config_dir, "--exit-code", "3", "--stderr", "broken")
    done = run_cli("run", "fake", "say hi", "--workdir", str(tmp_path), "--events")
    assert done.returncode == 3
    last = json.loads(done.stdout.splitlines()[-1])
    assert last["type"] == "result" and last["exit_code"] == 3


@pytest.mark.parametrize(
    "args",
    [
        ["fake"],  # a lone word: the project's harness, or a missing prompt
        ["fake", "say", "hi"],
        ["fake", "  "],
        ["fake", "hi", "--help"],
        ["fake", "hi", "--profile", "p"],
        ["fake", "hi", "--json", "--json"],
        ["fake", "hi", "--json=yes"],
        ["fake", "hi", "--mock-text", "a", "--mock-text", "b"],
        ["fake", "hi", "--mock-text", "a", "--base-url", "http://127.0.0.1:9"],
        ["fake", "hi", "--timeout", "0"],
        ["fake", "hi", "--timeout", "nan"],
        ["fake", "hi", "--timeout", "soon"],
        ["fake", "hi", "--network", "lan"],
        ["fake", "hi", "--home", "mine"],
        ["fake", "hi", "--auth", "token"],
        ["fake", "hi", "--base-url", "ftp://x"],
        ["fake", "hi", "--workdir", "/no/such/dir"],
        ["fake", "hi", "--mock", "/no/such/script.toml"],
        ["fake", "hi", "--model"],
        ["fake", "hi", "-mx"],
        ["fake", "hi", "--", "--json"],
        ["fake", "hi", "--bogus"],
    ],
)
def test_what_it_does_not_take_is_left_to_the_full_command(args: list[str]) -> None:
    assert parse_run(args) is None


def test_a_quick_run_loads_no_cli_framework(config_dir: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    fake_adapter(config_dir, "--replay", str(RECORDED))
    probe = (
        "import contextlib, io, sys\n"
        "from tackroom.cli.quick import run_quickly\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        f"    code = run_quickly(['fake', 'hi', '--json', '--workdir', {str(tmp_path)!r}])\n"
        "print(code, [m for m in ('typer', 'rich') if m in sys.modules])\n"
    )
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert found.stdout.strip() == "0 []", found.stderr
