"""Bad profiles get clear errors naming the file and line, and nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from tackroom.adapters.resolve import resolve_builtins
from tackroom.errors import ConfigError, Problem, ProfileError
from tackroom.profile.load import load_profile
from tackroom.profile.model import McpServer
from tackroom.profile.render import plan_render, write

MARKERS = Path(__file__).parent / "profiles" / "markers"


def problems_of(root: Path) -> list[Problem]:
    with pytest.raises(ConfigError) as caught:
        load_profile([root], harnesses=resolve_builtins())
    return list(caught.value.problems)


def put(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_the_marker_profile_loads() -> None:
    profile = load_profile([MARKERS], harnesses=resolve_builtins())
    assert [r.name for r in profile.rules] == ["10-style"]
    assert profile.agents[0].tools == ("shell", "read_file")
    assert profile.mcp[0].env == (("TR_MCP_LOG", "${TR_MCP_LOG}"),)
    assert {h.action for h in profile.hooks} == {"command", "inject", "refuse"}


def test_bad_frontmatter_names_file_and_line(tmp_path: Path) -> None:
    # Neither YAML nor "key: value" lines: the one head even a lenient reader refuses.
    path = put(tmp_path, "agents/a.md", "---\nname: a\ndescription: [unclosed\n}}} stray\n---\nbody\n")
    [problem] = problems_of(tmp_path)
    assert problem.file == str(path) and problem.line is not None and "bad frontmatter" in problem.message


def test_frontmatter_as_the_harnesses_read_it(tmp_path: Path) -> None:
    """A BOM, CRLF and YAML-invalid values like Claude's argument-hint: [a] [b] all load."""
    put(
        tmp_path,
        "commands/git/commit.md",
        '\ufeff---\r\nargument-hint: [message] [--amend]\r\nallowed-tools:\r\n  - shell("git commit:*")\r\n'
        "---\r\nCommit: $ARGUMENTS\r\n",
    )
    put(tmp_path, "agents/plain.md", "You review code.\n")
    profile = load_profile([tmp_path])
    [command] = profile.commands
    assert (command.name, command.argument_hint, command.body) == (
        "git:commit",
        "[message] [--amend]",
        "Commit: $ARGUMENTS\n",
    )
    assert command.allowed_tools == ('shell("git commit:*")',) and command.description == ""
    [agent] = profile.agents
    assert (agent.name, agent.description, agent.body) == ("plain", "", "You review code.\n")


def test_unknown_frontmatter_key(tmp_path: Path) -> None:
    path = put(tmp_path, "agents/a.md", "---\nname: a\ndescription: d\ncolour: red\n---\nbody\n")
    [problem] = problems_of(tmp_path)
    assert (problem.file, problem.key, problem.line) == (str(path), "colour", 4)


def test_hook_with_unknown_moment(tmp_path: Path) -> None:
    path = put(tmp_path, "hooks.toml", '[hooks.x]\nmoment = "before-lunch"\ncommand = "true"\n')
    [problem] = problems_of(tmp_path)
    assert (problem.file, problem.key, problem.line) == (str(path), "hooks.x.moment", 2)
    assert "unknown moment 'before-lunch'" in problem.message and "before-tool" in problem.message


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ('moment = "before-tool"\nsource = ["startup"]\n', "only a session-start hook"),
        ('moment = "session-start"\nsource = ["reboot"]\n', "unknown start 'reboot'"),
        ('moment = "session-start"\nsource = ["resume", "resume"]\n', "a start is named twice"),
    ],
)
def test_a_hook_source_names_session_starts_only(tmp_path: Path, body: str, said: str) -> None:
    path = put(tmp_path, "hooks.toml", f'[hooks.x]\n{body}command = "true"\n')
    with pytest.raises(ConfigError) as info:
        load_profile([tmp_path])
    assert f"{path}:3: hooks.x.source: {said}" in str(info.value)


