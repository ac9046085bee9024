"""Import reads links the way the harness does, inside the tree it imports, and no further.

Repositories keep one text for every harness with a link (``CLAUDE.md -> AGENTS.md``), share a
folder of agents (``.opencode/agent -> ../agents``) or link skills in from a shared folder. A link
that resolves inside the imported tree is read; one that leads out of it (or nowhere, or back into
a folder holding it), and a FIFO or device, is dropped by name, its path under the tree and why,
never opened, and the rest is imported.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from clikit import run_cli
from tackroom.adapters.resolve import resolve_builtins
from tackroom.profile.render import Imported, import_native


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def agent(name: str) -> str:
    return f"---\nname: {name}\ndescription: reviews {name}\n---\nYou review {name}.\n"


def skill(name: str) -> str:
    return f"---\nname: {name}\ndescription: does {name}\n---\nSteps for {name}.\n"


def imported(harness: str, repo: Path) -> Imported:
    return import_native(resolve_builtins()[harness], root=repo, scope="project")


def dropped(found: Imported) -> dict[str, str]:
    """Each item dropped (or file of an item: its path as the field), by name -> reason."""
    return {d.field or d.name: d.reason for d in found.dropped}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    return path


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A sibling of the repository holding what a link out would reach."""
    path = tmp_path / "outside"
    write(path / "secret.md", "OUTSIDE-SECRET\n")
    write(path / "skill" / "SKILL.md", skill("stolen") + "OUTSIDE-SECRET\n")
    return path


def test_claude_md_linked_to_agents_md_is_read_as_claude_reads_it(repo: Path) -> None:
    write(repo / "AGENTS.md", "Run the tests before every commit.\n")
    (repo / "CLAUDE.md").symlink_to("AGENTS.md")
    found = imported("claude-code", repo)
    assert not found.dropped, found.dropped
    assert [r.text for r in found.profile.rules] == ["Run the tests before every commit.\n"]


def test_a_linked_agent_folder_and_linked_skills_are_imported(repo: Path) -> None:
    write(repo / "shared" / "agents" / "planner.md", agent("planner"))
    write(repo / "shared" / "agents" / "tester.md", agent("tester"))
    (repo / ".opencode").mkdir()
    (repo / ".opencode" / "agent").symlink_to("../shared/agents")
    write(repo / "shared" / "skills" / "deploy" / "SKILL.md", skill("deploy"))
    write(repo / "shared" / "skills" / "deploy" / "notes.txt", "step one\n")
    (repo / ".opencode" / "skill").mkdir()
    (repo / ".opencode" / "skill" / "deploy").symlink_to("../../shared/skills/deploy")
    found = imported("opencode", repo)
    assert not found.dropped, found.dropped
    assert [a.name for a in found.profile.agents] == ["planner", "tester"]
    assert [(s.name, s.files) for s in found.profile.skills] == [("deploy", (("notes.txt", b"step one\n"),))]


def test_a_link_out_of_the_tree_is_dropped_by_name_and_the_rest_imported(repo: Path, outside: Path) -> None:
    write(repo / ".claude" / "agents" / "kept.md", agent("kept"))
    (repo / ".claude" / "agents" / "leak.md").symlink_to(outside / "secret.md")
    write(repo / ".claude" / "skills" / "ok" / "SKILL.md", skill("ok"))
    (repo / ".claude" / "skills" / "stolen").symlink_to(outside / "skill")
    (repo / ".claude" / "skills" / "ok" / "creds.txt").symlink_to(outside / "secret.md")
    found = imported("claude-code", repo)
    assert [a.name for a in found.profile.agents] == ["kept"]
    assert [(s.name, s.files) for s in found.profile.skills] == [("ok", ())]
    why = dropped(found)
    assert set(why) == {".claude/agents/leak.md", ".claude/skills/stolen", ".claude/skills/ok/creds.txt"}
    assert all("out of" in reason and str(outside) in reason for reason in why.values()), why
    assert "OUTSIDE-SECRET" not in repr(found)


def test_a_folder_on_the_way_that_links_out_is_named_once(repo: Path, tmp_path: Path) -> None:
    users = tmp_path / "home" / ".claude"
    write(users / "settings.json", json.dumps({"env": {"THEME": "dark"}}))
    write(users / "agents" / "mine.md", agent("mine"))
    (repo / ".claude").symlink_to(users)
    write(repo / "CLAUDE.md", "Be brief.\n")
    found = imported("claude-code", repo)
    assert [r.text for r in found.profile.rules] == ["Be brief.\n"]
    assert not found.profile.agents and not found.profile.env
    assert [d.name for d in found.dropped] == [".claude"]


def test_dangling_and_looping_links_are_named(repo: Path) -> None:
    write(repo / ".claude" / "commands" / "ship.md", "---\ndescription: ship\n---\nShip it.\n")
    (repo / ".claude" / "commands" / "gone.md").symlink_to("nowhere.md")
    (repo / ".claude" / "commands" / "again").symlink_to(".")
    (repo / ".claude" / "commands" / "self.md").symlink_to("self.md")
    found = imported("claude-code", repo)
    assert [c.name for c in found.profile.commands] == ["ship"]
    why = dropped(found)
    assert set(why) == {
        ".claude/commands/gone.md",
        ".claude/commands/again",
        ".claude/commands/self.md",
    }, why
    assert "leads nowhere" in why[".claude/commands/gone.md"]
    assert "loop" in why[".claude/commands/again"] and "loop" in why[".claude/commands/self.md"]


def test_a_fifo_is_dropped_by_name_and_never_opened(repo: Path, tmp_path: Path) -> None:
    write(repo / ".claude" / "agents" / "kept.md", agent("kept"))
    os.mkfifo(repo / ".claude" / "agents" / "pipe.md")
    os.mkfifo(repo / ".claude" / "settings.json")
    write(repo / ".claude" / "skills" / "s" / "SKILL.md", skill("s"))
    os.mkfifo(repo / ".claude" / "skills" / "s" / "fifo.txt")
    done = run_cli(
        "profile", "import", "claude-code", "--from", str(repo), "--scope", "project",
        "--into", str(tmp_path / "into"), "--json", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    names = {d.get("field") or d["name"]: d["reason"] for d in json.loads(done.stdout)["dropped"]}
    assert set(names) == {
        ".claude/agents/pipe.md",
        ".claude/settings.json",
        ".claude/skills/s/fifo.txt",
    }, names
    assert all("FIFO" in reason and "never opened" in reason for reason in names.values())
    assert (tmp_path / "into" / "agents" / "kept.md").is_file()
    assert (tmp_path / "into" / "skills" / "s" / "SKILL.md").is_file()


def test_strict_refuses_an_import_that_drops_a_link(repo: Path, outside: Path, tmp_path: Path) -> None:
    write(repo / ".claude" / "agents" / "kept.md", agent("kept"))
    (repo / ".claude" / "agents" / "leak.md").symlink_to(outside / "secret.md")
    into = tmp_path / "into"
    args = ("profile", "import", "claude-code", "--from", str(repo), "--scope", "project", "--into")
    done = run_cli(*args, str(into), "--strict", cwd=tmp_path)
    assert done.returncode == 1 and ".claude/agents/leak.md" in done.stderr, done.stderr
    assert not into.exists()
