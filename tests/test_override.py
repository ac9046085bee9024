"""An operator override changes exactly what it names; provenance and hashes show it."""

from __future__ import annotations

from pathlib import Path

from tackroom.adapters.resolve import load_adapters, resolve_builtins


def test_override_of_one_field(config_dir: Path) -> None:
    path = config_dir / "adapters.d" / "00-adapters.toml"
    path.write_text('# pinned\n[adapter.claude-code]\nexecutable = "/x/claude"\n', encoding="utf-8")
    adapters = load_adapters(config=config_dir)
    builtin = resolve_builtins()
    claude = adapters["claude-code"]
    assert claude.spec.executable == "/x/claude"
    assert claude.effective | {"executable": "claude"} == builtin["claude-code"].effective
    provenance = claude.provenance
    assert provenance.pop("executable") == f"{path}:3"
    # Every other field is the built-in's, some from its since entries ("builtin since 2.1.304").
    assert {label.split(" since ")[0] for label in provenance.values()} == {"builtin"}
    assert claude.source == str(path)
    assert claude.hash != builtin["claude-code"].hash
    for name, adapter in adapters.items():
        if name != "claude-code":
            assert adapter.hash == builtin[name].hash, name


def test_nested_tables_merge_by_key_and_arrays_replace(config_dir: Path) -> None:
    (config_dir / "tackroom.toml").write_text(
        "[adapter.claude-code.env]\npass = ['MY_KEY']\n[adapter.claude-code.env.set]\nEXTRA = '1'\n",
        encoding="utf-8",
    )
    claude = load_adapters(config=config_dir)["claude-code"]
    builtin = resolve_builtins()["claude-code"]
    assert claude.spec.env.pass_ == ["MY_KEY"]
    assert claude.spec.env.set == {**builtin.spec.env.set, "EXTRA": "1"}
    assert claude.spec.env.scrub == builtin.spec.env.scrub
    assert claude.provenance["env.set.EXTRA"].endswith("tackroom.toml:4")
    assert claude.provenance["env.set.DISABLE_AUTOUPDATER"] == "builtin"


def test_extends_inherits_family_and_attributes_fields(config_dir: Path) -> None:
    path = config_dir / "adapters.d" / "10-variants.toml"
    path.write_text(
        '[adapter.claude-sandboxed]\nextends = "claude-code"\nexecutable = "~/bin/claude-in-sandbox"\n'
        '[adapter.claude-deep]\nextends = "claude-sandboxed"\n',
        encoding="utf-8",
    )
    adapters = load_adapters(config=config_dir)
    sandboxed, deep = adapters["claude-sandboxed"], adapters["claude-deep"]
    assert sandboxed.family == deep.family == "claude-code"
    assert sandboxed.harness == deep.harness == "claude-code"
    assert sandboxed.provenance["executable"] == f"{path}:3"
    assert sandboxed.provenance["one_shot"] == "extends claude-code"
    assert deep.provenance["executable"] == "extends claude-sandboxed"
    assert deep.provenance["extends"] == f"{path}:5"


def test_identical_effective_adapters_hash_the_same(config_dir: Path) -> None:
    (config_dir / "tackroom.toml").write_text('[adapter.twin]\nextends = "claude-code"\n', encoding="utf-8")
    adapters = load_adapters(config=config_dir)
    assert adapters["twin"].hash == adapters["claude-code"].hash
