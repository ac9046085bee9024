"""Version-conditioned adapter data: ``[[adapter.X.since]]`` entries, resolved per harness version.

An entry holds the fields that differ from its version on. The adapter for a
version is every layer (built-in, extends, operator) with its entries up to
that version applied, oldest first; its provenance says which entry set a
field, and its hash differs from the other versions' exactly when its data does.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from clikit import run_cli
from runkit import FAKE, RECORDED, SLOTS
from tackroom.adapters.resolve import Adapter, load_adapters, resolve_builtins
from tackroom.errors import ConfigError, HarnessNotFoundError, Problem
from tackroom.harnesses import MARKER, data_dir
from tackroom.run.runner import run

CLAUDE = resolve_builtins()["claude-code"]


def write(config_dir: Path, text: str, name: str = "10-since.toml") -> Path:
    path = config_dir / "adapters.d" / name
    path.write_text(text, encoding="utf-8")
    return path


def problems(config_dir: Path) -> list[Problem]:
    with pytest.raises(ConfigError) as caught:
        load_adapters(config=config_dir)
    return list(caught.value.problems)


VARIANT = """\
[adapter.variant]
extends = "claude-code"

[[adapter.variant.since]]
version = "4.0.0"
version_argv = ["version", "--short"]

[[adapter.variant.since]]
version = "3.0.0"

