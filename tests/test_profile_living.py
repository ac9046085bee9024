"""Living with rendered files: re-renders remove what the profile dropped, leave the rest untouched.

A re-render after removing a hook, an MCP server or a skill removes exactly
those (whole files while still as tackroom wrote them; merged entries keeping
the user's keys and comments); an unchanged file is not rewritten (its mtime
stays); ``check`` lists what would change without writing; several harnesses
render into one root without fighting; the ``.gitignore`` block is idempotent;
hostile disks and records are typed errors, never tracebacks.
"""

from __future__ import annotations

import json
import os
import shutil
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.clikit import run_cli

from tackroom.adapters.resolve import resolve_builtins
from tackroom.errors import ProfileError
from tackroom.profile import jsonc
from tackroom.profile.model import Hook, McpServer, Profile, Rule, Skill
from tackroom.profile.render import Rendered, check, gitignore_block, plan_render, write, write_all
from tackroom.profile.write import write_profile

ADAPTERS = resolve_builtins()
ONE = McpServer("one", command="python3", args=("one.py",))
TWO = McpServer("two", command="python3", args=("two.py",))
START = Hook("start", "session-start", "command", command="echo start")
STOP = Hook("stop", "session-end", "command", command="echo stop")
SKILL_A = Skill("alpha", "the alpha skill", "alpha body\n", (("notes/a.txt", b"a"),))
SKILL_B = Skill("beta", "the beta skill", "beta body\n")


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def plan(profile: Profile, adapter: str, root: Path, scope: str = "home") -> Rendered:
    return plan_render(profile, ADAPTERS[adapter], root=root, scope=scope)  # type: ignore[arg-type]


def render(profile: Profile, adapter: str, root: Path, scope: str = "home") -> Rendered:
    return write(plan(profile, adapter, root, scope))


# -- whole files ---------------------------------------------------------------------------------------


def test_a_skill_removed_from_the_profile_is_removed_with_its_directory(tmp_path: Path) -> None:
    render(Profile(skills=(SKILL_A, SKILL_B), rules=(Rule("r", "rule\n"),)), "claude-code", tmp_path)
    skills = tmp_path / ".claude" / "skills"
    assert (skills / "alpha" / "notes" / "a.txt").read_bytes() == b"a"
    done = render(Profile(skills=(SKILL_B,), rules=(Rule("r", "rule\n"),)), "claude-code", tmp_path)
    assert not (skills / "alpha").exists()
    assert (skills / "beta" / "SKILL.md").is_file()
    assert sorted(p.relative_to(tmp_path).as_posix() for p in done.removed) == [
        ".claude/skills/alpha/SKILL.md",
        ".claude/skills/alpha/notes/a.txt",
    ]
    record = json.loads((tmp_path / ".tackroom-owned.json").read_text())
    assert not any("alpha" in rel for rel in record["adapters"]["claude-code"]["files"])


def test_a_file_the_user_changed_is_kept_and_reported_and_is_theirs_from_then_on(tmp_path: Path) -> None:
    render(Profile(skills=(SKILL_A, SKILL_B)), "claude-code", tmp_path)
    mine = tmp_path / ".claude" / "skills" / "alpha" / "SKILL.md"
    mine.write_text("I edited this\n")
    done = render(Profile(skills=(SKILL_B,)), "claude-code", tmp_path)
    assert mine.read_text() == "I edited this\n"
    assert not (tmp_path / ".claude" / "skills" / "alpha" / "notes").exists()  # unchanged: removed
    assert len(done.kept) == 1 and str(mine) in done.kept[0] and "changed since" in done.kept[0]
    with pytest.raises(ProfileError, match="tackroom does not own it"):  # theirs now: never overwritten
        render(Profile(skills=(SKILL_A, SKILL_B)), "claude-code", tmp_path)
    assert mine.read_text() == "I edited this\n"


