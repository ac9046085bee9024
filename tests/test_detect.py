"""Detection: which harnesses a repository is set up for, by the specificity of its markers.

The most specific marker found decides an adapter's score; a tie at the top is
reported (``ambiguous_with``), never broken. Mirrors (one file under two names,
a link inside the repository, or identical bytes) are one signal, weighed as
their least specific name. Variants that only inherit markers are not
candidates of their own.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from clikit import run_cli
from tackroom.adapters.resolve import load_adapters, resolve_builtins
from tackroom.detect import choose_harness, detect, repository_root
from tackroom.errors import DetectionError
from tackroom.project import load_project


def repo(tmp_path: Path, *files: str, dirs: tuple[str, ...] = ()) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    for name in files:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"instructions in {name}\n", encoding="utf-8")
    for name in dirs:
        (root / name).mkdir(parents=True)
    return root


SPECIFIC = [
    (m["path"], name)
    for name, adapter in resolve_builtins().items()
    for m in adapter.effective.get("detect", ())
    if m["path"] != "AGENTS.md"
]


@pytest.mark.parametrize(("marker", "name"), SPECIFIC)
def test_each_specific_marker_alone_picks_its_harness(tmp_path: Path, marker: str, name: str) -> None:
    root = repo(tmp_path, marker)
    found = detect(root, resolve_builtins())
    assert (found.best, found.ambiguous_with, found.chosen) == (name, (), name)


def test_a_private_config_dir_outscores_a_shared_file(tmp_path: Path) -> None:
    root = repo(tmp_path, "AGENTS.md", "CLAUDE.md", dirs=(".codex",))
    found = detect(root, resolve_builtins())
    assert (found.best, found.score, found.ambiguous_with) == ("codex", 10, ())
    claude = found.match("claude-code")
    assert claude is not None and claude.score == 6
    assert [m.adapter for m in found.matches[:2]] == ["codex", "claude-code"]


def test_a_tie_at_the_top_is_reported_not_guessed(tmp_path: Path) -> None:
    found = detect(repo(tmp_path, dirs=(".claude", ".codex")), resolve_builtins())
    assert (found.best, found.ambiguous_with, found.chosen) == ("claude-code", ("codex",), None)
    shared = detect(repo(tmp_path / "b", "AGENTS.md"), resolve_builtins())
    assert shared.score == 2 and shared.chosen is None
    # Claude Code reads AGENTS.md too since 2.1.281 (its since entry adds the marker).
    expected = {"claude-code", "codex", "copilot", "omp", "opencode", "pi", "qwen"}
    assert {shared.best, *shared.ambiguous_with} == expected


def mirror(root: Path, how: str) -> None:
    agents, claude = root / "AGENTS.md", root / "CLAUDE.md"
    agents.write_text("One text for every harness.\n", encoding="utf-8")
    if how == "symlink":
        claude.symlink_to("AGENTS.md")
    elif how == "hard link":
        os.link(agents, claude)
    elif how == "copy":
        claude.write_bytes(agents.read_bytes())
    else:
        claude.write_text("Claude only.\n", encoding="utf-8")


@pytest.mark.parametrize("how", ["symlink", "hard link", "copy"])
def test_mirrored_instruction_files_are_one_signal(tmp_path: Path, how: str) -> None:
    root = repo(tmp_path)
    mirror(root, how)
    found = detect(root, resolve_builtins())
    assert found.mirrors == (("AGENTS.md", "CLAUDE.md"),)
    claude = found.match("claude-code")
    assert claude is not None and claude.score == 2
    [marker] = claude.markers
    assert (marker.path, marker.score, marker.counted, marker.mirrors) == ("CLAUDE.md", 6, 2, ("AGENTS.md",))
    assert found.chosen is None and "claude-code" in {found.best, *found.ambiguous_with}


def test_different_instruction_files_are_two_signals(tmp_path: Path) -> None:
    root = repo(tmp_path)
    mirror(root, "different")
    found = detect(root, resolve_builtins())
    assert found.mirrors == () and (found.chosen, found.score) == ("claude-code", 6)


def test_markers_are_found_at_the_repository_root(tmp_path: Path) -> None:
    root = repo(tmp_path, "GEMINI.md")
    (root / "src" / "deep").mkdir(parents=True)
    assert repository_root(root / "src" / "deep") == root
    assert detect(root / "src" / "deep", resolve_builtins()).chosen == "gemini"
    alone = tmp_path / "alone"
    (alone / ".kiro").mkdir(parents=True)  # not a repository: the directory itself is looked at
    assert detect(alone, resolve_builtins()).chosen == "kiro"


def test_a_variant_inherits_markers_without_becoming_a_candidate(config_dir: Path, tmp_path: Path) -> None:
    (config_dir / "adapters.d" / "10.toml").write_text(
        '[adapter.claude-mine]\nextends = "claude-code"\nexecutable = "/opt/claude"\n\n'
        '[adapter.fork]\nextends = "opencode"\n[[adapter.fork.detect]]\npath = ".forkcode"\nscore = 10\n',
        encoding="utf-8",
    )
    adapters = load_adapters()
    found = detect(repo(tmp_path, dirs=(".claude",)), adapters)
    assert [m.adapter for m in found.matches] == ["claude-code"]
    fork = detect(repo(tmp_path / "k", dirs=(".forkcode",)), adapters)
    assert (fork.chosen, fork.matches[0].harness) == ("fork", "opencode")


def test_a_link_out_of_the_repository_is_skipped_with_why(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / ".claude").mkdir(parents=True)
    root = repo(tmp_path)
    (root / ".claude").symlink_to(outside / ".claude")
    (root / ".codex").symlink_to("../outside/.claude")
    found = detect(root, resolve_builtins())
    assert found.matches == ()
    assert {(s.path, s.reason) for s in found.skipped} == {
        (".claude", "a symbolic link leads out of the repository; not followed"),
        (".codex", "a symbolic link leads out of the repository; not followed"),
    }


def test_choice_precedence_is_flag_then_project_file_then_detection(tmp_path: Path) -> None:
    root = repo(tmp_path, dirs=(".gemini",))
    adapters = resolve_builtins()
    found = choose_harness(None, root, project=None, adapters=adapters)
    assert (found.adapter, found.by) == ("gemini", "detection")
    assert found.reason == f"detected in {root}: .gemini 10"
    (root / "tackroom.toml").write_text('harness = "qwen"\n', encoding="utf-8")
    project = load_project(root)
    by_project = choose_harness(None, root, project=project, adapters=adapters)
    assert (by_project.adapter, by_project.by, by_project.reason) == (
        "qwen",
        "project",
        f'harness = "qwen" in {root / "tackroom.toml"}',
    )
    assert choose_harness("pi", root, project=project, adapters=adapters).by == "flag"


def test_no_choice_is_an_error_listing_the_candidates_and_the_fix(tmp_path: Path) -> None:
    root = repo(tmp_path, dirs=(".claude", ".codex"))
    with pytest.raises(DetectionError) as caught:
        choose_harness(
            None, root, project=None, adapters=resolve_builtins(), how="`tackroom run NAME PROMPT`"
        )
    assert str(caught.value) == (
        f"no adapter named, and {str(root)!r} is set up for 2 harnesses equally (score 10): "
        "claude-code (.claude 10); codex (.codex 10). Choose one: name one (`tackroom run NAME PROMPT`) "
        'or set harness = "NAME" in a tackroom.toml at the repository root'
    )
    empty = repo(tmp_path / "empty")
    with pytest.raises(DetectionError, match="no harness's markers were found in"):
        choose_harness(None, empty, project=None, adapters=resolve_builtins())


def test_a_path_that_is_not_a_directory_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x", encoding="utf-8")
    for path in (tmp_path / "file", tmp_path / "missing"):
        with pytest.raises(DetectionError, match="is not a directory"):
            detect(path, resolve_builtins())


def test_detect_cli_json_and_people(tmp_path: Path) -> None:
    root = repo(tmp_path, "CLAUDE.md", dirs=(".claude",))
    (root / "AGENTS.md").symlink_to("CLAUDE.md")
    data = json.loads(run_cli("detect", str(root), "--json").stdout)
    assert (data["root"], data["best"], data["score"], data["chosen"]) == (
        str(root),
        "claude-code",
        10,
        "claude-code",
    )
    assert data["ambiguous_with"] == [] and data["mirrors"] == [["AGENTS.md", "CLAUDE.md"]]
    assert data["matches"][0]["markers"] == [
        {"path": ".claude", "score": 10, "counted": 10, "mirrors": []},
        {"path": "CLAUDE.md", "score": 6, "counted": 2, "mirrors": ["AGENTS.md"]},
    ]
    people = run_cli("detect", cwd=root / ".claude", env={"COLUMNS": "200"})
    assert people.returncode == 0
    assert people.stdout.splitlines()[0] == f"{root}: claude-code (score 10)"
    assert "one signal: AGENTS.md = CLAUDE.md" in people.stdout
    tied = run_cli("detect", str(repo(tmp_path / "t", dirs=(".claude", ".codex"))))
    assert "ambiguous: claude-code, codex (score 10 each)" in tied.stdout
    missing = run_cli("detect", str(tmp_path / "missing"))
    assert missing.returncode == 2 and "Traceback" not in missing.stderr


def test_marker_names_are_printed_as_written(config_dir: Path, tmp_path: Path) -> None:
    (config_dir / "adapters.d" / "10.toml").write_text(
        '[adapter.odd]\nextends = "aider"\n[[adapter.odd.detect]]\npath = "[red]x"\nscore = 5\n',
        encoding="utf-8",
    )
    root = repo(tmp_path, "[red]x")
    done = run_cli("detect", str(root), env={"COLUMNS": "200"})
    assert done.returncode == 0 and "[red]x 5" in done.stdout
