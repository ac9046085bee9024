"""``tackroom profile render NAME... --into DIR --json`` is taken without Typer (issue 24 item 4),
exactly as the full command takes it: the same files, the same report, the same notes. Any other
form is left to the full command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clikit import run_cli
from tackroom.cli.app import app
from tackroom.cli.quick import parse_render
from tackroom.profile.model import Command, McpServer, Profile, Rule, Skill
from tackroom.profile.write import write_profile


@pytest.fixture
def profile(tmp_path: Path) -> Path:
    where = tmp_path / "profile"
    write_profile(
        Profile(
            rules=(Rule("style", "# Style\n\nSmall functions.\n"),),
            skills=(Skill("tidy", "Tidy up.", "Do.\n"),),
            commands=(Command("ship", "Ship it.", "Ship $ARGUMENTS\n"),),  # codex drops it: a note
            mcp=(McpServer("docs", command="npx", args=("-y", "docs-server")),),
        ),
        where,
    )
    return where


def test_the_options_it_takes_are_the_commands_own() -> None:
    from tackroom.cli.app import _command

    render = _command("profile").commands["render"]  # type: ignore[attr-defined]
    declared = {opt: param.name for param in render.params for opt in param.opts}
    assert {"--into", "--profile", "--scope", "--json"} <= set(declared)
    assert (
        declared["--profile"] == "profile" and next(p for p in render.params if p.name == "profile").multiple
    )


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(
    ("names", "extra"),
    [
        (["claude-code"], []),
        (["claude-code", "codex", "opencode", "codex"], []),
        (["codex"], ["--scope", "project"]),
    ],
    ids=["one", "several", "project"],
)
def test_a_quick_render_is_the_full_commands_render(
    profile: Path, tmp_path: Path, names: list[str], extra: list[str]
) -> None:
    def args(into: Path) -> list[str]:
        return [*names, "--profile", str(profile), f"--into={into}", "--json", *extra]

    quick_root, full_root = tmp_path / "quick", tmp_path / "full"
    assert parse_render(["render", *args(quick_root)]) is not None
    for _ in range(2):  # a first render, then one that changes nothing
        quick = run_cli("profile", "render", *args(quick_root), cwd=tmp_path)
        full = CliRunner().invoke(app, ["profile", "render", *args(full_root)])
        assert (quick.returncode, full.exit_code) == (0, 0), (quick.stderr, full.output)
        assert json.loads(quick.stdout.replace(str(quick_root), "ROOT")) == json.loads(
            full.stdout.replace(str(full_root), "ROOT")
        )
        assert quick.stderr == full.stderr
        assert _files(quick_root) == _files(full_root)
    assert "codex" not in names or "dropped command 'ship'" in quick.stderr


def test_an_unknown_adapter_is_the_same_error(profile: Path, tmp_path: Path) -> None:
    done = run_cli(
        "profile", "render", "no-such", "--profile", str(profile), "--into", "out", "--json", cwd=tmp_path
    )
    assert done.returncode == 1 and "no-such" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["render", "--into", "d", "--json"],  # no name: the project's harness, or the one detected
        ["render", "claude-code", "--into", "d"],  # a table
        ["render", "claude-code", "--json"],  # only the plan
        ["render", "claude-code", "--into", "d", "--json", "--check"],
        ["render", "claude-code", "--into", "d", "--json", "--gitignore"],
        ["render", "--all", "--into", "d", "--json"],
        ["render", "claude-code", "--into", "d", "--json", "--json"],
        ["render", "claude-code", "--into", "d", "--into", "e", "--json"],
        ["render", "claude-code", "--into", "d", "--json", "--scope", "team"],
        ["render", "claude-code", "--into", "--json"],
        ["render", "claude-code", "--into", "d", "--json", "--help"],
        ["render", "claude-code", "--into"],
        ["import", "claude-code", "--json"],
    ],
)
def test_what_it_does_not_take_is_left_to_the_full_command(args: list[str]) -> None:
    assert parse_render(args) is None


def test_into_an_existing_file_is_left_to_the_full_command(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    assert parse_render(["render", "codex", "--into", str(tmp_path / "file"), "--json"]) is None


def test_a_quick_render_loads_no_cli_framework(profile: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    probe = (
        "import contextlib, io, sys\n"
        "from tackroom.cli.quick import render_quickly\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    done = render_quickly(['render', 'codex', '--profile', {str(profile)!r}, "
        f"'--into', {str(tmp_path / 'out')!r}, '--json'])\n"
        "print(done, [m for m in ('typer', 'rich', 'click') if m in sys.modules])\n"
    )
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert found.stdout.strip() == "True []", found.stderr
