"""Hostile repositories and homes for ``profile render --scope project`` and ``profile import``.

Each case plants what an attacker would (a link to the user's own config, a
dangling link, a link named like tackroom's ownership file, names that climb
out of the profile) and runs the real CLI as a user would: the command fails
with one typed error, no traceback, and nothing outside its place is written
or read.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clikit import run_cli

MARKERS = Path(__file__).resolve().parent.parent / "profiles" / "markers"
WIDE = {"COLUMNS": "300"}


def snapshot(*roots: Path) -> dict[str, bytes]:
    """Every file under ``roots`` (links not followed), to prove nothing changed."""
    found = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.is_symlink():
                found[str(path)] = b"-> " + str(path.readlink()).encode()
            elif path.is_file():
                found[str(path)] = path.read_bytes()
    return found


def failed_cleanly(done: object) -> str:
    stderr: str = done.stderr  # type: ignore[attr-defined]
    assert done.returncode == 1, stderr  # type: ignore[attr-defined]
    assert stderr.startswith("tackroom: error: ") and "Traceback" not in stderr, stderr
    return stderr


@pytest.fixture
def user_claude(isolated_home: Path) -> Path:
    """The user's own ~/.claude, with settings a repository must never reach."""
    claude = isolated_home / ".claude"
    claude.mkdir()
    (claude / "settings.json").write_text('{"theme": "dark"}\n', encoding="utf-8")
    return claude


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    return path


def render_project(repo: Path) -> object:
    return run_cli(
        "profile",
        "render",
        "claude-code",
        "--scope",
        "project",
        "--profile",
        str(MARKERS),
        cwd=repo,
        env=WIDE,
    )


# -- render --scope project ---------------------------------------------------------------------------


def test_a_claude_link_to_the_users_config_is_not_followed(repo: Path, user_claude: Path) -> None:
    (repo / ".claude").symlink_to(user_claude)
    before = snapshot(user_claude, repo)
    stderr = failed_cleanly(render_project(repo))
    assert "symbolic link" in stderr and str(repo / ".claude") in stderr
    assert snapshot(user_claude, repo) == before
    assert json.loads((user_claude / "settings.json").read_text()) == {"theme": "dark"}


