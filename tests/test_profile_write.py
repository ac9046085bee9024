"""Writing a render: all or nothing, atomic, and nothing of the user's lost.

A render replaces each file atomically and restores the ones it replaced when
a later write fails; it never replaces a same-name entry the user wrote, keeps
the comments of a JSONC settings file and of codex's ``config.toml``, and
turns a corrupt settings or ownership file into one typed error naming it,
with nothing written.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tackroom.adapters.resolve import resolve_builtins
from tackroom.errors import ConfigError, ProfileError, UnsafePathError
from tackroom.profile.load import load_profile
from tackroom.profile.model import McpServer, Profile, Rule, Skill
from tackroom.profile.render import plan_render, write
from tackroom.profile.write import write_profile

MARKERS = Path(__file__).parent / "profiles" / "markers"
SERVER = McpServer("trmcp", command="python3", args=("server.py",))


def files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def render(profile: Profile, adapter: str, root: Path) -> None:
    write(plan_render(profile, resolve_builtins()[adapter], root=root))


# -- all or nothing ----------------------------------------------------------------------------------


def put_profile(root: Path, rule: str, big: int = 0) -> Path:
    (root / "rules").mkdir(parents=True, exist_ok=True)
    (root / "rules" / "a.md").write_text(rule, encoding="utf-8")
    if big:
        skill = root / "skills" / "big"
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text("---\nname: big\ndescription: d\n---\nbody\n", encoding="utf-8")
        (skill / "data.bin").write_bytes(b"x" * big)
    return root


def limited_render(profile: Path, into: Path, limit: int) -> subprocess.CompletedProcess[str]:
    """The real CLI, in a process whose files may not grow past ``limit`` bytes (writes fail with EFBIG)."""

    def limit_files() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of being killed
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(
        [
            sys.executable,
            "-m",
            "tackroom",
            "profile",
            "render",
            "claude-code",
            *("--profile", str(profile)),
            *("--into", str(into)),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        preexec_fn=limit_files,
        timeout=120,
        check=False,
    )


def test_a_render_that_fails_half_way_restores_everything(tmp_path: Path) -> None:
    into = tmp_path / "home"
    first = put_profile(tmp_path / "v1", "version one\n")
    assert limited_render(first, into, 2**30).returncode == 0
    before = files(into)
    second = put_profile(tmp_path / "v2", "version two\n", big=2 * 2**20)
    done = limited_render(second, into, 2**20)
    assert done.returncode == 1 and done.stderr.startswith("tackroom: error: could not write"), done.stderr
    assert "data.bin" in done.stderr and "Traceback" not in done.stderr
    assert files(into) == before  # CLAUDE.md had been replaced before the failure: it is back
    assert not (into / ".claude" / "skills").exists()  # and the directories made for the render are gone
    again = limited_render(second, into, 2**30)  # the next render is not refused as "not owned"
    assert again.returncode == 0, again.stderr
    assert "version two" in (into / ".claude" / "CLAUDE.md").read_text()


def test_an_ownership_file_that_cannot_be_written_stops_the_render_before_anything(tmp_path: Path) -> None:
    (tmp_path / ".tackroom-owned.json").mkdir()
    profile = Profile(rules=(Rule("a", "text\n"),))
    with pytest.raises(UnsafePathError, match="not a regular file"):
        render(profile, "claude-code", tmp_path)
    assert files(tmp_path) == {}


def test_files_are_replaced_by_rename_keeping_their_mode(tmp_path: Path) -> None:
    render(Profile(rules=(Rule("a", "one\n"),)), "claude-code", tmp_path)
    target = tmp_path / ".claude" / "CLAUDE.md"
    target.chmod(0o640)
    reader = tmp_path / "reader-link"
    os.link(target, reader)  # a reader holding the old file sees the old file, whole
    render(Profile(rules=(Rule("a", "two\n"),)), "claude-code", tmp_path)
    assert "two" in target.read_text() and "one" in reader.read_text()
    assert target.stat().st_mode & 0o777 == 0o640
    assert not list(tmp_path.rglob(".tackroom-*.tmp"))


# -- the user's settings -----------------------------------------------------------------------------


CODEX_CONFIG = """\
# my codex settings: keep this comment
model = "o3"  # the model I like