def test_a_session_start_hook_loads_with_the_starts_it_is_for(tmp_path: Path) -> None:
    put(
        tmp_path,
        "hooks.toml",
        '[hooks.x]\nmoment = "session-start"\nsource = ["startup"]\ncommand = "true"\n',
    )
    [hook] = load_profile([tmp_path]).hooks
    assert hook.source == ("startup",)


def test_mcp_server_with_inline_secret(tmp_path: Path) -> None:
    path = put(
        tmp_path, "mcp.toml", '[servers.gh]\ncommand = "gh-mcp"\nenv = { GITHUB_TOKEN = "ghp_realvalue" }\n'
    )
    [problem] = problems_of(tmp_path)
    assert (problem.file, problem.key) == (str(path), "servers.gh.env.GITHUB_TOKEN")
    assert "inline secret" in problem.message and "ghp_realvalue" not in str(problem)


@pytest.mark.parametrize("name", ["../escape", "a/b", "..", "Bad Name"])
def test_skill_names_cannot_leave_their_directory(tmp_path: Path, name: str) -> None:
    skill_dir = tmp_path / "skills" / "x"
    put(skill_dir, "SKILL.md", f"---\nname: {name}\ndescription: d\n---\nbody\n")
    found = problems_of(tmp_path)
    assert any("must match the file or directory name" in p.message or "bad name" in p.message for p in found)


def test_skill_directory_name_with_dots(tmp_path: Path) -> None:
    put(tmp_path / "skills" / "..hidden", "SKILL.md", "---\nname: ..hidden\ndescription: d\n---\n")
    assert any("bad name" in p.message for p in problems_of(tmp_path))


def test_every_problem_in_one_pass(tmp_path: Path) -> None:
    put(tmp_path, "agents/a.md", "---\nname: b\ndescription: d\n---\n")
    put(tmp_path, "hooks.toml", '[hooks.x]\nmoment = "never"\ncommand = "true"\n')
    put(tmp_path, "stray.txt", "hello")
    assert len(problems_of(tmp_path)) == 3


def test_a_file_tackroom_does_not_own_is_never_overwritten(tmp_path: Path) -> None:
    profile = load_profile([MARKERS], harnesses=resolve_builtins())
    claude = resolve_builtins()["claude-code"]
    mine = tmp_path / ".claude" / "CLAUDE.md"
    mine.parent.mkdir(parents=True)
    mine.write_text("my own rules\n")
    with pytest.raises(ProfileError, match="exists and tackroom does not own it"):
        write(plan_render(profile, claude, root=tmp_path))
    assert mine.read_text() == "my own rules\n"
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == ["CLAUDE.md"]


def test_settings_shared_with_the_user_are_merged(tmp_path: Path) -> None:
    profile = load_profile([MARKERS], harnesses=resolve_builtins())
    claude = resolve_builtins()["claude-code"]
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(
        '{"theme": "dark", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine"}]}]}}'
    )
    write(plan_render(profile, claude, root=tmp_path))
    write(plan_render(profile, claude, root=tmp_path))
    import json

    data = json.loads(settings.read_text())
    assert data["theme"] == "dark" and data["hooks"]["Stop"][0]["hooks"][0]["command"] == "mine"
    assert len(data["hooks"]["PreToolUse"]) == 1


def test_drops_are_by_name_and_reason() -> None:
    profile = load_profile([MARKERS], harnesses=resolve_builtins())
    rendered = plan_render(profile, resolve_builtins()["mini-swe-agent"], root=Path("/nowhere"))
    dropped = [str(d) for d in rendered.drops]
    assert "mini-swe-agent: dropped hook 'tr-refuse' (no hooks capability)" in dropped
    assert rendered.outputs == ()


