"""Operator adapter files and project files are outside input: fuzzed, they only ever raise ConfigError.

Random tables, built-in tables with one field mutated, and corrupted bytes
all go through the real loader. Whatever the file holds, the outcome is an
AdapterSet or one ConfigError whose every problem names a file.
"""

from __future__ import annotations

import copy
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from hypothesis import given
from hypothesis import strategies as st

from hostile.fuzz import FUZZ
from tackroom.adapters.resolve import BUILTIN_DIR, AdapterSet, load_adapters
from tackroom.errors import ConfigError
from tackroom.project import load_project

if sys.version_info >= (3, 14):
    import tomllib
else:
    import tomli as tomllib

BUILTINS = {path.stem: tomllib.loads(path.read_text()) for path in sorted(BUILTIN_DIR.glob("*.toml"))}
BUILTIN_FILES = {f"builtin/{path.name}" for path in BUILTIN_DIR.glob("*.toml")}
KEYS = sorted({key for data in BUILTINS.values() for table in data["adapter"].values() for key in table})

_SCALARS = (
    st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=True)
    | st.text(max_size=12)
    | st.sampled_from(["{{prompt}}", "{{opt.model}}", "{{value}}", "${HOME}", "~/.x", "claude-code", "codex"])
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(KEYS) | st.text(min_size=1, max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)
_NAMES = st.sampled_from(sorted(BUILTINS)) | st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One directory for every example of a test: each example rewrites the files it needs."""
    return tmp_path_factory.mktemp("fuzz")


def config_with(scratch: Path, text: str | bytes) -> tuple[Path, Path]:
    """A config dir holding one operator file with ``text``; returns (config dir, file)."""
    config = scratch / "config"
    (config / "adapters.d").mkdir(parents=True, exist_ok=True)
    path = config / "adapters.d" / "10-fuzz.toml"
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return config, path


def load_or_config_error(config: Path, operator_file: Path, project: Path | None = None) -> None:
    try:
        loaded = load_adapters(config=config, project=project)
    except ConfigError as exc:
        known = {str(operator_file), *BUILTIN_FILES, *([str(project / "tackroom.toml")] if project else [])}
        assert exc.problems
        for problem in exc.problems:
            assert problem.file in known, problem
            assert str(problem).startswith(problem.file)
        return
    assert isinstance(loaded, AdapterSet)


@pytest.fixture(autouse=True)
def _no_cache() -> Iterator[None]:
    # Each example is a new file: caching them would only fill the test's cache dir.
    os.environ["TACKROOM_NO_CACHE"] = "1"
    yield
    del os.environ["TACKROOM_NO_CACHE"]


@FUZZ
@given(
    tables=st.dictionaries(_NAMES, st.dictionaries(st.sampled_from(KEYS), _VALUES, max_size=5), max_size=3)
)
def test_random_operator_tables_load_or_raise_config_error(scratch: Path, tables: dict[str, Any]) -> None:
    try:
        text = tomli_w.dumps({"adapter": tables})
    except (TypeError, ValueError):  # nothing TOML can hold (nan keys and the like)
        return
    load_or_config_error(*config_with(scratch, text))


def _mutate(data: Any, path: list[str | int], value: Any, delete: bool) -> Any:
    """``data`` with the node at ``path`` (indices taken modulo) replaced by ``value`` or deleted."""
    node = data
    for step in path:
        if isinstance(node, dict) and node:
            key = sorted(node)[hash(step) % len(node)]
            if not isinstance(node[key], dict | list) or step == path[-1]:
                if delete:
                    del node[key]
                else:
                    node[key] = value
                return data
            node = node[key]
        elif isinstance(node, list) and node:
            index = hash(step) % len(node)
            if delete:
                del node[index]
            else:
                node[index] = value
            return data
    return data


@FUZZ
@given(
    builtin=st.sampled_from(sorted(BUILTINS)),
    variant=st.booleans(),
    path=st.lists(st.integers(min_value=0, max_value=50), min_size=1, max_size=5),
    value=_VALUES,
    delete=st.booleans(),
)
def test_mutated_builtin_tables_load_or_raise_config_error(
    scratch: Path, builtin: str, variant: bool, path: list[int], value: Any, delete: bool
) -> None:
    table = copy.deepcopy(next(iter(BUILTINS[builtin]["adapter"].values())))
    table.pop("family")  # only a built-in may set it; that refusal is tested elsewhere
    if variant:
        table["extends"] = builtin
    table = _mutate(table, list(path), value, delete)
    try:
        text = tomli_w.dumps({"adapter": {f"{builtin}-fuzz" if variant else builtin: table}})
    except (TypeError, ValueError):
        return
    load_or_config_error(*config_with(scratch, text))


@FUZZ
@given(
    builtin=st.sampled_from(sorted(BUILTIN_DIR.glob("*.toml"))),
    at=st.integers(min_value=0),
    junk=st.binary(min_size=1, max_size=6),
)
def test_corrupted_bytes_load_or_raise_config_error(
    scratch: Path, builtin: Path, at: int, junk: bytes
) -> None:
    source = builtin.read_bytes().replace(b"family =", b"# family =")
    cut = at % (len(source) + 1)
    load_or_config_error(*config_with(scratch, source[:cut] + junk + source[cut:]))


_PROJECT = st.dictionaries(
    st.sampled_from(["harness", "options", "profile", "adapter"]) | st.text(min_size=1, max_size=6),
    _VALUES
    | st.dictionaries(st.sampled_from(["model", "max_turns", "auto_accept", "allowed_tools", "x"]), _VALUES)
    | st.sampled_from(["claude-code", "../outside", "/etc", "prof", ".", "link/x"]),
    max_size=4,
)


@FUZZ
@given(data=_PROJECT)
def test_project_files_load_or_raise_config_error(scratch: Path, data: dict[str, Any]) -> None:
    try:
        text = tomli_w.dumps(data)
    except (TypeError, ValueError):
        return
    repo = scratch / "repo"
    if not repo.exists():
        (repo / ".git").mkdir(parents=True)
        (repo / "prof").mkdir()
        (repo / "link").symlink_to(scratch)
        (scratch / "empty-config").mkdir()
    (repo / "tackroom.toml").write_text(text, encoding="utf-8")
    try:
        project = load_project(repo)
    except ConfigError as exc:
        assert all(p.file == str(repo / "tackroom.toml") for p in exc.problems)
    else:
        assert project is not None
        if project.profile is not None:  # a profile it names is inside the repository, never a link
            assert repo in project.profile.parents or project.profile == repo
    config = scratch / "empty-config"
    load_or_config_error(config, config / "none", project=repo)


def test_a_1500_long_extends_chain_resolves_without_recursion(config_dir: Path) -> None:
    lines = ['[adapter.a1499]\nextends = "claude-code"\n']
    lines += [f'[adapter.a{i}]\nextends = "a{i + 1}"\n' for i in range(1499)]
    (config_dir / "adapters.d" / "chain.toml").write_text("".join(lines), encoding="utf-8")
    adapters = load_adapters(config=config_dir)
    assert adapters["a0"].extends == "a1" and adapters["a0"].harness == "claude-code"
    assert adapters["a0"].hash == adapters["a1499"].hash


def test_a_broken_link_in_a_long_chain_is_reported_once(config_dir: Path) -> None:
    lines = ['[adapter.a1499]\nextends = "nosuch"\n']
    lines += [f'[adapter.a{i}]\nextends = "a{i + 1}"\n' for i in range(1499)]
    (config_dir / "adapters.d" / "chain.toml").write_text("".join(lines), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_adapters(config=config_dir)
    [problem] = caught.value.problems
    assert (problem.key, problem.line) == ("adapter.a1499.extends", 2)
    assert "extends unknown adapter 'nosuch'" in problem.message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"[adapter.x]\nextends = 'codex'\n\xff\xfe = 1\n", "not UTF-8 (byte 0xff at offset 30)"),
        (b"[adapter.x]\nenv.set.X = " + b"[" * 500 + b"]" * 500 + b"\n", "nested too deeply"),
        (b"[adapter.x]\nextends = 'codex'\nexecutable = '" + b"x" * 500 + b"'\nprompt_stdin = 3\n", "got 3"),
    ],
)
def test_unreadable_operator_files_name_the_file(tmp_path: Path, text: bytes, message: str) -> None:
    config, path = config_with(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_adapters(config=config)
    assert str(caught.value).startswith(str(path)) and message in str(caught.value)


def test_a_dangling_link_in_adapters_d_is_reported_not_skipped(config_dir: Path) -> None:
    link = config_dir / "adapters.d" / "20-gone.toml"
    link.symlink_to(config_dir / "nowhere.toml")
    with pytest.raises(ConfigError, match=r"20-gone\.toml: cannot read: No such file or directory"):
        load_adapters(config=config_dir)


def test_a_long_bad_value_is_cut_in_the_message(config_dir: Path) -> None:
    (config_dir / "adapters.d" / "10.toml").write_text(
        "[adapter.x]\nextends = 'codex'\nprompt_stdin = [" + ", ".join(['"' + "v" * 50 + '"'] * 400) + "]\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as caught:
        load_adapters(config=config_dir)
    assert len(str(caught.value)) < 400