def test_an_unchanged_file_is_not_rewritten(tmp_path: Path) -> None:
    profile = Profile(rules=(Rule("r", "rule\n"),), skills=(SKILL_A,), mcp=(ONE,), hooks=(START,))
    first = render(profile, "claude-code", tmp_path)
    assert first.written
    past = 1_000_000_000
    for path in tmp_path.rglob("*"):
        if path.is_file():
            os.utime(path, ns=(past, past))
    again = render(profile, "claude-code", tmp_path)
    assert again.written == () and again.removed == ()
    assert {p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()} == {past}
    changed = render(
        Profile(rules=(Rule("r", "other\n"),), skills=(SKILL_A,), mcp=(ONE,), hooks=(START,)),
        "claude-code",
        tmp_path,
    )
    assert [p.name for p in changed.written] == ["CLAUDE.md"]  # only that file (the record is not a render's)
    assert (tmp_path / ".claude" / "skills" / "alpha" / "SKILL.md").stat().st_mtime_ns == past


# -- merged entries ------------------------------------------------------------------------------------

USER_MCP = """\
{
  // my servers: keep this comment
  "theme": "dark", /* keep */
  "mcpServers": {
    "mine": {"command": "mine"}, // mine
  },
}
"""


def test_an_mcp_server_removed_from_the_profile_leaves_the_users_servers_and_comments(tmp_path: Path) -> None:
    settings = tmp_path / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(USER_MCP)
    render(Profile(mcp=(ONE, TWO)), "gemini", tmp_path)
    assert set(jsonc.loads(settings.read_text())["mcpServers"]) == {"mine", "one", "two"}
    render(Profile(mcp=(TWO,)), "gemini", tmp_path)
    text = settings.read_text()
    for comment in ("// my servers: keep this comment", "/* keep */", "// mine"):
        assert comment in text
    data = jsonc.loads(text)
    assert set(data["mcpServers"]) == {"mine", "two"} and data["theme"] == "dark"
    render(Profile(), "gemini", tmp_path)  # nothing left of tackroom's
    assert jsonc.loads(settings.read_text()) == {"theme": "dark", "mcpServers": {"mine": {"command": "mine"}}}
    assert "// mine" in settings.read_text()
    assert not (tmp_path / ".tackroom-owned.json").exists()


def test_a_server_the_user_changed_since_is_kept_and_reported(tmp_path: Path) -> None:
    config = tmp_path / ".claude" / ".claude.json"
    render(Profile(mcp=(ONE, TWO)), "claude-code", tmp_path)
    data = json.loads(config.read_text())
    data["mcpServers"]["one"]["args"] = ["mine.py"]
    config.write_text(json.dumps(data))
    done = render(Profile(), "claude-code", tmp_path)
    assert json.loads(config.read_text()) == {"mcpServers": {"one": data["mcpServers"]["one"]}}
    assert len(done.kept) == 1 and "mcpServers.one" in done.kept[0]


def test_a_settings_file_left_empty_is_removed(tmp_path: Path) -> None:
    render(Profile(mcp=(ONE,), rules=(Rule("r", "x\n"),)), "claude-code", tmp_path / "p", "project")
    assert (tmp_path / "p" / ".mcp.json").is_file()
    render(Profile(rules=(Rule("r", "x\n"),)), "claude-code", tmp_path / "p", "project")
    assert sorted(files(tmp_path / "p")) == [".tackroom-owned.json", "CLAUDE.md"]


