"""Every load error names the file, the line, the table and the key, and all are reported in one pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from tackroom.adapters.resolve import load_adapters
from tackroom.errors import ConfigError, Problem


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def problems(config: Path, project: Path | None = None) -> list[Problem]:
    with pytest.raises(ConfigError) as caught:
        load_adapters(config=config, project=project)
    return list(caught.value.problems)


def only(found: list[Problem]) -> Problem:
    assert len(found) == 1, found
    return found[0]


def test_unknown_key_names_file_line_and_key(config_dir: Path) -> None:
    path = write(config_dir, "adapters.d/10-claude.toml", '[adapter.claude-code]\n\nexecutabel = "/x"\n')
    problem = only(problems(config_dir))
    assert (problem.file, problem.line, problem.key) == (str(path), 3, "adapter.claude-code.executabel")
    assert "unknown key" in problem.message
    assert str(problem).startswith(f"{path}:3: adapter.claude-code.executabel: unknown key")


def test_unknown_nested_key_names_its_dotted_path(config_dir: Path) -> None:
    write(config_dir, "tackroom.toml", "[adapter.claude-code.options]\nmax_turn = ['--x', '{{value}}']\n")
    problem = only(problems(config_dir))
    assert problem.key == "adapter.claude-code.options.max_turn"
    assert problem.line == 2


def test_bad_type(config_dir: Path) -> None:
    write(config_dir, "adapters.d/a.toml", "[adapter.claude-code]\nexecutable = 5\n")
    problem = only(problems(config_dir))
    assert (problem.key, problem.line) == ("adapter.claude-code.executable", 2)
    assert "bad value" in problem.message and "5" in problem.message


def test_extends_cycle_names_the_files(config_dir: Path) -> None:
    a = write(config_dir, "adapters.d/10-a.toml", '[adapter.aa]\nextends = "bb"\n')
    b = write(config_dir, "adapters.d/20-b.toml", '[adapter.bb]\nextends = "aa"\n')
    found = problems(config_dir)
    assert found and all("extends cycle" in p.message for p in found)
    text = " ".join(str(p) for p in found)
    assert str(a) in text and str(b) in text
    assert any(p.key == "adapter.bb.extends" and p.line == 2 for p in found)


def test_self_extends_is_a_cycle(config_dir: Path) -> None:
    write(config_dir, "adapters.d/a.toml", '[adapter.loop]\nextends = "loop"\n')
    assert "extends cycle: loop -> loop" in only(problems(config_dir)).message


def test_new_name_without_extends(config_dir: Path) -> None:
    path = write(config_dir, "adapters.d/a.toml", '\n[adapter.mine]\nexecutable = "x"\n')
    problem = only(problems(config_dir))
    assert (problem.file, problem.line, problem.key) == (str(path), 2, "adapter.mine")
    assert "must set extends" in problem.message and "claude-code" in problem.message


@pytest.mark.parametrize("target", ["generic", "nope"])
def test_extends_unknown_name(config_dir: Path, target: str) -> None:
    write(config_dir, "adapters.d/a.toml", f'[adapter.mine]\nextends = "{target}"\n')
    problem = only(problems(config_dir))
    assert problem.key == "adapter.mine.extends" and problem.line == 2
    assert f"extends unknown adapter {target!r}" in problem.message


@pytest.mark.parametrize("name", ["claude-code", "mine"])
def test_operator_table_cannot_set_family(config_dir: Path, name: str) -> None:
    extends = "" if name == "claude-code" else 'extends = "claude-code"\n'
    write(config_dir, "adapters.d/a.toml", f'[adapter.{name}]\n{extends}family = "claude-code"\n')
    found = problems(config_dir)
    problem = next(p for p in found if p.key == f"adapter.{name}.family")
    assert "family cannot be set by an operator" in problem.message


def test_same_adapter_in_two_files_names_both(config_dir: Path) -> None:
    first = write(config_dir, "adapters.d/10-a.toml", '[adapter.claude-code]\nexecutable = "/a"\n')
    second = write(config_dir, "adapters.d/20-b.toml", '[adapter.claude-code]\nexecutable = "/b"\n')
    problem = only(problems(config_dir))
    assert problem.file == str(second) and str(first) in problem.message


def test_tackroom_toml_and_drop_in_count_as_two_files(config_dir: Path) -> None:
    write(config_dir, "tackroom.toml", '[adapter.claude-code]\nexecutable = "/a"\n')
    write(config_dir, "adapters.d/x.toml", '[adapter.claude-code]\nexecutable = "/b"\n')
    assert "also defined in" in only(problems(config_dir)).message


def test_project_file_cannot_define_adapters(config_dir: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "sub").mkdir()
    project = write(
        repo, "tackroom.toml", 'harness = "claude-code"\n\n[adapter.claude-code]\nexecutable = "/evil"\n'
    )
    problem = only(problems(config_dir, project=repo / "sub"))
    assert (problem.file, problem.line, problem.key) == (str(project), 3, "adapter.claude-code")
    assert "may select an adapter, never define one" in problem.message


def test_project_file_that_only_selects_is_fine(config_dir: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    write(repo, "tackroom.toml", 'harness = "claude-code"\n[options]\nmax_turns = 3\n')
    assert "claude-code" in load_adapters(config=config_dir, project=repo)


@pytest.mark.parametrize(
    ("one_shot", "expected"),
    [
        ('["-p"]', "must appear exactly once (found 0)"),
        ('["{{prompt}}", "--again", "{{prompt}}"]', "must appear exactly once (found 2)"),
        ('["{{opt.max_turnz}}", "{{prompt}}"]', "unknown option slot '{{opt.max_turnz}}'"),
        ('["{{promt}}"]', "unknown placeholder {{promt}}"),
        ('["--x={{opt.model}}", "{{prompt}}"]', "must be whole elements"),
    ],
)
def test_one_shot_grammar(config_dir: Path, one_shot: str, expected: str) -> None:
    write(
        config_dir, "adapters.d/a.toml", f'[adapter.mine]\nextends = "claude-code"\none_shot = {one_shot}\n'
    )
    found = problems(config_dir)
    problem = next(p for p in found if expected in p.message)
    assert (problem.key, problem.line) == ("adapter.mine.one_shot", 3)


def test_option_without_a_slot_fails_closed(config_dir: Path) -> None:
    write(config_dir, "adapters.d/a.toml", '[adapter.claude-code]\none_shot = ["-p", "{{prompt}}"]\n')
    found = problems(config_dir)
    keys = {p.key for p in found}
    assert "adapter.claude-code.options.model" in keys
    assert all("no {{opt." in p.message for p in found if ".options." in p.key)
    # The trust table's flags lost their slot too: an untrusted project's config would load.
    assert any(p.key == "adapter.claude-code.one_shot" and "no {{trust}} slot" in p.message for p in found)
    # Reported at the built-in's line: the slot list came from the operator, the option from the built-in.
    assert any(p.file == "builtin/claude-code.toml" for p in found)


def test_flag_and_value_options_are_checked(config_dir: Path) -> None:
    write(
        config_dir,
        "adapters.d/a.toml",
        "[adapter.claude-code.options]\nauto_accept = ['--yes={{value}}']\nmodel = ['--model']\n",
    )
    messages = {p.key: p.message for p in problems(config_dir)}
    assert "flag option" in messages["adapter.claude-code.options.auto_accept"]
    assert "needs {{value}}" in messages["adapter.claude-code.options.model"]


def test_toml_syntax_error_has_a_line(config_dir: Path) -> None:
    path = write(config_dir, "adapters.d/a.toml", '[adapter.claude-code]\nexecutable = "x\n')
    problem = only(problems(config_dir))
    assert problem.file == str(path) and problem.line == 2 and "TOML syntax error" in problem.message


def test_every_problem_in_one_pass(config_dir: Path) -> None:
    write(config_dir, "adapters.d/10.toml", "[adapter.claude-code]\nbogus = 1\nexecutable = 2\n")
    write(config_dir, "adapters.d/20.toml", '[adapter.other]\nexecutable = "x"\n')
    write(config_dir, "adapters.d/30.toml", "[adapter.broken\n")
    found = problems(config_dir)
    assert len(found) == 4
    assert [p.file.rsplit("/", 1)[-1] for p in found] == ["10.toml", "10.toml", "20.toml", "30.toml"]


def test_unknown_top_level_key(config_dir: Path) -> None:
    write(config_dir, "tackroom.toml", "[adapters.claude-code]\nexecutable = 'x'\n")
    problem = only(problems(config_dir))
    assert (problem.key, problem.line) == ("adapters", 1)


@pytest.mark.parametrize(
    ("table", "key", "message"),
    [
        # A renderer on a capability it does not serve loaded, then crashed with AttributeError.
        (
            '[adapter.claude-code.capabilities.rules]\nrender = "claude-settings"\n',
            "render",
            "writes hooks, not rules",
        ),
        # json-merge and toml-merge were in the schema; no code implements them.
        (
            '[adapter.claude-code.capabilities.mcp]\nrender = "json-merge"\n',
            "render",
            "no renderer 'json-merge'",
        ),
        ('[adapter.claude-code.capabilities.rules]\nformat = "toml"\n', "format", "takes no format"),
        ('[adapter.claude-code.capabilities.skills]\nformat = "yaml"\n', "format", "bad value"),
    ],
)
def test_a_renderer_must_serve_its_capability(config_dir: Path, table: str, key: str, message: str) -> None:
    path = write(config_dir, "adapters.d/10-x.toml", table)
    problem = only(problems(config_dir))
    assert problem.file == str(path) and problem.line is not None
    assert problem.key.endswith(key) and message in problem.message


def test_engines_come_from_their_families() -> None:
    from tackroom.families import get_family
    from tackroom.profile.engines import engines

    found = engines()
    assert {"concat", "dir", "mcp-json"} <= set(found)
    for family, name in (
        ("claude-code", "claude-settings"),
        ("codex", "codex-toml"),
        ("gemini", "gemini-settings"),
        ("opencode", "opencode-plugin"),
        ("copilot", "copilot-hooks"),
        ("pi", "pi-extension"),
    ):
        assert found[name] in get_family(family).engines()