def test_a_rerender_replaces_tackrooms_own_entry_whole(tmp_path: Path) -> None:
    import json
    from dataclasses import replace

    profile = load_profile([MARKERS], harnesses=resolve_builtins())
    claude = resolve_builtins()["claude-code"]
    shared = tmp_path / ".claude" / ".claude.json"
    shared.parent.mkdir(parents=True)
    shared.write_text(json.dumps({"numStartups": 3, "mcpServers": {"mine": {"command": "x"}}}))
    older = McpServer("trmcp", url="https://old.example", headers=(("X", "y"),))
    write(plan_render(replace(profile, mcp=(older,)), claude, root=tmp_path))
    write(plan_render(profile, claude, root=tmp_path))
    data = json.loads(shared.read_text())
    assert data["numStartups"] == 3 and data["mcpServers"]["mine"] == {"command": "x"}
    assert "url" not in data["mcpServers"]["trmcp"] and data["mcpServers"]["trmcp"]["command"] == "python3"


@pytest.mark.parametrize("edited", [False, True])
def test_a_same_name_server_tackroom_did_not_write_is_never_replaced(tmp_path: Path, edited: bool) -> None:
    import json

    profile = load_profile([MARKERS], harnesses=resolve_builtins())
    claude = resolve_builtins()["claude-code"]
    shared = tmp_path / ".claude" / ".claude.json"
    shared.parent.mkdir(parents=True)
    if edited:  # tackroom wrote it, then the user changed it: theirs now
        write(plan_render(profile, claude, root=tmp_path))
        data = json.loads(shared.read_text())
        data["mcpServers"]["trmcp"]["args"] = ["--my-flag"]
        shared.write_text(json.dumps(data))
    else:
        shared.write_text(json.dumps({"mcpServers": {"trmcp": {"url": "https://mine.example"}}}))
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    with pytest.raises(ProfileError, match=r"'trmcp' in 'mcpServers' is already there and tackroom did not"):
        write(plan_render(profile, claude, root=tmp_path))
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


# -- hostile profiles: links, bytes, shapes, depth ---------------------------------------------------

SECRET = "aws_secret_access_key = TOPSECRET-never-read\n"


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    """A file outside the profile that a link in it points at (a stand-in for ~/.aws/credentials)."""
    path = tmp_path / "outside" / "credentials"
    path.parent.mkdir()
    path.write_text(SECRET, encoding="utf-8")
    return path


def plant(profile: Path, rel: str, target: Path) -> Path:
    link = profile / rel
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)
    return link


LINKED = {
    "a rule": ("rules/leak.md", "file"),
    "the rules directory": ("rules", "dir-of-md"),
    "an agent": ("agents/leak.md", "file"),
    "a command": ("commands/leak.md", "file"),
    "the skills directory": ("skills", "dir-of-skills"),
    "a skill directory": ("skills/leak", "skill-dir"),
    "a SKILL.md": ("skills/leak/SKILL.md", "file"),
    "a file of a skill": ("skills/ok/leak.txt", "file"),
    "a directory in a skill": ("skills/ok/ref", "dir-of-md"),
    "mcp.toml": ("mcp.toml", "file"),
    "hooks.toml": ("hooks.toml", "file"),
}


@pytest.mark.parametrize("what", list(LINKED))
def test_a_link_anywhere_in_a_profile_is_a_load_error_naming_it(
    tmp_path: Path, secret: Path, what: str
) -> None:
    rel, shape = LINKED[what]
    profile = tmp_path / "profile"
    profile.mkdir()
    if rel != "skills":
        put(profile, "skills/ok/SKILL.md", "---\nname: ok\ndescription: d\n---\nbody\n")
    target = {
        "file": secret,
        "dir-of-md": tmp_path / "outside",
        "dir-of-skills": tmp_path / "outside-skills",
        "skill-dir": tmp_path / "outside-skills" / "leak",
    }[shape]
    put(tmp_path / "outside-skills" / "leak", "SKILL.md", f"---\nname: leak\ndescription: d\n---\n{SECRET}")
    (tmp_path / "outside" / "leak.md").write_text(SECRET, encoding="utf-8")
    link = plant(profile, rel, target)
    found = problems_of(profile)
    assert any(p.file == str(link) and "symbolic link" in p.message for p in found), found
    assert all("TOPSECRET" not in str(p) for p in found)