def test_a_removed_hook_goes_and_the_users_hooks_stay(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    user_hook = {"hooks": [{"type": "command", "command": "echo mine"}]}
    settings.write_text(json.dumps({"model": "opus", "hooks": {"SessionStart": [user_hook]}}))
    render(Profile(hooks=(START, STOP)), "claude-code", tmp_path)
    data = json.loads(settings.read_text())
    assert len(data["hooks"]["SessionStart"]) == 2 and "SessionEnd" in data["hooks"]
    render(Profile(hooks=(START,)), "claude-code", tmp_path)
    data = json.loads(settings.read_text())
    assert "SessionEnd" not in data["hooks"] and len(data["hooks"]["SessionStart"]) == 2
    render(Profile(), "claude-code", tmp_path)
    assert json.loads(settings.read_text()) == {"model": "opus", "hooks": {"SessionStart": [user_hook]}}


def test_a_hook_left_behind_by_a_version_2_record_is_removed(tmp_path: Path) -> None:
    render(Profile(hooks=(START, STOP)), "claude-code", tmp_path)
    owned = tmp_path / ".tackroom-owned.json"
    claims = json.loads(owned.read_text())["adapters"]["claude-code"]
    owned.write_text(json.dumps({"version": 2, "files": claims["files"], "entries": claims["entries"]}))
    render(Profile(hooks=(START,)), "claude-code", tmp_path)
    data = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    assert set(data["hooks"]) == {"SessionStart"}


CODEX_CONFIG = """\
# my codex settings
model = "o3"  # mine

[mcp_servers.mine]
command = "my-server"
"""


def test_a_removed_server_leaves_codex_toml_as_the_user_wrote_it(tmp_path: Path) -> None:
    config = tmp_path / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(CODEX_CONFIG)
    render(Profile(mcp=(ONE, TWO)), "codex", tmp_path)
    render(Profile(mcp=(TWO,)), "codex", tmp_path)
    text = config.read_text()
    assert text.startswith(CODEX_CONFIG)
    assert set(tomllib.loads(text)["mcp_servers"]) == {"mine", "two"}
    render(Profile(), "codex", tmp_path)
    assert tomllib.loads(config.read_text()) == tomllib.loads(CODEX_CONFIG)
    assert "# my codex settings" in config.read_text()


def test_list_items_are_owned_one_by_one(tmp_path: Path) -> None:
    """A list entry (a permission verdict) keeps the user's items; tackroom's go once not rendered."""
    from tackroom.profile.merge import Settings
    from tackroom.profile.owned import Owned

    path = tmp_path / "settings.json"
    raw = json.dumps({"permissions": {"allow": ["Read", "Bash(ls)"]}}).encode()
    before, first = Owned(), Owned()
    settings = Settings.read(path, "settings.json", "json", raw)
    settings.merge({"permissions": {"allow": ["Bash(ls)", "Bash(git:*)"]}}, before, first)
    assert settings.data["permissions"]["allow"] == ["Read", "Bash(ls)", "Bash(git:*)"]
    assert first.items["settings.json"]["permissions"]["allow"] == [
        first.items["settings.json"]["permissions"]["allow"][0]
    ]  # only Bash(git:*): Bash(ls) was the user's already
    again = Settings.read(path, "settings.json", "json", settings.dump())
    again.remove_stale(first, Owned(), Owned())
    assert again.data["permissions"]["allow"] == ["Read", "Bash(ls)"]


# -- check ---------------------------------------------------------------------------------------------


def test_check_lists_what_would_change_and_writes_nothing(tmp_path: Path) -> None:
    profile = Profile(rules=(Rule("r", "rule\n"),), skills=(SKILL_A,), mcp=(ONE,))
    new = check([plan(profile, "claude-code", tmp_path)])
    assert {(d.path.relative_to(tmp_path).as_posix(), d.change) for d in new} == {
        (".claude/CLAUDE.md", "new"),
        (".claude/skills/alpha/SKILL.md", "new"),
        (".claude/skills/alpha/notes/a.txt", "new"),
        (".claude/.claude.json", "new"),
    }
    assert files(tmp_path) == {}
    render(profile, "claude-code", tmp_path)
    assert check([plan(profile, "claude-code", tmp_path)]) == []
    (tmp_path / ".tackroom-owned.json").unlink()  # a checkout without the record is still in sync
    assert check([plan(profile, "claude-code", tmp_path)]) == []
    render(profile, "claude-code", tmp_path)
    smaller = Profile(rules=(Rule("r", "changed\n"),))
    before = files(tmp_path)
    found = {
        (d.path.relative_to(tmp_path).as_posix(), d.change)
        for d in check([plan(smaller, "claude-code", tmp_path)])
    }
    assert found == {
        (".claude/CLAUDE.md", "changed"),
        (".claude/skills/alpha/SKILL.md", "removed"),
        (".claude/skills/alpha/notes/a.txt", "removed"),
        (".claude/.claude.json", "removed"),
    }
    assert files(tmp_path) == before


def test_check_reports_a_file_tackroom_does_not_own_as_a_conflict(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "CLAUDE.md").write_text("mine\n")
    [found] = check([plan(Profile(rules=(Rule("r", "rule\n"),)), "claude-code", tmp_path)])
    assert found.change == "conflict" and "does not own" in found.note


# -- several harnesses, one root -----------------------------------------------------------------------


def test_two_harnesses_sharing_a_file_with_the_same_content_do_not_fight(tmp_path: Path) -> None:
    profile = Profile(rules=(Rule("r", "shared rule\n"),), skills=(SKILL_A,))
    done = write_all([plan(profile, name, tmp_path, "project") for name in ("codex", "opencode")])
    assert [d.adapter for d in done] == ["codex", "opencode"]
    assert "shared rule" in (tmp_path / "AGENTS.md").read_text()
    record = json.loads((tmp_path / ".tackroom-owned.json").read_text())["adapters"]
    assert "AGENTS.md" in record["codex"]["files"] and "AGENTS.md" in record["opencode"]["files"]
    # Rendering one of them alone removes nothing of the other's.
    render(Profile(rules=(Rule("r", "shared rule\n"),)), "codex", tmp_path, "project")
    assert (tmp_path / ".opencode" / "skill" / "alpha" / "SKILL.md").is_file()
    assert not (tmp_path / ".agents" / "skills" / "alpha").exists()
    # A file both own goes only once neither renders it.
    render(Profile(skills=(SKILL_A,)), "codex", tmp_path, "project")
    assert (tmp_path / "AGENTS.md").is_file()


def test_two_harnesses_wanting_different_content_in_one_file_is_an_error_naming_both(tmp_path: Path) -> None:
    codex = plan(
        Profile(rules=(Rule("r", "for codex\n", harnesses=("codex",)),)), "codex", tmp_path, "project"
    )
    opencode = plan(Profile(rules=(Rule("r", "for opencode\n"),)), "opencode", tmp_path, "project")
    with pytest.raises(ProfileError, match=r"AGENTS\.md would be written differently for codex and opencode"):
        write_all([codex, opencode])
    assert files(tmp_path) == {}
    write(opencode)
    with pytest.raises(ProfileError, match="rendered for opencode with other content"):
        write(codex)
    assert "for opencode" in (tmp_path / "AGENTS.md").read_text()


# -- .gitignore ----------------------------------------------------------------------------------------


def test_the_gitignore_block_lists_owned_files_and_is_idempotent(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("node_modules/\n# my note\n")
    profile = Profile(rules=(Rule("r", "x\n"),), skills=(SKILL_A,), mcp=(ONE,))
    write_all([plan(profile, "claude-code", tmp_path, "project")], gitignore=True)
    text = (tmp_path / ".gitignore").read_text()
    assert text.startswith("node_modules/\n# my note\n")
    block = text.split("# >>> tackroom (rendered files)\n", 1)[1].split("# <<< tackroom", 1)[0].splitlines()
    assert block == [
        "/.claude/skills/alpha/SKILL.md",
        "/.claude/skills/alpha/notes/a.txt",
        "/.tackroom-owned.json",
        "/CLAUDE.md",
    ]  # .mcp.json is merged into (the user's file too): never ignored
    write_all([plan(profile, "claude-code", tmp_path, "project")], gitignore=True)
    assert (tmp_path / ".gitignore").read_text() == text
    write_all([plan(Profile(), "claude-code", tmp_path, "project")], gitignore=True)
    assert (tmp_path / ".gitignore").read_text() == "node_modules/\n# my note\n"


def test_gitignore_block_escapes_and_replaces_in_place() -> None:
    text = "a\n# >>> tackroom (rendered files)\n/old\n# <<< tackroom\nb\n"
    assert gitignore_block(text, ["x[1]*.md", "!y"]) == (
        "a\n# >>> tackroom (rendered files)\n/!y\n/x\\[1\\]\\*.md\n# <<< tackroom\nb\n"
    ).replace("/!y", "/\\!y")
    with pytest.raises(ProfileError, match="has no"):
        gitignore_block("# >>> tackroom (rendered files)\n/x\n", ["y"])


# -- hostile disks and records --------------------------------------------------------------------------


def test_a_stale_file_replaced_by_a_link_is_left_alone(tmp_path: Path) -> None:
    root = tmp_path / "root"
    render(Profile(skills=(SKILL_A, SKILL_B)), "claude-code", root)
    target = root / ".claude" / "skills" / "alpha" / "SKILL.md"
    outside = tmp_path / "outside.md"
    outside.write_text("not tackroom's\n")
    target.unlink()
    target.symlink_to(outside)
    done = render(Profile(skills=(SKILL_B,)), "claude-code", root)
    assert target.is_symlink() and outside.read_text() == "not tackroom's\n"
    assert any("symbolic link" in note for note in done.kept)


def test_a_directory_where_a_stale_file_was_is_left_alone(tmp_path: Path) -> None:
    render(Profile(skills=(SKILL_A, SKILL_B)), "claude-code", tmp_path)
    target = tmp_path / ".claude" / "skills" / "alpha" / "SKILL.md"
    target.unlink()
    target.mkdir()
    done = render(Profile(skills=(SKILL_B,)), "claude-code", tmp_path)
    assert target.is_dir() and any("not a regular file" in note for note in done.kept)


@pytest.mark.parametrize(
    "record",
    [
        {"version": 3, "adapters": {"claude-code": {"files": {"../escape": "x"}}}},
        {"version": 3, "adapters": {"claude-code": {"files": {"/etc/passwd": "x"}}}},
        {"version": 3, "adapters": {"claude-code": {"items": {"a": {"t": {"n": "x"}}}}}},
        {"version": 3, "adapters": {"": {}}},
        {"version": 3, "adapters": []},
    ],
)
def test_a_hostile_ownership_record_is_an_error_naming_it(tmp_path: Path, record: object) -> None:
    owned = tmp_path / ".tackroom-owned.json"
    owned.write_text(json.dumps(record))
    with pytest.raises(ProfileError, match="not an ownership record"):
        render(Profile(rules=(Rule("r", "x\n"),)), "claude-code", tmp_path)
    assert files(tmp_path) == {".tackroom-owned.json": json.dumps(record).encode()}


# -- the CLI -------------------------------------------------------------------------------------------


def test_cli_check_exit_codes_and_json(tmp_path: Path) -> None:
    profile = tmp_path / "profile"
    write_profile(Profile(rules=(Rule("r", "rule\n"),), mcp=(ONE,)), profile)
    home = tmp_path / "home"
    args = ("profile", "render", "claude-code", "--profile", str(profile), "--into", str(home))
    pending = run_cli(*args, "--check")
    assert pending.returncode == 1, pending.stderr
    assert "would create" in pending.stdout and "CLAUDE.md" in pending.stdout
    assert not home.exists()
    wrote = run_cli(*args)
    assert wrote.returncode == 0, wrote.stderr
    synced = run_cli(*args, "--check", "--json")
    assert synced.returncode == 0, synced.stderr
    report = json.loads(synced.stdout)
    assert report["adapter"] == "claude-code" and report["differences"] == []
    (home / ".claude" / "CLAUDE.md").write_text("edited\n")
    drifted = run_cli(*args, "--check", "--json")
    assert drifted.returncode == 1
    report = json.loads(drifted.stdout)
    assert [(Path(d["path"]).name, d["change"]) for d in report["differences"]] == [("CLAUDE.md", "conflict")]


def test_cli_renders_several_names_and_all_into_a_project(tmp_path: Path) -> None:
    profile = tmp_path / "profile"
    write_profile(Profile(rules=(Rule("r", "rule\n"),)), profile)
    project = tmp_path / "project"
    project.mkdir()
    done = run_cli(
        "profile", "render", "codex", "opencode", "--profile", str(profile), "--scope", "project",
        "--gitignore", "--json", cwd=project,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    reports = json.loads(done.stdout)
    assert [r["adapter"] for r in reports] == ["codex", "opencode"]
    assert "/AGENTS.md" in (project / ".gitignore").read_text()
    every = run_cli(
        "profile", "render", "--all", "--profile", str(profile), "--scope", "project", cwd=project
    )
    assert every.returncode == 0, every.stderr
    assert (project / "CLAUDE.md").is_file() and (project / "GEMINI.md").is_file()
    assert (
        run_cli(
            "profile",
            "render",
            "--all",
            "--profile",
            str(profile),
            "--scope",
            "project",
            "--check",
            cwd=project,
        ).returncode
        == 0
    )
    both = run_cli("profile", "render", "codex", "--all", "--profile", str(profile), cwd=project)
    assert both.returncode == 2 and "Traceback" not in both.stderr
    bare = run_cli("profile", "render", "codex", "--gitignore", "--profile", str(profile), cwd=project)
    assert bare.returncode == 2 and "--scope project" in bare.stderr


def test_cli_hostile_disks_are_errors_naming_the_file_not_tracebacks(tmp_path: Path) -> None:
    profile = tmp_path / "profile"
    write_profile(Profile(rules=(Rule("r", "rule\n"),), skills=(SKILL_A,)), profile)
    home = tmp_path / "home"
    args = ("profile", "render", "claude-code", "--profile", str(profile), "--into", str(home))
    assert run_cli(*args).returncode == 0
    rules = home / ".claude" / "CLAUDE.md"
    rules.unlink()
    rules.mkdir()  # a directory where tackroom's file was
    done = run_cli(*args)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert str(rules) in done.stderr and "not a regular file" in done.stderr
    rules.rmdir()
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_text("not tackroom's\n")
    rules.symlink_to(elsewhere)  # a link where tackroom's file was
    for extra in ((), ("--check",)):
        linked = run_cli(*args, *extra)
        assert linked.returncode == 1 and "Traceback" not in linked.stderr
        assert "symbolic link" in linked.stderr
    assert elsewhere.read_text() == "not tackroom's\n"
    rules.unlink()
    (home / ".tackroom-owned.json").write_text('{"version": 3, "adapters": {"claude-code": 5}}')
    corrupt = run_cli(*args)
    assert corrupt.returncode == 1 and "Traceback" not in corrupt.stderr
    assert "not an ownership record" in corrupt.stderr and "move it aside" in corrupt.stderr


def test_a_file_several_harnesses_write_counts_as_written_for_each(tmp_path: Path) -> None:
    profile = Profile(rules=(Rule("r", "shared\n"),))
    done = write_all([plan(profile, name, tmp_path, "project") for name in ("codex", "opencode")])
    assert [[p.name for p in d.written] for d in done] == [["AGENTS.md"], ["AGENTS.md"]]
    again = write_all([plan(profile, name, tmp_path, "project") for name in ("codex", "opencode")])
    assert [d.written for d in again] == [(), ()]


def test_a_removal_that_fails_puts_back_everything_already_done(tmp_path: Path) -> None:
    from tackroom.errors import UnsafePathError
    from tackroom.paths import Transaction

    (tmp_path / "keep.txt").write_text("old\n")
    (tmp_path / "gone.txt").write_text("gone\n")
    (tmp_path / "swapped.txt").write_text("swapped\n")
    files_ = Transaction(tmp_path)
    files_.put("keep.txt", b"new\n")
    files_.put("d/new.txt", b"created\n")
    files_.remove("gone.txt")
    files_.remove("swapped.txt")
    (tmp_path / "swapped.txt").unlink()
    (tmp_path / "swapped.txt").mkdir()  # swapped for a directory after it was checked
    with pytest.raises(UnsafePathError, match="not a regular file"):
        files_.commit()
    assert (tmp_path / "keep.txt").read_text() == "old\n" and (tmp_path / "gone.txt").read_text() == "gone\n"
    assert not (tmp_path / "d").exists()


# -- properties ----------------------------------------------------------------------------------------

MARKERS = Path(__file__).parent / "profiles" / "markers"


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
@pytest.mark.parametrize("scope", ["home", "project"])
def test_a_re_render_leaves_what_a_fresh_render_would(tmp_path: Path, adapter: str, scope: str) -> None:
    """For every adapter: rendering A then B leaves what rendering B alone does; B empty leaves nothing."""
    from tackroom.profile.load import load_profile

    full = load_profile([MARKERS], harnesses=ADAPTERS)
    smaller = Profile(rules=full.rules, mcp=full.mcp[:1], hooks=full.hooks[:1])
    for later in (smaller, Profile()):
        # One place for both, since a file may name where it is (codex's hook trust keys its path).
        root = tmp_path / f"root-{len(later.rules)}"
        render(full, adapter, root, scope)
        render(later, adapter, root, scope)
        again = files(root)
        assert check([plan(later, adapter, root, scope)]) == []
        if later == Profile():
            assert not list(root.rglob("*"))  # not even an empty directory
        shutil.rmtree(root, ignore_errors=True)
        render(later, adapter, root, scope)
        assert again == files(root)


KEYS = st.text(alphabet="abcxyz_", min_size=1, max_size=4)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None)
@given(
    data=st.dictionaries(KEYS, st.dictionaries(KEYS, VALUES, max_size=3) | VALUES, min_size=1, max_size=4),
    indent=st.sampled_from([None, 2, 4]),
    pick=st.data(),
)
def test_removing_a_member_removes_that_member_and_nothing_else(data: dict, indent: int | None, pick) -> None:  # type: ignore[no-untyped-def,type-arg]
    key = pick.draw(st.sampled_from(sorted(data)))
    path: tuple[str, ...] = (key,)
    if isinstance(data[key], dict) and data[key] and pick.draw(st.booleans()):
        path = (key, pick.draw(st.sampled_from(sorted(data[key]))))
    text = "// a comment\n" + json.dumps(data, indent=indent) + " // after\n"
    left = jsonc.remove_member(text, path)
    expected = json.loads(json.dumps(data))
    if len(path) == 1:
        del expected[key]
    else:
        del expected[key][path[1]]
    assert jsonc.loads(left) == expected
    assert "// a comment" in left and "// after" in left


@settings(max_examples=150, deadline=None)
@given(
    user=st.lists(
        st.text(alphabet="ab/#!*. \t\r\x0c", max_size=6).filter(lambda s: "tackroom" not in s), max_size=5
    ),
    paths=st.lists(st.text(alphabet="ab/.*[] !#", min_size=1, max_size=6), max_size=4),
)
def test_the_gitignore_block_is_idempotent_and_keeps_the_users_lines(
    user: list[str], paths: list[str]
) -> None:
    text = "".join(line + "\n" for line in user)
    once = gitignore_block(text, paths)
    assert gitignore_block(once, paths) == once
    assert once.split("\n")[: len(user)] == user
    assert gitignore_block(once, []) == gitignore_block(text, [])


USER_HOOKS = {
    "claude-code": (
        ".claude/settings.json",
        {
            "hooks": {
                "PostToolUse": [
                    {
                        "matcher": "Edit|Write",
                        "hooks": [{"type": "command", "command": "npx prettier --write .", "timeout": 30}],
                    }
                ],
                "Notification": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
            },
            "env": {"LOG_LEVEL": "debug"},
        },
    ),
    "gemini": (
        ".gemini/settings.json",
        {
            "hooks": {
                "AfterTool": [
                    {
                        "matcher": "write_file|replace",
                        "hooks": [{"name": "fmt", "type": "command", "command": "npx prettier --write ."}],
                    }
                ]
            }
        },
    ),
}


@pytest.mark.parametrize("adapter", sorted(USER_HOOKS))
def test_import_then_render_into_the_same_project_changes_nothing(tmp_path: Path, adapter: str) -> None:
    """The first thing a user does: import their project, render it back. Their hooks must not run twice."""
    from tackroom.profile.render import import_native

    rel, settings_data = USER_HOOKS[adapter]
    target = tmp_path / rel
    target.parent.mkdir(parents=True)
    original = (json.dumps(settings_data, indent=2) + "\n").encode("utf-8")
    target.write_bytes(original)
    found = resolve_builtins()[adapter]
    imported = import_native(found, root=tmp_path, scope="project")
    assert imported.profile.hooks and not imported.dropped
    rendered = write(plan_render(imported.profile, found, root=tmp_path, scope="project"))
    assert json.loads(target.read_bytes()) == settings_data, "a user's hook was written a second time"
    assert check([plan_render(imported.profile, found, root=tmp_path, scope="project")]) == []
    assert rendered.drops == ()
