"""Every name that becomes a path, and every link planted where tackroom writes, reads or deletes.

Install versions, adapter names that become run directories, install markers,
profile item names on import and render, skill file paths, and links planted
in a profile, a render target or an import source: each is refused with a
typed error, and nothing outside its root is written, deleted or read.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from pathlib import Path

import pytest

from clikit import run_cli
from tackroom.adapters.resolve import Adapter, load_adapters
from tackroom.errors import ConfigError, InstallError, UnsafePathError
from tackroom.harnesses import MARKER, data_dir, locate, managed_installs
from tackroom.install import install
from tackroom.run.runner import run

FAKE = Path(__file__).resolve().parent.parent / "fakes" / "fake_harness.py"


def operator_adapter(config_dir: Path, name: str, body: str) -> Adapter:
    """An operator table (``name`` quoted, so any string is a key) loaded the way a user's would be."""
    table = f'[adapter."{name}"]\nextends = "claude-code"\n{body}'
    (config_dir / "adapters.d" / "10-test.toml").write_text(table, encoding="utf-8")
    return load_adapters(config=config_dir)[name]


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# -- install: versions and markers -----------------------------------------------------------------


@pytest.fixture
def victims() -> dict[str, Path]:
    """An installed harness and a directory beside the data dir, both of which must survive."""
    data = data_dir()
    other = data / "harnesses" / "other" / "1.0"
    other.mkdir(parents=True)
    (other / MARKER).write_text("{}", encoding="utf-8")
    beside = data.parent / "victim"
    beside.mkdir(parents=True)
    (beside / "keep.txt").write_text("keep", encoding="utf-8")
    return {"other": other, "beside": beside}


# Every version here points inside this test's own temporary home (the absolute one at the
# victim): a regression must never delete anything outside it.
@pytest.mark.parametrize("version", ["../../victim", "..", ".", "1.0/../..", "<absolute>", "a\0b"])
def test_install_refuses_a_version_that_is_not_one_safe_name(
    config_dir: Path, victims: dict[str, Path], version: str
) -> None:
    # No npm on PATH: before the fix the prefix was deleted first, then the install failed.
    adapter = operator_adapter(config_dir, "npmless", 'install = { npm = "nothing-here" }\n')
    version = str(victims["beside"]) if version == "<absolute>" else version
    with pytest.raises(UnsafePathError, match="cannot be used as a file name"):
        install(adapter, version, env={"PATH": "/nonexistent"})
    assert (victims["other"] / MARKER).is_file()
    assert (victims["beside"] / "keep.txt").read_text() == "keep"


@pytest.mark.parametrize("version", ["../../victim", ".."])
def test_install_cli_refuses_a_bad_version_as_a_usage_error(
    victims: dict[str, Path], tmp_path: Path, version: str
) -> None:
    done = run_cli(
        "install",
        "claude-code",
        "--version",
        version,
        cwd=tmp_path,
        env={"PATH": "/nonexistent", "COLUMNS": "300"},
    )
    assert done.returncode == 2, done.stderr
    assert "cannot be used as a file name" in done.stderr and "Traceback" not in done.stderr
    assert (victims["other"] / MARKER).is_file() and (victims["beside"] / "keep.txt").is_file()


def plant_install(harness: str, version: str, marker: dict[str, str]) -> Path:
    prefix = data_dir() / "harnesses" / harness / version
    prefix.mkdir(parents=True)
    (prefix / MARKER).write_text(json.dumps(marker), encoding="utf-8")
    return prefix