def test_a_planted_project_profile_link_is_refused(tmp_path: Path) -> None:
    from tackroom.profile.load import profile_dirs

    elsewhere = tmp_path / "elsewhere"
    put(elsewhere, "profile/rules/x.md", SECRET)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".tackroom").symlink_to(elsewhere)
    with pytest.raises(ConfigError, match="symbolic link"):
        profile_dirs(repo, tmp_path / "config")


def test_a_fifo_in_a_profile_is_reported_and_never_read(tmp_path: Path) -> None:
    import os

    put(tmp_path, "skills/s/SKILL.md", "---\nname: s\ndescription: d\n---\nbody\n")
    os.mkfifo(tmp_path / "skills" / "s" / "pipe.txt")
    os.mkfifo(tmp_path / "mcp.toml")
    found = problems_of(tmp_path)
    assert {p.file for p in found} == {str(tmp_path / "skills/s/pipe.txt"), str(tmp_path / "mcp.toml")}
    assert all("not a regular file" in p.message for p in found)


@pytest.mark.parametrize("rel", ["rules/r.md", "agents/a.md", "skills/s/SKILL.md", "mcp.toml", "hooks.toml"])
def test_bytes_that_are_not_utf8_name_the_file_and_line(tmp_path: Path, rel: str) -> None:
    path = tmp_path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"# ok\n\n\xff\xfe not text\n")
    [problem] = problems_of(tmp_path)
    assert (problem.file, problem.line) == (str(path), 3) and "not UTF-8" in problem.message


@pytest.mark.parametrize(
    ("rel", "text", "key"),
    [
        ("mcp.toml", "servers = 5\n", "servers"),
        ("mcp.toml", 'servers = "x"\n', "servers"),
        ("hooks.toml", "hooks = [1, 2]\n", "hooks"),
        ("hooks.toml", "[hooks]\nx = 3\n", "hooks.x"),
    ],
)
def test_tables_that_are_not_tables_are_errors_naming_the_key(
    tmp_path: Path, rel: str, text: str, key: str
) -> None:
    put(tmp_path, rel, text)
    [problem] = problems_of(tmp_path)
    assert (problem.file, problem.key) == (str(tmp_path / rel), key) and "must be a table" in problem.message


@pytest.mark.parametrize(
    ("rel", "text"),
    [
        ("mcp.toml", "x = " + "[" * 5000 + "]" * 5000 + "\n"),
        ("hooks.toml", "x = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n"),
        ("agents/a.md", "---\nname: " + "[" * 5000 + "\n---\n"),
        ("rules/r.md", "---\nharnesses: " + "{a: " * 3000 + "\n---\n"),
    ],
)
def test_deep_nesting_is_an_error_naming_the_file(tmp_path: Path, rel: str, text: str) -> None:
    put(tmp_path, rel, text)
    found = problems_of(tmp_path)
    assert [p.file for p in found] == [str(tmp_path / rel)]


def test_a_missing_profile_directory_is_an_error_naming_it(tmp_path: Path) -> None:
    [problem] = problems_of(tmp_path / "nope")
    assert problem.file == str(tmp_path / "nope") and "no such profile directory" in problem.message


def test_the_cli_shows_profile_errors_once_without_a_traceback(tmp_path: Path) -> None:
    from clikit import run_cli

    bad = tmp_path / "bad"
    put(bad, "rules/r.md", "ok")
    (bad / "rules" / "x.md").write_bytes(b"\xff")
    for profile in (tmp_path / "missing", bad):
        done = run_cli("profile", "render", "claude-code", "--profile", str(profile), cwd=tmp_path)
        assert done.returncode == 1 and done.stderr.startswith("tackroom: error: "), done.stderr
        assert "Traceback" not in done.stderr and str(profile) in done.stderr
