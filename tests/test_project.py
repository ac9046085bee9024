"""The project file is applied, not only validated: harness, [options] and profile (flag > project > default).

A repository's ``tackroom.toml`` selects the adapter a run uses when none is
named, sets option values under the flags, and names the project's profile
directory (inside the repository). ``--workdir`` selects the project, and the
library's ``run()`` applies it exactly as the CLI does. ``min_version`` is
enforced before a harness starts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clikit import run_cli
from tackroom.adapters.resolve import load_adapters
from tackroom.errors import ConfigError, DetectionError, HarnessVersionError
from tackroom.project import load_project
from tackroom.run.runner import run

FAKE = Path(__file__).parent / "fakes" / "fake_harness.py"
# A stream recorded from the real claude binary: a run that replays it is complete (it ends in "result").
RECORDED = Path(__file__).parent / "golden" / "claude-code" / "claude-code-text" / "stream.jsonl"
SLOTS = (
    '"{{opt.auto_accept}}", "{{opt.model}}", "{{opt.max_turns}}", "{{opt.system_prompt_file}}", '
    '"{{opt.append_system_prompt}}", "{{opt.allowed_tools}}", "{{opt.disallowed_tools}}", '
    '"{{opt.reasoning_effort}}", "{{opt.resume}}", "{{trust}}"'
)


def fake_adapter(config_dir: Path, name: str = "fake", extra: str = "") -> None:
    """An operator adapter running the fake harness: it replays a complete recorded stream and exits 0
    (2 on options it does not know)."""
    table = (
        f'[adapter.{name}]\nextends = "claude-code"\nexecutable = "{FAKE}"\n'
        f'one_shot = ["--replay", "{RECORDED}", "--exit-code", "0", "--prompt", "{{{{prompt}}}}", {SLOTS}]\n'
        f"{extra}"
    )
    (config_dir / "adapters.d" / f"{name}.toml").write_text(table, encoding="utf-8")


def repository(tmp_path: Path, project: str) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "sub").mkdir()
    (repo / "tackroom.toml").write_text(project, encoding="utf-8")
    return repo


def rules(directory: Path, marker: str) -> None:
    (directory / "rules").mkdir(parents=True)
    (directory / "rules" / "style.md").write_text(f"Be brief. {marker}\n", encoding="utf-8")


PROJECT = 'harness = "fake"\nprofile = "agents/profile"\n[options]\nmodel = "project-model"\nmax_turns = 3\n'


def test_run_with_only_a_prompt_uses_the_project_harness_options_and_profile(
    config_dir: Path, tmp_path: Path
) -> None:
    fake_adapter(config_dir)
    repo = repository(tmp_path, PROJECT)
    rules(repo / "agents" / "profile", "PROJECT-PROFILE-MARKER")
    rules(repo / ".tackroom" / "profile", "DEFAULT-DIR-MARKER")  # not the project's profile any more
    done = run_cli("run", "hello", "--json", "--workdir", str(repo / "sub"), cwd=tmp_path)
    result = json.loads(done.stdout)
    assert result["adapter"] == "fake"
    assert result["argv"][-4:] == ["--model", "project-model", "--max-turns", "3"]
    rendered = (Path(result["run_dir"]) / "home" / ".claude" / "CLAUDE.md").read_text(encoding="utf-8")
    assert "PROJECT-PROFILE-MARKER" in rendered and "DEFAULT-DIR-MARKER" not in rendered


def test_a_flag_wins_over_the_project_file(config_dir: Path, tmp_path: Path) -> None:
    fake_adapter(config_dir)
    fake_adapter(config_dir, name="other")
    repo = repository(tmp_path, PROJECT)
    (repo / "agents" / "profile").mkdir(parents=True)
    done = run_cli(
        "run", "other", "hello", "-m", "flag-model", "--json", "--workdir", str(repo), cwd=tmp_path
    )
    result = json.loads(done.stdout)
    assert result["adapter"] == "other"
    assert result["argv"][-4:] == ["--model", "flag-model", "--max-turns", "3"]


def test_the_library_applies_the_project_file(config_dir: Path, tmp_path: Path) -> None:
    fake_adapter(config_dir)
    repo = repository(tmp_path, PROJECT.replace('profile = "agents/profile"\n', ""))
    rules(repo / ".tackroom" / "profile", "DEFAULT-DIR-MARKER")
    result = run(None, "hello", workdir=repo / "sub", runs_dir=tmp_path / "runs", options={"max_turns": 9})
    assert result.adapter == "fake"
    assert list(result.argv[-4:]) == ["--model", "project-model", "--max-turns", "9"]
    rendered = result.run_dir / "home" / ".claude" / "CLAUDE.md"
    assert "DEFAULT-DIR-MARKER" in rendered.read_text(encoding="utf-8")
    bare = run(None, "hello", workdir=repo, runs_dir=tmp_path / "runs", profile=None)
    assert not (bare.run_dir / "home" / ".claude" / "CLAUDE.md").exists()


def test_adapters_render_shows_the_project_options(config_dir: Path, tmp_path: Path) -> None:
    fake_adapter(config_dir)
    repo = repository(tmp_path, PROJECT.replace('profile = "agents/profile"\n', ""))
    done = run_cli("adapters", "render", "fake", "--json", "--workdir", str(repo), "-o", "max_turns=5")
    assert json.loads(done.stdout)["argv"][-4:] == ["--model", "project-model", "--max-turns", "5"]


def test_without_a_name_a_project_harness_or_markers_the_run_says_how(
    config_dir: Path, tmp_path: Path
) -> None:
    with pytest.raises(DetectionError, match=r'set harness = "NAME" in a tackroom\.toml'):
        run(None, "hello", workdir=tmp_path, runs_dir=tmp_path / "runs")
    done = run_cli("run", "hello", "--workdir", str(tmp_path))
    assert done.returncode == 1 and "tackroom: error: no adapter named" in done.stderr
    assert "no harness's markers were found in" in done.stderr
    assert not (tmp_path / "runs").exists()


# -- detection: a flag, then the project file, then the repository's markers ----------------

MARKED = '[[adapter.{name}.detect]]\npath = "{marker}"\nscore = {score}\n'


def marked_adapter(config_dir: Path, name: str, marker: str = ".fake", score: int = 50) -> None:
    """A fake adapter the repository's ``marker`` selects (a variant's own markers make it a candidate)."""
    fake_adapter(config_dir, name=name, extra=MARKED.format(name=name, marker=marker, score=score))


def bare_repository(tmp_path: Path, *markers: str) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "sub").mkdir()
    for marker in markers:
        (repo / marker).mkdir()
    return repo


def test_a_run_without_a_name_or_project_harness_uses_the_detected_adapter_and_says_why(
    config_dir: Path, tmp_path: Path
) -> None:
    marked_adapter(config_dir, "fake")
    repo = bare_repository(tmp_path, ".fake")
    done = run_cli("run", "hello", "--json", "--workdir", str(repo / "sub"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["adapter"] == "fake"
    assert done.stderr.splitlines()[0] == f"tackroom: using fake: detected in {repo}: .fake 50"
    result = run(None, "hello", workdir=repo, runs_dir=tmp_path / "runs", profile=None)
    assert result.adapter == "fake"


def test_the_project_file_wins_over_detection_and_a_flag_over_both(config_dir: Path, tmp_path: Path) -> None:
    marked_adapter(config_dir, "fake")
    fake_adapter(config_dir, name="other")
    fake_adapter(config_dir, name="third")
    repo = bare_repository(tmp_path, ".fake")
    (repo / "tackroom.toml").write_text('harness = "other"\n', encoding="utf-8")
    done = run_cli("run", "hello", "--json", "--workdir", str(repo))
    assert json.loads(done.stdout)["adapter"] == "other"
    assert f'tackroom: using other: harness = "other" in {repo / "tackroom.toml"}' in done.stderr
    flagged = run_cli("run", "third", "hello", "--json", "--workdir", str(repo))
    assert json.loads(flagged.stdout)["adapter"] == "third" and "tackroom: using" not in flagged.stderr


def test_an_ambiguous_repository_is_an_error_listing_the_candidates(config_dir: Path, tmp_path: Path) -> None:
    marked_adapter(config_dir, "fake", ".shared", 7)
    marked_adapter(config_dir, "other", ".shared", 7)
    repo = bare_repository(tmp_path, ".shared")
    runs = tmp_path / "data"
    done = run_cli("run", "hello", "--workdir", str(repo), env={"XDG_DATA_HOME": str(runs)})
    assert done.returncode == 1 and not runs.exists()
    assert done.stderr == (
        f"tackroom: error: no adapter named, and {str(repo)!r} is set up for 2 harnesses equally (score 7): "
        "fake (.shared 7); other (.shared 7). Choose one: name one (`tackroom run NAME PROMPT`) or set "
        'harness = "NAME" in a tackroom.toml at the repository root\n'
    )
    with pytest.raises(DetectionError, match=r"fake \(\.shared 7\); other \(\.shared 7\)"):
        run(None, "hello", workdir=repo, runs_dir=runs)
    assert not runs.exists()


def test_profile_render_and_import_without_a_name_use_the_same_choice(
    config_dir: Path, tmp_path: Path
) -> None:
    marked_adapter(config_dir, "fake")
    repo = bare_repository(tmp_path, ".fake")
    rules(repo / ".tackroom" / "profile", "DETECTED")
    done = run_cli("profile", "render", "--json", cwd=repo / "sub")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["adapter"] == "fake"
    assert done.stderr.startswith(f"tackroom: using fake: detected in {repo}: .fake 50\n")
    imported = run_cli("profile", "import", "--json", "--from", str(tmp_path), "--into", "p", cwd=repo)
    assert json.loads(imported.stdout)["adapter"] == "fake" and "using fake" in imported.stderr
    (repo / ".other").mkdir()
    marked_adapter(config_dir, "other", ".other")
    tied = run_cli("profile", "render", cwd=repo)
    assert tied.returncode == 1 and "Choose one: name one (`tackroom profile render NAME`)" in tied.stderr


def test_a_lone_adapter_name_is_missing_its_prompt(config_dir: Path, tmp_path: Path) -> None:
    fake_adapter(config_dir)
    done = run_cli("run", "fake", "--workdir", str(tmp_path))
    assert done.returncode == 2 and "missing PROMPT" in done.stderr


@pytest.mark.parametrize(
    ("text", "line", "key", "message"),
    [
        ('profile = "../outside"\n', 2, "profile", "would leave"),
        ('profile = "/etc"\n', 2, "profile", "must be relative to the project root"),
        ('profile = "link"\n', 2, "profile", "symbolic link"),
        ('profile = "missing"\n', 2, "profile", "is not a directory"),
        ('profile = ""\n', 2, "profile", "must be a directory relative to the project root"),
        ("harness = 3\n", 2, "harness", "must be the name of an adapter"),
        ('[options]\nmax_turns = "many"\n', 3, "options.max_turns", "takes a whole number of at least 1"),
        ("[options]\nturbo = true\n", 3, "options.turbo", "unknown option"),
        ("options = 3\n", 2, "options", "must be a table of option values"),
    ],
)
def test_a_bad_project_file_names_file_line_and_key(
    config_dir: Path, tmp_path: Path, text: str, line: int, key: str, message: str
) -> None:
    repo = repository(tmp_path, "# the project\n" + text)
    (repo / "link").symlink_to(tmp_path)
    for load in (lambda: load_project(repo / "sub"), lambda: load_adapters(config=config_dir, project=repo)):
        with pytest.raises(ConfigError) as caught:
            load()
        [problem] = caught.value.problems
        assert (problem.file, problem.line, problem.key) == (str(repo / "tackroom.toml"), line, key)
        assert message in problem.message


def test_a_project_harness_must_name_a_known_adapter(config_dir: Path, tmp_path: Path) -> None:
    repo = repository(tmp_path, 'harness = "nosuch"\n')
    with pytest.raises(
        ConfigError, match=r"tackroom\.toml:1: harness: unknown adapter 'nosuch'; known adapters: "
    ):
        load_adapters(config=config_dir, project=repo)
    done = run_cli("run", "hello", "--workdir", str(repo))
    assert done.returncode == 1 and "harness: unknown adapter 'nosuch'" in done.stderr


def test_a_project_profile_inside_the_repository_is_accepted(tmp_path: Path) -> None:
    repo = repository(tmp_path, 'profile = "a/../agents"\n')
    (repo / "agents").mkdir()
    project = load_project(repo)
    assert project is not None and project.profile_dir == repo / "agents"
    assert load_project(tmp_path) is None  # not a repository: no project file applies


def too_old(config_dir: Path, version: str) -> None:
    # version_argv makes the fake print a version to stderr, as `claude --version` prints its own.
    fake_adapter(config_dir, extra=f'version_argv = ["--stderr", "{version} (Claude Code)"]\n')


def test_a_harness_older_than_min_version_is_refused_before_it_starts(
    config_dir: Path, tmp_path: Path
) -> None:
    too_old(config_dir, "2.0.9")
    with pytest.raises(HarnessVersionError) as caught:
        run("fake", "hello", workdir=tmp_path, runs_dir=tmp_path / "runs")
    message = str(caught.value)
    for part in (
        "claude-code 2.0.9",
        str(FAKE),
        "older than 2.1.0",
        "adapter 'fake'",
        "tackroom install fake",
    ):
        assert part in message
    assert not (tmp_path / "runs").exists()
    done = run_cli("run", "fake", "hello", "--workdir", str(tmp_path))
    assert done.returncode == 1 and done.stderr.startswith("tackroom: error: claude-code 2.0.9")


@pytest.mark.parametrize("version", ["2.1.0", "2.1", "2.10.1", "no version printed"])
def test_a_harness_at_or_past_min_version_or_of_unknown_version_runs(
    config_dir: Path, tmp_path: Path, version: str
) -> None:
    too_old(config_dir, version)
    result = run("fake", "hello", workdir=tmp_path, runs_dir=tmp_path / "runs")
    assert result.ok
    assert result.harness_version == (None if version.startswith("no") else version)
