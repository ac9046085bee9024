"""Bad profiles get clear errors naming the file and line, and nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from tackroom.adapters.resolve import resolve_builtins
from tackroom.errors import ConfigError, Problem, ProfileError
from tackroom.profile.load import load_profile
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
    path = put(tmp_path, "agents/a.md", "---\nname: a\ndescription: [unclosed\n---\nbody\n")
    [problem] = problems_of(tmp_path)
    assert problem.file == str(path) and problem.line is not None and "bad frontmatter" in problem.message


def test_unknown_frontmatter_key(tmp_path: Path) -> None:
    path = put(tmp_path, "agents/a.md", "---\nname: a\ndescription: d\ncolour: red\n---\nbody\n")
    [problem] = problems_of(tmp_path)
    assert (problem.file, problem.key, problem.line) == (str(path), "colour", 4)


def test_hook_with_unknown_moment(tmp_path: Path) -> None:
    path = put(tmp_path, "hooks.toml", '[hooks.x]\nmoment = "before-lunch"\ncommand = "true"\n')
    [problem] = problems_of(tmp_path)
    assert (problem.file, problem.key, problem.line) == (str(path), "hooks.x.moment", 2)
    assert "unknown moment 'before-lunch'" in problem.message and "before-tool" in problem.message


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
    rendered = plan_render(profile, resolve_builtins()["aider"], root=Path("/nowhere"))
    assert "aider: dropped hook 'tr-refuse' (no hooks capability)" in [str(d) for d in rendered.drops]
    assert rendered.outputs == ()


def test_a_rendered_server_replaces_the_whole_entry_of_the_same_name(tmp_path: Path) -> None:
    import json

    profile = load_profile([MARKERS], harnesses=resolve_builtins())
    claude = resolve_builtins()["claude-code"]
    shared = tmp_path / ".claude" / ".claude.json"
    shared.parent.mkdir(parents=True)
    stale = {"url": "https://old.example", "headers": {"X": "y"}}
    shared.write_text(
        json.dumps({"numStartups": 3, "mcpServers": {"trmcp": stale, "mine": {"command": "x"}}})
    )
    write(plan_render(profile, claude, root=tmp_path))
    data = json.loads(shared.read_text())
    assert data["numStartups"] == 3 and data["mcpServers"]["mine"] == {"command": "x"}
    assert "url" not in data["mcpServers"]["trmcp"] and data["mcpServers"]["trmcp"]["command"] == "python3"