[adapter.variant.since.env.set]
FROM_THREE = "3"
"""


def test_an_entry_applies_from_its_version_on_with_its_file_and_line(config_dir: Path) -> None:
    path = write(config_dir, VARIANT)
    variant = load_adapters(config=config_dir)["variant"]
    before, three, four = variant.at("2.9.9"), variant.at("3.0.0"), variant.at("4.2")
    assert "FROM_THREE" not in before.effective["env"]["set"]
    assert three.effective["env"]["set"]["FROM_THREE"] == "3"
    assert three.provenance["env.set.FROM_THREE"] == f"{path}:12 since 3.0.0"
    # Entries apply oldest first whatever their order in the file; arrays replace.
    assert four.effective["env"]["set"]["FROM_THREE"] == "3"
    assert four.effective["version_argv"] == ["version", "--short"]
    assert four.provenance["version_argv"] == f"{path}:6 since 4.0.0"
    assert three.effective["version_argv"] == CLAUDE.effective["version_argv"]
    assert len({before.hash, three.hash, four.hash}) == 3
    assert variant.since_versions == ("2.1.281", "2.1.304", "3.0.0", "4.0.0")


def test_a_pre_release_is_older_than_its_release(config_dir: Path) -> None:
    write(config_dir, VARIANT)
    variant = load_adapters(config=config_dir)["variant"]
    assert "FROM_THREE" not in variant.at("3.0.0-beta.1").effective["env"]["set"]
    assert variant.at("3.0.1-beta.1").effective["env"]["set"]["FROM_THREE"] == "3"


def test_the_same_data_hashes_the_same_whatever_the_version(config_dir: Path) -> None:
    write(config_dir, VARIANT)
    variant = load_adapters(config=config_dir)["variant"]
    assert variant.at("3.0.0").hash == variant.at("3.9.9").hash
    assert variant.at("3.0.0").version == "3.0.0" and variant.at("3.9.9").version == "3.9.9"


def test_a_loaded_adapter_is_the_one_for_its_verified_version() -> None:
    assert CLAUDE.verified_with is not None and CLAUDE.version == CLAUDE.verified_with
    assert CLAUDE.at(CLAUDE.verified_with).effective == CLAUDE.effective
    assert CLAUDE.at(CLAUDE.verified_with).hash == CLAUDE.hash


@pytest.mark.parametrize("version", [None, "not a version", ""])
def test_an_unknown_version_gets_the_verified_versions_data(version: str | None) -> None:
    adapter = CLAUDE.at(version)
    assert adapter.effective == CLAUDE.effective and adapter.version is None


def test_builtin_entries_say_builtin_since() -> None:
    newest, oldest = CLAUDE.at("2.1.332"), CLAUDE.at("2.1.197")
    assert newest.effective["env"]["set"]["ENABLE_TOOL_SEARCH"] == "false"
    assert newest.provenance["env.set.ENABLE_TOOL_SEARCH"] == "builtin since 2.1.304"
    assert "ENABLE_TOOL_SEARCH" not in oldest.effective["env"]["set"]
    assert {d["path"] for d in newest.effective["detect"]} - {
        d["path"] for d in oldest.effective["detect"]
    } == {"AGENTS.md"}
    assert oldest.hash != newest.hash


def test_the_operators_field_wins_over_a_builtin_entry(config_dir: Path) -> None:
    path = write(config_dir, '[adapter.claude-code.env.set]\nENABLE_TOOL_SEARCH = "auto"\n')
    claude = load_adapters(config=config_dir)["claude-code"].at("2.1.332")
    assert claude.effective["env"]["set"]["ENABLE_TOOL_SEARCH"] == "auto"
    assert claude.provenance["env.set.ENABLE_TOOL_SEARCH"] == f"{path}:2"


def test_an_operator_may_add_entries_to_a_builtin(config_dir: Path) -> None:
    path = write(
        config_dir,
        '[adapter.claude-code]\nexecutable = "/x/claude"\n\n'
        '[[adapter.claude-code.since]]\nversion = "2.1.320"\nenv = { set = { LOCAL_FIX = "1" } }\n',
    )
    claude = load_adapters(config=config_dir)["claude-code"]
    assert claude.since_versions == ("2.1.281", "2.1.304", "2.1.320")
    newest = claude.at("2.1.332")
    assert newest.effective["env"]["set"]["LOCAL_FIX"] == "1"
    assert newest.effective["env"]["set"]["ENABLE_TOOL_SEARCH"] == "false"
    assert newest.provenance["env.set.LOCAL_FIX"] == f"{path}:6 since 2.1.320"
    assert "LOCAL_FIX" not in claude.at("2.1.319").effective["env"]["set"]
    assert claude.at("2.1.197").effective["executable"] == "/x/claude"


def test_extends_keeps_the_version_in_provenance(config_dir: Path) -> None:
    write(config_dir, '[adapter.twin]\nextends = "claude-code"\n')
    twin = load_adapters(config=config_dir)["twin"].at("2.1.332")
    assert twin.provenance["env.set.ENABLE_TOOL_SEARCH"] == "extends claude-code since 2.1.304"
    assert twin.hash == CLAUDE.at("2.1.332").hash


def test_a_cached_load_resolves_versions_alike(config_dir: Path) -> None:
    write(config_dir, VARIANT)
    first = load_adapters(config=config_dir)["variant"]
    second = load_adapters(config=config_dir)["variant"]  # from the cache
    assert "spec" not in second.__dict__  # it was not validated again
    for version in ("2.1.197", "3.0.0", "4.0.0"):
        assert second.at(version).effective == first.at(version).effective
        assert second.at(version).provenance == first.at(version).provenance
        assert second.at(version).hash == first.at(version).hash


# -- errors ---------------------------------------------------------------------------------


def test_since_must_be_an_array_of_tables(config_dir: Path) -> None:
    path = write(config_dir, '[adapter.claude-code]\nsince = "2.1.300"\n')
    [problem] = problems(config_dir)
    assert (problem.file, problem.line, problem.key) == (str(path), 2, "adapter.claude-code.since")
    assert "array of tables" in problem.message


def test_every_bad_entry_is_named_in_one_pass(config_dir: Path) -> None:
    path = write(
        config_dir,
        "[[adapter.claude-code.since]]\n"  # 1
        'env = { set = { A = "1" } }\n'  # 2: no version
        "[[adapter.claude-code.since]]\n"  # 3
        'version = "latest"\n'  # 4
        "[[adapter.claude-code.since]]\n"  # 5
        'version = "3.0.0"\n'  # 6
        "[[adapter.claude-code.since]]\n"  # 7
        'version = "3.0.0"\n'  # 8
        "[adapter.claude-code.since.options]\n"  # 9
        'model = ["--m", "{{value}}"]\n'  # 10
        "[[adapter.claude-code.since]]\n"  # 11
        'version = "4.0.0"\n'  # 12
        'verified_with = "4.0.0"\n',  # 13
    )
    found = {(p.key, p.line): p.message for p in problems(config_dir)}
    assert all(p.file == str(path) for p in problems(config_dir))
    assert "missing required key 'version'" in found[("adapter.claude-code.since.0", 1)]
    assert "not a version" in found[("adapter.claude-code.since.1.version", 4)]
    assert "index 2 is for 3.0.0 too: merge them" in found[("adapter.claude-code.since.3.version", 8)]
    assert "cannot change by version" in found[("adapter.claude-code.since.4.verified_with", 13)]
    assert len(found) == 4


def test_an_unknown_key_in_an_entry_names_its_line_and_version(config_dir: Path) -> None:
    path = write(
        config_dir,
        '[adapter.claude-code]\nexecutable = "c"\n\n[[adapter.claude-code.since]]\nversion = "3.0.0"\n'
        "[adapter.claude-code.since.env]\nsett = { A = '1' }\n",
    )
    [problem] = problems(config_dir)
    assert (problem.file, problem.line, problem.key) == (str(path), 7, "adapter.claude-code.env.sett")
    assert problem.message == "unknown key (from harness version 3.0.0 on)"


def test_an_entry_that_breaks_the_table_is_an_error_at_load(config_dir: Path) -> None:
    path = write(config_dir, '[[adapter.claude-code.since]]\nversion = "3.0.0"\none_shot = ["-p"]\n')
    found = problems(config_dir)
    prompt = next(p for p in found if "{{prompt}} must appear exactly once" in p.message)
    assert (prompt.file, prompt.line, prompt.key) == (str(path), 3, "adapter.claude-code.one_shot")
    assert prompt.message.endswith("(from harness version 3.0.0 on)")
    # The options the built-in renders lost their slots: named, and blamed on the entry that did it.
    model = next(p for p in found if p.key == "adapter.claude-code.options.model")
    assert (model.file, model.line) == (str(path), 3)
    assert "no {{opt.model}} slot" in model.message and f"since 3.0.0 entry at {path}:3" in model.message


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('previously_verified = ["2.1.400"]', "not older than verified_with"),
        ('previously_verified = ["2.1.197", "2.1.197"]', "twice"),
        ('previously_verified = ["latest"]', "bad value"),
    ],
)
def test_previously_verified_lists_distinct_older_versions(
    config_dir: Path, table: str, message: str
) -> None:
    path = write(config_dir, f"[adapter.claude-code]\n{table}\n")
    [problem] = problems(config_dir)
    assert (problem.file, problem.line) == (str(path), 2)
    assert problem.key.startswith("adapter.claude-code.previously_verified") and message in problem.message


def test_every_verified_builtin_names_its_versions() -> None:
    for name, adapter in resolve_builtins().items():
        assert adapter.verified_versions[:1] == ((adapter.verified_with,) if adapter.verified_with else ()), (
            name
        )
    assert CLAUDE.verified_versions == ("2.1.332", "2.1.197")
    assert resolve_builtins()["qwen"].verified_versions == ("0.24.4", "0.15.10")


# -- the CLI ---------------------------------------------------------------------------------


def test_show_resolves_for_a_version_and_says_which_entry_set_a_field() -> None:
    done = run_cli("adapters", "show", "claude-code", "--version", "2.1.332", "--json")
    shown = json.loads(done.stdout)
    assert shown["version"] == "2.1.332" and shown["since"] == ["2.1.281", "2.1.304"]
    assert shown["provenance"]["env.set.ENABLE_TOOL_SEARCH"] == "builtin since 2.1.304"
    old = json.loads(run_cli("adapters", "show", "claude-code", "--version", "2.1.197", "--json").stdout)
    assert "ENABLE_TOOL_SEARCH" not in old["effective"]["env"]["set"] and old["hash"] != shown["hash"]
    table = run_cli("adapters", "show", "claude-code", "--version", "2.1.332", env={"COLUMNS": "250"})
    assert "builtin since 2.1.304" in table.stdout


def test_show_refuses_a_version_that_is_no_version() -> None:
    done = run_cli("adapters", "show", "claude-code", "--version", "newest")
    assert done.returncode == 2 and "not a version" in done.stderr and "Traceback" not in done.stderr


def test_render_shows_the_plan_for_a_version() -> None:
    new = json.loads(run_cli("adapters", "render", "claude-code", "--version", "2.1.332", "--json").stdout)
    old = json.loads(run_cli("adapters", "render", "claude-code", "--version", "2.1.197", "--json").stdout)
    assert new["env"]["ENABLE_TOOL_SEARCH"] == "false" and "ENABLE_TOOL_SEARCH" not in old["env"]
    assert new["hash"] == CLAUDE.at("2.1.332").hash != old["hash"]


# -- runs ------------------------------------------------------------------------------------


def install_fake(version: str) -> Path:
    """A managed install of claude-code ``version`` whose executable is the scripted fake harness."""
    prefix = data_dir() / "harnesses" / "claude-code" / version
    (prefix / "bin").mkdir(parents=True)
    shutil.copy2(FAKE, prefix / "bin" / "claude")
    marker = {"adapter": "claude-code", "version": version, "executable": str(prefix / "bin" / "claude")}
    (prefix / MARKER).write_text(json.dumps(marker), encoding="utf-8")
    return prefix


def versioned_fake(config_dir: Path) -> Adapter:
    """An adapter run as claude-code's managed installs, whose env differs from 5.0.0 on."""
    write(
        config_dir,
        '[adapter.fake]\nextends = "claude-code"\n'
        f'one_shot = ["--print-env", "SINCE_PROOF", "--replay", "{RECORDED}", "--prompt", "{{{{prompt}}}}", '
        f"{SLOTS}]\n"
        '[[adapter.fake.since]]\nversion = "5.0.0"\nenv = { set = { SINCE_PROOF = "from-5" } }\n',
    )
    return load_adapters(config=config_dir)["fake"]


