"""Run directories: ``tackroom runs list|show|prune``, and no half-made directory left behind.

The CLI runs as a real process against run directories made by real runs of
the fake harness (and some made by hand to be hostile: links, corrupt results).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from clikit import run_cli
from tackroom.errors import MockError, MockScriptError, ProfileError, UnsupportedOptionError
from tackroom.profile.model import Profile, Rule
from tackroom.run.runner import run
from tackroom.run.store import holding, list_runs, prune_runs, runs_root

FAKE = Path(__file__).parent / "fakes" / "fake_harness.py"
RECORDED = Path(__file__).parent / "golden" / "claude-code" / "claude-code-text" / "stream.jsonl"
SLOTS = (
    '"{{opt.auto_accept}}", "{{opt.model}}", "{{opt.max_turns}}", "{{opt.system_prompt_file}}", '
    '"{{opt.append_system_prompt}}", "{{opt.allowed_tools}}", "{{opt.disallowed_tools}}", '
    '"{{opt.reasoning_effort}}", "{{opt.resume}}", "{{trust}}"'
)


@pytest.fixture
def fake(config_dir: Path) -> str:
    table = (
        f'[adapter.fake]\nextends = "claude-code"\nexecutable = "{FAKE}"\n'
        f'one_shot = ["--replay", "{RECORDED}", "--prompt", "{{{{prompt}}}}", {SLOTS}]\n'
    )
    (config_dir / "adapters.d" / "fake.toml").write_text(table, encoding="utf-8")
    return "fake"


def age(run_dir: Path, seconds: float) -> None:
    """Make a run look ``seconds`` old."""
    stamp = time.time() - seconds
    for path in (run_dir / "result.json", run_dir):
        if path.exists():
            os.utime(path, (stamp, stamp))


def made(tmp_path: Path, fake: str, count: int = 1) -> list[Path]:
    return [run(fake, "hello", workdir=tmp_path).run_dir for _ in range(count)]


def test_list_shows_every_run_with_its_size(fake: str, tmp_path: Path) -> None:
    first, second = made(tmp_path, fake, 2)
    age(first, 3600)
    done = run_cli("runs", "list", "--json")
    rows = json.loads(done.stdout)
    assert [row["id"] for row in rows] == [first.name, second.name]  # oldest first
    assert all(row["status"] == "ok" and row["adapter"] == "fake" and row["exit_code"] == 0 for row in rows)
    total = sum(p.stat().st_size for p in first.rglob("*") if p.is_file() and not p.is_symlink())
    assert rows[0]["size_bytes"] == total > 0
    table = run_cli("runs", "list", env={"COLUMNS": "200"})
    assert first.name in table.stdout and "KiB" in table.stdout
    assert "2 run(s)" in table.stderr


def test_show_gives_the_result_and_the_size_of_each_entry(fake: str, tmp_path: Path) -> None:
    [run_dir] = made(tmp_path, fake)
    shown = json.loads(run_cli("runs", "show", run_dir.name, "--json").stdout)
    assert shown["result"]["final_text"] == "TACKROOM-TEXT-claude-code"
    entries = {entry["name"]: entry["size_bytes"] for entry in shown["entries"]}
    assert entries["result.json"] == (run_dir / "result.json").stat().st_size
    assert {"home", "stdout.log", "events.jsonl"} <= entries.keys()
    people = run_cli("runs", "show", run_dir.name, env={"COLUMNS": "200"})
    assert "TACKROOM-TEXT-claude-code" in people.stdout and "result.json" in people.stdout


@pytest.mark.parametrize("run_id", ["../outside", ".hidden", "a/b", "..", "x" * 200])
def test_a_run_id_that_is_not_a_name_is_refused(isolated_home: Path, run_id: str) -> None:
    outside = runs_root().parent / "outside"
    outside.mkdir(parents=True)
    (outside / "result.json").write_text('{"secret": "NOT-A-RUN"}', encoding="utf-8")
    done = run_cli("runs", "show", run_id, "--json")
    assert done.returncode == 1 and done.stderr.startswith("tackroom: error: run id ")
    assert "NOT-A-RUN" not in done.stdout + done.stderr and "Traceback" not in done.stderr


def test_links_are_never_followed_nor_deleted_through(fake: str, tmp_path: Path) -> None:
    [run_dir] = made(tmp_path, fake)
    outside = tmp_path / "outside"
    (outside / "keep").mkdir(parents=True)
    (outside / "keep" / "precious.txt").write_text("keep me", encoding="utf-8")
    (outside / "result.json").write_text('{"ok": true}', encoding="utf-8")
    (runs_root() / "20990101-000000-evil-000000").symlink_to(outside)  # a run id that is a link
    (run_dir / "home" / "escape").symlink_to(outside / "keep")  # a link inside a run
    listed = json.loads(run_cli("runs", "list", "--json").stdout)
    assert [row["id"] for row in listed] == [run_dir.name]
    refused = run_cli("runs", "show", "20990101-000000-evil-000000")
    assert refused.returncode == 1 and "symbolic link" in refused.stderr
    done = run_cli("runs", "prune", "--json")
    assert [row["id"] for row in json.loads(done.stdout)["removed"]] == [run_dir.name]
    assert not run_dir.exists()
    assert (outside / "keep" / "precious.txt").read_text(encoding="utf-8") == "keep me"
    assert (runs_root() / "20990101-000000-evil-000000").is_symlink()


def test_prune_older_than_keeps_young_runs_and_dry_run_deletes_nothing(fake: str, tmp_path: Path) -> None:
    old, young = made(tmp_path, fake, 2)
    age(old, 8 * 86400)
    dry = run_cli("runs", "prune", "--older-than", "7d", "--dry-run")
    assert dry.returncode == 0 and f"would remove {old.name}" in dry.stdout and old.exists()
    done = run_cli("runs", "prune", "--older-than", "7d")
    assert done.returncode == 0 and f"removed {old.name}" in done.stdout
    assert not old.exists() and young.exists()


@pytest.mark.parametrize("value", ["7", "7 days", "-1d", "nand", "1e3d", ""])
def test_prune_needs_an_age_with_a_unit(isolated_home: Path, value: str) -> None:
    done = run_cli("runs", "prune", "--older-than", value)
    assert done.returncode == 2 and "is not an age" in done.stderr


def test_a_run_in_progress_is_listed_as_running_and_never_pruned(fake: str, tmp_path: Path) -> None:
    [run_dir] = made(tmp_path, fake)
    (run_dir / "result.json").unlink()
    with holding(run_dir):
        [record] = list_runs()
        assert record.status == "running"
        assert prune_runs() == ([], [])
    assert run_dir.exists()
    [record] = list_runs()
    assert record.status == "no result" and "interrupted" in (record.problem or "")
    removed, failed = prune_runs()
    assert [r.id for r in removed] == [run_dir.name] and not failed and not run_dir.exists()


@pytest.mark.parametrize(
    "content",
    [b"{not json", b"[1, 2]", b"[" * 100_000 + b"]" * 100_000, b"\xff\xfe", b'{"final_text": "\\ud83d"}'],
)
def test_a_corrupt_result_is_reported_not_a_crash(isolated_home: Path, content: bytes) -> None:
    run_dir = runs_root() / "20260101-000000-fake-abcdef"
    run_dir.mkdir(parents=True)
    (run_dir / "result.json").write_bytes(content)
    listed = run_cli("runs", "list", "--json")
    shown = run_cli("runs", "show", run_dir.name, "--json")
    people = run_cli("runs", "show", run_dir.name)
    for done in (listed, shown, people):
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr
    [row] = json.loads(listed.stdout)
    assert row["id"] == run_dir.name and json.loads(shown.stdout)["id"] == run_dir.name


# --- half-made run directories ------------------------------------------------------------------


def test_a_run_that_fails_before_its_harness_starts_leaves_no_directory(
    fake: str, tmp_path: Path, isolated_home: Path
) -> None:
    runs = tmp_path / "runs"
    script = tmp_path / "bad.toml"
    script.write_text("[[turns]]\nbogus = 1\n", encoding="utf-8")
    failures = [
        (UnsupportedOptionError, {"options": {"sandbox": "workspace-write"}}),  # a plan error
        (ProfileError, {"home": "real", "profile": Profile(rules=(Rule("r", "x"),))}),
        (MockScriptError, {"mock": script}),
        (MockError, {"mock_text": "x", "mock_log": tmp_path / "missing" / "log.jsonl"}),
    ]
    for error, options in failures:
        with pytest.raises(error):
            run(fake, "hello", workdir=tmp_path, runs_dir=runs, **options)  # type: ignore[arg-type]
        assert not runs.exists() or not any(runs.iterdir()), error
    done = run_cli("run", fake, "hello", "--mock", str(script), "--workdir", str(tmp_path))
    assert done.returncode == 1 and "turns[0]: unknown key 'bogus'" in done.stderr
    assert not runs_root().exists() or not any(runs_root().iterdir())


def test_a_run_that_started_keeps_its_result(config_dir: Path, tmp_path: Path) -> None:
    table = (
        f'[adapter.fails]\nextends = "claude-code"\nexecutable = "{FAKE}"\n'
        f'one_shot = ["--stderr", "boom", "--exit-code", "3", "--prompt", "{{{{prompt}}}}", {SLOTS}]\n'
    )
    (config_dir / "adapters.d" / "fails.toml").write_text(table, encoding="utf-8")
    result = run("fails", "hello", workdir=tmp_path)
    assert result.exit_code == 3
    saved = json.loads((result.run_dir / "result.json").read_text(encoding="utf-8"))
    assert saved["exit_code"] == 3 and saved["error"] == "exit code 3: boom"


def test_a_runs_root_that_cannot_be_made_is_an_error(fake: str, tmp_path: Path) -> None:
    blocker = tmp_path / "data-is-a-file"
    blocker.write_text("not a directory", encoding="utf-8")
    done = run_cli("run", fake, "hello", "--workdir", str(tmp_path), env={"XDG_DATA_HOME": str(blocker)})
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("tackroom: error: cannot create a run directory in ")


def test_no_runs_says_so_and_where_it_looked() -> None:
    done = run_cli("runs", "list")
    assert done.returncode == 0 and done.stdout == ""
    assert f"no runs in {runs_root()}" in done.stderr
    assert json.loads(run_cli("runs", "list", "--json").stdout) == []


def test_prune_never_deletes_through_a_linked_runs_directory(isolated_home: Path, tmp_path: Path) -> None:
    """A ``runs/`` that is a link: prune refuses, and the directory it points at keeps everything."""
    target = tmp_path / "elsewhere"
    victim = target / "20260101-000000-claude-code-abc123"
    victim.mkdir(parents=True)
    (victim / "result.json").write_text("{}", encoding="utf-8")
    (victim / "precious.txt").write_text("keep me", encoding="utf-8")
    root = runs_root()
    root.parent.mkdir(parents=True, exist_ok=True)
    root.symlink_to(target, target_is_directory=True)
    done = run_cli("runs", "prune")
    assert done.returncode == 1 and "is a link" in done.stderr and "Traceback" not in done.stderr
    assert (victim / "precious.txt").read_text(encoding="utf-8") == "keep me"