def test_a_marker_pointing_outside_its_install_is_never_run(config_dir: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("#!/bin/sh\necho pwned\n", encoding="utf-8")
    elsewhere.chmod(0o755)
    adapter = operator_adapter(config_dir, "marked", "")
    plant_install("claude-code", "1.0", {"executable": str(elsewhere), "bin_dir": str(tmp_path)})
    with pytest.raises(InstallError, match="outside the install"):
        locate(adapter, os.environ)


def test_a_marker_climbing_out_by_dots_or_a_link_is_refused(config_dir: Path, tmp_path: Path) -> None:
    adapter = operator_adapter(config_dir, "marked", "")
    prefix = plant_install("claude-code", "1.0", {})
    (prefix / "bin").mkdir()
    (prefix / "bin" / "h").symlink_to("/bin/sh")
    (prefix / MARKER).write_text(json.dumps({"executable": str(prefix / "bin" / "h")}), encoding="utf-8")
    with pytest.raises(InstallError, match="outside the install"):
        locate(adapter, os.environ)
    (prefix / MARKER).write_text(json.dumps({"executable": f"{prefix}/../../../../bin/sh"}), encoding="utf-8")
    with pytest.raises(InstallError, match="outside the install"):
        locate(adapter, os.environ)


@pytest.mark.parametrize("text", ["not json", "[1, 2]", '{"executable": 5}', "[" * 100_000, "\udcff"])
def test_a_corrupt_marker_is_a_typed_error_naming_the_file(config_dir: Path, text: str) -> None:
    adapter = operator_adapter(config_dir, "marked", "")
    prefix = plant_install("claude-code", "1.0", {})
    (prefix / MARKER).write_bytes(text.encode("utf-8", "surrogateescape"))
    with pytest.raises(InstallError, match=str(prefix / MARKER)):
        locate(adapter, os.environ)


def test_an_install_directory_that_is_a_link_is_not_an_install(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / MARKER).write_text(json.dumps({"executable": "/bin/sh"}), encoding="utf-8")
    root = data_dir() / "harnesses" / "linked"
    root.mkdir(parents=True)
    (root / "1.0").symlink_to(real)
    assert managed_installs("linked") == {}


def test_the_harnesses_directory_may_be_the_users_link_but_nothing_below_it(tmp_path: Path) -> None:
    elsewhere = tmp_path / "bigger-disk"
    (elsewhere / "h" / "1.0").mkdir(parents=True)
    (elsewhere / "h" / "1.0" / MARKER).write_text("{}", encoding="utf-8")
    data_dir().mkdir(parents=True)
    (data_dir() / "harnesses").symlink_to(elsewhere)
    assert managed_installs("h") == {"1.0": data_dir() / "harnesses" / "h" / "1.0"}
    (elsewhere / "linked").symlink_to(elsewhere / "h")
    with pytest.raises(UnsafePathError, match="symbolic link"):
        managed_installs("linked")


# -- runs: adapter names become run directory names --------------------------------------------------


@pytest.mark.parametrize("name", ["x/../../escape", "../escape", "a/b"])
def test_an_adapter_name_never_puts_a_run_directory_outside_runs(
    config_dir: Path, tmp_path: Path, name: str
) -> None:
    # An adapter file cannot name one so: refused where it is written.
    with pytest.raises(ConfigError, match=re.escape(f"{name!r} cannot be an adapter's name")):
        operator_adapter(config_dir, name, f'executable = "{FAKE}"\n')
    # Nor can an Adapter made in code reach a run directory outside runs/.
    adapter = dataclasses.replace(operator_adapter(config_dir, "fine", f'executable = "{FAKE}"\n'), name=name)
    runs = tmp_path / "data" / "runs"
    with pytest.raises(UnsafePathError, match="adapter name"):
        run(adapter, "hi", workdir=tmp_path, runs_dir=runs)
    assert list(tmp_path.iterdir()) == []


# -- staged endpoint files: merged into what a copied config dir holds ---------------------------------


def test_a_staged_file_is_never_written_through_a_link_in_the_run_home(tmp_path: Path) -> None:
    from tackroom.adapters.plan import StagedFile
    from tackroom.run.home import stage_files

    real = tmp_path / "real-gemini"
    real.mkdir()
    (real / "settings.json").write_text('{"mine": 1}\n', encoding="utf-8")
    home = tmp_path / "run" / "home"
    home.mkdir(parents=True)
    (home / ".gemini").symlink_to(real)  # what a copy with symlinks=True of a linked config dir leaves
    staged = StagedFile(home / ".gemini" / "settings.json", "json", {"security": {"auth": "x"}})
    with pytest.raises(UnsafePathError, match="symbolic link"):
        stage_files((staged,), home)
    assert (real / "settings.json").read_text() == '{"mine": 1}\n'


def test_a_staged_file_merges_into_jsonc_keeping_comments(tmp_path: Path) -> None:
    from tackroom.adapters.plan import StagedFile
    from tackroom.profile import jsonc
    from tackroom.run.home import stage_files

    settings = tmp_path / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{\n  // mine\n  "theme": "dark",\n  "security": {"x": 1},\n}\n', encoding="utf-8")
    stage_files((StagedFile(settings, "json", {"security": {"auth": {"type": "key"}}}),), tmp_path)
    text = settings.read_text()
    assert "// mine" in text
    assert jsonc.loads(text) == {"theme": "dark", "security": {"x": 1, "auth": {"type": "key"}}}


@pytest.mark.parametrize("text", ["[1, 2]", '"just a string"', "{oops", "\udcff"])
def test_a_staged_file_never_replaces_what_it_cannot_merge_into(tmp_path: Path, text: str) -> None:
    from tackroom.adapters.plan import StagedFile
    from tackroom.errors import RunError
    from tackroom.run.home import stage_files

    settings = tmp_path / "settings.json"
    settings.write_bytes(text.encode("utf-8", "surrogateescape"))
    with pytest.raises(RunError, match=str(settings)):
        stage_files((StagedFile(settings, "json", {"a": 1}),), tmp_path)
    assert settings.read_bytes() == text.encode("utf-8", "surrogateescape")