def test_a_dangling_rules_link_creates_nothing_outside(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside" / "planted.md"
    outside.parent.mkdir()
    (repo / "CLAUDE.md").symlink_to(outside)
    before = snapshot(repo)
    stderr = failed_cleanly(render_project(repo))
    assert str(repo / "CLAUDE.md") in stderr
    assert not outside.exists() and snapshot(repo) == before


def test_a_link_named_like_the_ownership_file_rewrites_nothing(repo: Path, tmp_path: Path) -> None:
    unrelated = tmp_path / "unrelated.json"
    unrelated.write_text('{"mine": true}\n', encoding="utf-8")
    (repo / ".tackroom-owned.json").symlink_to(unrelated)
    failed_cleanly(render_project(repo))
    assert unrelated.read_text() == '{"mine": true}\n'
    assert sorted(p.name for p in repo.iterdir()) == [".tackroom-owned.json"]


def test_a_link_deeper_in_the_target_is_not_followed(repo: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo / ".claude").mkdir()
    (repo / ".claude" / "skills").symlink_to(elsewhere)
    failed_cleanly(render_project(repo))
    assert list(elsewhere.iterdir()) == []
    assert sorted(p.name for p in repo.rglob("*")) == [".claude", "skills"]


def test_a_clean_repository_renders(repo: Path) -> None:
    done = render_project(repo)
    assert done.returncode == 0, done.stderr  # type: ignore[attr-defined]
    assert (repo / "CLAUDE.md").is_file() and (repo / ".tackroom-owned.json").is_file()


# -- import -------------------------------------------------------------------------------------------


def import_from(home: Path, into: Path, cwd: Path, *more: str) -> object:
    return run_cli(
        "profile", "import", "claude-code", "--from", str(home), "--into", str(into), *more, cwd=cwd, env=WIDE
    )


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


HOSTILE_NAMES = {
    "agent frontmatter name": (
        ".claude/agents/a.md",
        "---\nname: ../../../escaped\ndescription: d\n---\nbody\n",
    ),
    "skill frontmatter name": (
        ".claude/skills/s/SKILL.md",
        "---\nname: ../../../escaped\ndescription: d\n---\nbody\n",
    ),
    "MCP server key": (
        ".claude/.claude.json",
        json.dumps({"mcpServers": {"../../../escaped": {"command": "x", "args": []}}}),
    ),
    "hook name": (
        ".claude/settings.json",
        json.dumps(
            {
                "hooks": {
                    "Stop": [
                        {"hooks": [{"type": "command", "command": "x # tackroom:hook ../../../escaped"}]}
                    ]
                }
            }
        ),
    ),
}


@pytest.mark.parametrize("case", list(HOSTILE_NAMES))
def test_import_refuses_names_that_would_leave_the_profile(tmp_path: Path, case: str) -> None:
    """Dropped by name with why (the rest imported); with --strict nothing is written at all."""
    rel, text = HOSTILE_NAMES[case]
    home = tmp_path / "a" / "b" / "home"
    write(home / rel, text)
    into = tmp_path / "a" / "b" / "into" / "profile"
    before = snapshot(tmp_path)
    stderr = failed_cleanly(import_from(home, into, tmp_path, "--strict"))
    assert "escaped" in stderr and "profile name" in stderr
    assert snapshot(tmp_path) == before
    done = import_from(home, into, tmp_path)
    assert done.returncode == 0, done.stderr  # type: ignore[attr-defined]
    assert "escaped" in done.stdout and "profile name" in done.stdout  # type: ignore[attr-defined]
    assert not list(tmp_path.rglob("escaped*"))


def test_import_never_reads_through_a_link(tmp_path: Path) -> None:
    secret = tmp_path / "aws" / "credentials"
    write(secret, "aws_secret_access_key = TOPSECRET\n")
    home = tmp_path / "home"
    write(home / ".claude/skills/s/SKILL.md", "---\nname: s\ndescription: d\n---\nbody\n")
    (home / ".claude/skills/s/creds.txt").symlink_to(secret)
    into = tmp_path / "into"
    stderr = failed_cleanly(import_from(home, into, tmp_path, "--strict"))
    assert ".claude/skills/s/creds.txt" in stderr and "TOPSECRET" not in stderr
    assert not into.exists()
    done = import_from(home, into, tmp_path)  # the skill imported, the link out named, never read
    said = done.stdout + done.stderr  # type: ignore[attr-defined]
    assert done.returncode == 0 and ".claude/skills/s/creds.txt" in said and "out of" in said, said
    assert "TOPSECRET" not in said
    assert (into / "skills" / "s" / "SKILL.md").is_file()
    assert not any(b"TOPSECRET" in p.read_bytes() for p in into.rglob("*") if p.is_file())


def test_import_into_a_planted_link_writes_nothing_outside(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write(home / ".claude/agents/a.md", "---\nname: a\ndescription: d\n---\nbody\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    into = tmp_path / "repo" / ".tackroom" / "profile"
    into.mkdir(parents=True)
    (into / "agents").symlink_to(outside)
    failed_cleanly(import_from(home, into, tmp_path))
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize(
    ("rel", "text"),
    [
        (".claude/.claude.json", "{not json"),
        (".claude/.claude.json", '{"mcpServers": []}'),
        (".claude/.claude.json", '{"mcpServers": {"x": {"command": 5, "args": "no"}}}'),
        (".claude/settings.json", '{"hooks": {"Stop": [1, "x", {"hooks": 3}]}}'),
        (".claude/settings.json", "[" * 50_000),
        (".claude/agents/a.md", "---\nname: [unclosed\n---\n"),
        (".claude/agents/a.md", "---\nname: a\ndescription: {x: 1}\n---\n"),
        (".claude/CLAUDE.md", "\udcff"),
    ],
)
def test_import_of_a_corrupt_native_file_is_one_typed_error(tmp_path: Path, rel: str, text: str) -> None:
    home = tmp_path / "home"
    path = home / rel
    path.parent.mkdir(parents=True)
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    into = tmp_path / "into"
    done = import_from(home, into, tmp_path)
    assert "Traceback" not in done.stderr, done.stderr  # type: ignore[attr-defined]
    if done.returncode == 0:  # a shape tackroom reads as nothing is fine; a crash is not
        return
    stderr = failed_cleanly(done)
    assert str(path) in stderr or str(home) in stderr
    assert not into.exists()


def test_paths_that_look_like_markup_are_printed_as_they_are(tmp_path: Path) -> None:
    repo = tmp_path / "[/x]" / "[bold]repo"
    repo.mkdir(parents=True)
    done = render_project(repo)
    assert done.returncode == 0, done.stderr  # type: ignore[attr-defined]
    assert f"wrote {repo / 'CLAUDE.md'}" in done.stdout  # type: ignore[attr-defined]
    home = tmp_path / "[red]home"
    write(home / ".claude/agents/a.md", "---\nname: a\ndescription: d\n---\nbody\n")
    into = tmp_path / "[/into]"
    done = import_from(home, into, tmp_path)
    assert done.returncode == 0 and str(into) in done.stdout, done.stderr  # type: ignore[attr-defined]