[mcp_servers.mine]
# my own server
command = "my-server"
"""


def test_merging_into_codex_config_keeps_comments(tmp_path: Path) -> None:
    config = tmp_path / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(CODEX_CONFIG, encoding="utf-8")
    render(Profile(mcp=(SERVER,)), "codex", tmp_path)
    text = config.read_text()
    assert text.startswith(CODEX_CONFIG)
    data = tomllib.loads(text)
    assert data["mcp_servers"]["mine"] == {"command": "my-server"}
    assert data["mcp_servers"]["trmcp"]["command"] == "python3"
    render(Profile(mcp=(SERVER,)), "codex", tmp_path)  # again: unchanged, still owned
    assert config.read_text() == text


GEMINI_SETTINGS = """\
{
  // the user's settings, with comments and a trailing comma
  "theme": "dark", /* keep */
  "mcpServers": {
    "mine": {"command": "mine"}, // mine
  },
}
"""


def test_merging_into_jsonc_settings_keeps_comments(tmp_path: Path) -> None:
    from tackroom.profile import jsonc

    settings = tmp_path / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(GEMINI_SETTINGS, encoding="utf-8")
    profile = load_profile([MARKERS], harnesses=resolve_builtins())
    render(profile, "gemini", tmp_path)
    text = settings.read_text()
    for comment in ("// the user's settings", "/* keep */", "// mine"):
        assert comment in text
    data = jsonc.loads(text)
    assert data["theme"] == "dark" and data["mcpServers"]["mine"] == {"command": "mine"}
    assert data["mcpServers"]["trmcp"]["command"] == "python3" and data["hooks"]
    render(profile, "gemini", tmp_path)
    assert settings.read_text() == text


def test_a_comment_inside_a_value_tackroom_replaces_is_never_dropped(tmp_path: Path) -> None:
    settings = tmp_path / ".gemini" / "settings.json"
    settings.parent.mkdir()
    render(Profile(mcp=(SERVER,)), "gemini", tmp_path)
    data = json.loads(settings.read_text())
    text = json.dumps(data, indent=2).replace('"command": "python3"', '"command": /* why */ "python3"')
    settings.write_text(text)
    with pytest.raises(ProfileError, match="comment"):
        render(Profile(mcp=(McpServer("trmcp", command="node"),)), "gemini", tmp_path)
    assert settings.read_text() == text


@pytest.mark.parametrize(
    ("adapter", "rel", "text", "line"),
    [
        ("gemini", ".gemini/settings.json", '{\n  "a": 1,\n  oops\n}', 3),
        ("gemini", ".gemini/settings.json", "[" * 100_000, 1),
        ("claude-code", ".claude/.claude.json", '{"a": 1}\n\xff', 2),
        ("codex", ".codex/config.toml", 'model = "o3"\n[mcp_servers\n', 2),
        ("codex", ".codex/config.toml", "x = " + "[" * 5000, None),
    ],
)
def test_a_corrupt_settings_file_is_a_config_error_naming_it(
    tmp_path: Path, adapter: str, rel: str, text: str, line: int | None
) -> None:
    path = tmp_path / rel
    path.parent.mkdir()
    path.write_bytes(
        text.encode("utf-8", "surrogateescape") if "\xff" not in text else text.encode("latin-1")
    )
    before = files(tmp_path)
    with pytest.raises(ConfigError) as caught:
        render(Profile(mcp=(SERVER,), rules=(Rule("a", "x\n"),)), adapter, tmp_path)
    [problem] = caught.value.problems
    assert problem.file == str(path) and problem.line == line
    assert files(tmp_path) == before


@pytest.mark.parametrize("text", ["not json", "[]", '{"version": 2, "files": 5}', '{"/x": 5}', "[" * 100_000])
def test_a_corrupt_ownership_file_is_an_error_naming_it(tmp_path: Path, text: str) -> None:
    owned = tmp_path / ".tackroom-owned.json"
    owned.write_text(text, encoding="utf-8")
    with pytest.raises(ProfileError, match=str(owned)):
        render(Profile(rules=(Rule("a", "x\n"),)), "claude-code", tmp_path)
    assert files(tmp_path) == {".tackroom-owned.json": text.encode()}


def test_a_settings_value_of_the_wrong_shape_is_the_users_and_stops_the_render(tmp_path: Path) -> None:
    shared = tmp_path / ".claude" / ".claude.json"
    shared.parent.mkdir()
    shared.write_text('{"mcpServers": ["mine"]}')
    with pytest.raises(ProfileError, match="'mcpServers' is not a table"):
        render(Profile(mcp=(SERVER,)), "claude-code", tmp_path)
    assert shared.read_text() == '{"mcpServers": ["mine"]}'


def test_an_ownership_record_of_version_1_is_still_honoured(tmp_path: Path) -> None:
    render(Profile(rules=(Rule("a", "one\n"),)), "claude-code", tmp_path)
    owned = tmp_path / ".tackroom-owned.json"
    record = json.loads(owned.read_text())
    claims = record["adapters"]["claude-code"]["files"]
    owned.write_text(json.dumps({str(tmp_path / k): v for k, v in claims.items()}))
    render(Profile(rules=(Rule("a", "two\n"),)), "claude-code", tmp_path)
    assert "two" in (tmp_path / ".claude" / "CLAUDE.md").read_text()


# -- names and skill paths on render and import -------------------------------------------------------


@pytest.mark.parametrize("name", ["../escape", "a/b", "..", ".hidden", "Upper", "x" * 200])
def test_an_item_name_that_is_not_a_profile_name_is_never_rendered(tmp_path: Path, name: str) -> None:
    with pytest.raises(ProfileError, match="cannot be rendered"):
        render(Profile(rules=(Rule(name, "x\n"),)), "claude-code", tmp_path / "home")
    assert not (tmp_path / "home").exists()


# The absolute one points inside this test's own directory: a regression must not write elsewhere.
@pytest.mark.parametrize("rel", ["../../CLAUDE.md", "<absolute>", "../other/SKILL.md"])
def test_a_skill_file_path_never_leaves_its_skill(tmp_path: Path, rel: str) -> None:
    rel = str(tmp_path / "planted") if rel == "<absolute>" else rel
    skill = Skill("s", "d", "body", ((rel, b"planted"),))
    with pytest.raises((UnsafePathError, ProfileError)):
        render(Profile(skills=(skill,)), "claude-code", tmp_path / "home")
    with pytest.raises(ProfileError):
        write_profile(Profile(skills=(skill,)), tmp_path / "profile")
    assert not list(tmp_path.rglob("*"))


def test_every_field_of_the_profile_writes_and_loads_back(tmp_path: Path) -> None:
    """The neutral format holds all it says: write then load gives the same profile, field for field."""
    from tackroom.profile.model import (
        Agent,
        Command,
        Hook,
        McpServer,
        Native,
        Permissions,
        Profile,
        Rule,
        Skill,
    )

    profile = Profile(
        rules=(
            Rule("style", "Use tabs.\n"),
            Rule("tests", "Name tests test_*.\n", globs=("tests/**/*.py",), description="test rules"),
        ),
        skills=(
            Skill(
                "pdf",
                "Read PDFs",
                "Use pdftotext.\n",
                allowed_tools=("shell", 'shell("pdftotext:*")'),
                model="haiku",
                argument_hint="[file]",
            ),
        ),
        agents=(
            Agent(
                "reviewer",
                "",
                "Review.\n",
                tools=("read_file", 'mcp("github/get_pr")', "claude-code:NotebookRead"),
                model="claude-code:claude-opus-4-1",
                disallowed_tools=("write_file", "shell"),
                reasoning="high",
                temperature=0.2,
            ),
        ),
        commands=(
            Command("git:commit", "", "Commit !{git diff --staged} with $1\n", argument_hint="[msg]"),
            Command("plain", "Plain", "Do $ARGUMENTS @{README.md}\n", allowed_tools=()),
        ),
        mcp=(
            McpServer("events", url="https://x.test/sse", transport="sse", timeout=30.0, disabled=True),
            McpServer(
                "fs", command="npx", args=("fs",), cwd="/srv", auto_approve=("read",), tool_timeout=5.0
            ),
        ),
        hooks=(Hook("fmt", "pre-compact", "command", command="make fmt", timeout=10.0),),
        permissions=Permissions(allow=('shell("git status")',), deny=('write_file("secrets/**")',)),
        env=(("LOG_LEVEL", "debug"),),
        native=(
            Native(
                "claude-code",
                (("statusLine", {"type": "command", "command": "echo hi"}),),
                (("output-styles/terse.md", b"Be terse.\n"),),
            ),
        ),
    )
    write_profile(profile, tmp_path)
    assert (tmp_path / "commands/git/commit.md").is_file()
    loaded = load_profile([tmp_path], harnesses=["claude-code", "codex"])
    assert loaded == profile


def test_render_into_writes_there_for_either_scope_and_reports_what_it_wrote(tmp_path: Path) -> None:
    """``--into`` is where the files go: with ``--scope project`` too (it wrote into the current
    directory), and a relative one once (it wrote under ``rel/rel/`` and reported ``rel/``)."""
    from clikit import run_cli

    profile = put_profile(tmp_path / "profile", "be kind\n")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    render_ = ("profile", "render", "claude-code", "--profile", str(profile), "--json")
    done = run_cli(*render_, "--scope", "project", "--into", "../project", cwd=cwd)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["written"] == [str(tmp_path / "project" / "CLAUDE.md")]
    assert (tmp_path / "project" / "CLAUDE.md").read_text().count("be kind") == 1
    done = run_cli(*render_, "--into", "rel", cwd=cwd)
    assert done.returncode == 0, done.stderr
    written = [Path(p) for p in json.loads(done.stdout)["written"]]
    assert written == [cwd / "rel" / ".claude" / "CLAUDE.md"] and written[0].is_file()
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file()) == [
        Path("cwd/rel/.claude/CLAUDE.md"),
        Path("cwd/rel/.tackroom-owned.json"),
        Path("profile/rules/a.md"),
        Path("project/.tackroom-owned.json"),
        Path("project/CLAUDE.md"),
    ]