def test_a_run_uses_the_adapter_for_the_version_that_runs(config_dir: Path, tmp_path: Path) -> None:
    adapter = versioned_fake(config_dir)
    install_fake("4.0.0")
    install_fake("5.1.0")
    for version, proof in (("4.0.0", False), ("5.1.0", True), (None, True)):  # None: the newest installed
        result = run(adapter, "hi", workdir=tmp_path, runs_dir=tmp_path / "runs", harness_version=version)
        assert result.ok, result.error
        ran = version or "5.1.0"
        assert result.harness_version == ran
        assert result.adapter_hash == adapter.at(ran).hash
        stdout = (result.run_dir / "stdout.log").read_text()
        assert ("SINCE_PROOF=from-5" in stdout) is proof, (version, stdout[:200])
    assert adapter.at("4.0.0").hash != adapter.at("5.1.0").hash


def test_a_version_that_is_not_installed_says_how_to_install_it(config_dir: Path, tmp_path: Path) -> None:
    adapter = versioned_fake(config_dir)
    install_fake("4.0.0")
    with pytest.raises(HarnessNotFoundError, match=r"tackroom install fake --version 9\.9\.9"):
        run(adapter, "hi", workdir=tmp_path, runs_dir=tmp_path / "runs", harness_version="9.9.9")
    assert not (tmp_path / "runs").exists()
