"""The resolution cache: the same adapters as a fresh load, invalidated by any input, never a failure."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tackroom.adapters.resolve import SHIPPED, _shipped, load_adapters, shipped_resolution
from tackroom.errors import ConfigError

PROBE = (
    "import sys; from tackroom.adapters.catalog import catalog; catalog(); "
    "print('pydantic' in sys.modules, 'tomli' in sys.modules)"
)


def test_cached_load_equals_a_fresh_one(config_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (config_dir / "tackroom.toml").write_text('[adapter.mine]\nextends = "codex"\n', encoding="utf-8")
    first = load_adapters(config=config_dir)
    cached = load_adapters(config=config_dir)
    monkeypatch.setenv("TACKROOM_NO_CACHE", "1")
    fresh = load_adapters(config=config_dir)
    for name in fresh:
        assert cached[name].effective == fresh[name].effective == first[name].effective
        assert cached[name].provenance == fresh[name].provenance
        assert cached[name].hash == fresh[name].hash
        assert cached[name].spec == fresh[name].spec


def test_an_edit_invalidates_and_an_error_is_never_cached(config_dir: Path) -> None:
    path = config_dir / "tackroom.toml"
    path.write_text('[adapter.claude-code]\nexecutable = "/a"\n', encoding="utf-8")
    assert load_adapters(config=config_dir)["claude-code"].executable == "/a"
    path.write_text('[adapter.claude-code]\nexecutable = "/bb"\n', encoding="utf-8")
    assert load_adapters(config=config_dir)["claude-code"].executable == "/bb"
    path.write_text("[adapter.claude-code]\nexecutable = 3\n", encoding="utf-8")
    for _ in range(2):
        with pytest.raises(ConfigError):
            load_adapters(config=config_dir)


def _probe() -> str:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, env=os.environ, check=True
    )
    return done.stdout.strip()


def test_a_cached_listing_imports_neither_pydantic_nor_a_toml_parser(config_dir: Path) -> None:
    (config_dir / "tackroom.toml").write_text('[adapter.mine]\nextends = "codex"\n', encoding="utf-8")
    assert _probe() == "True True"  # the first listing with an operator file resolves and validates
    assert _probe() == "False False"


def test_a_new_machines_first_listing_reads_the_shipped_resolution() -> None:
    """Nothing cached and no operator file: the built-ins come from the file shipped with the package,
    with no validation; it is what a fresh resolution gives, hashes and provenance included."""
    assert not list(Path(os.environ["XDG_CACHE_HOME"]).glob("tackroom/adapters-*"))
    assert _probe() == "False False"
    shipped = load_adapters()
    os.environ["TACKROOM_NO_CACHE"] = "1"
    try:
        fresh = load_adapters()
    finally:
        del os.environ["TACKROOM_NO_CACHE"]
    assert fresh is not shipped  # resolved again, not the process's load of the built-ins
    assert list(shipped) == list(fresh)
    for name in fresh:
        assert shipped[name].effective == fresh[name].effective
        assert shipped[name].provenance == fresh[name].provenance
        assert shipped[name].hash == fresh[name].hash


def test_the_shipped_resolution_is_fresh() -> None:
    assert SHIPPED.read_text(encoding="utf-8") == shipped_resolution(), (
        f"{SHIPPED.name} is stale (a built-in table or the adapter code changed): "
        ".venv/bin/python scripts/resolve-builtins"
    )


def test_the_engine_index_is_fresh_and_a_render_imports_only_the_families_it_uses() -> None:
    from tackroom.families import INDEX, engine_index

    assert INDEX.read_text(encoding="utf-8") == engine_index(), (
        "the built-in engines' index is stale: run .venv/bin/python scripts/resolve-builtins"
    )
    # codex writes its hooks with claude-code's engine: that family is imported, no other.
    code = (
        "import sys, pathlib, tempfile\n"
        "from tackroom.adapters.resolve import resolve_builtins\n"
        "from tackroom.profile.model import Hook, Profile\n"
        "from tackroom.profile.render import plan_render\n"
        "hook = Hook('h', 'before-tool', 'echo hi', matcher=('shell',))\n"
        "root = pathlib.Path(tempfile.mkdtemp())\n"
        "plan_render(Profile(hooks=(hook,)), resolve_builtins()['codex'], root=root)\n"
        "found = {m.split('.')[2] for m in sys.modules if m.startswith('tackroom.families.')}\n"
        "print(' '.join(sorted(found)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert set(done.stdout.split()) - {"base"} == {"claude_code", "codex"}


def test_a_shipped_resolution_of_other_inputs_is_not_used(tmp_path: Path) -> None:
    stale = json.loads(SHIPPED.read_text(encoding="utf-8"))
    stale["digest"] = "0" * 32
    (tmp_path / "shipped.json").write_text(json.dumps(stale), encoding="utf-8")
    assert _shipped(tmp_path / "shipped.json") is None
    assert _shipped(tmp_path / "missing.json") is None
    assert _shipped(SHIPPED) is not None


def _cache_file() -> Path:
    (found,) = Path(os.environ["XDG_CACHE_HOME"]).glob("tackroom/adapters-*.lines")
    return found


def test_a_cached_set_decodes_an_adapter_only_when_asked(config_dir: Path) -> None:
    """The names come from the cache file without decoding an adapter; a damaged adapter line is a
    cache miss (a fresh resolution answers, and writes the cache again), never an error."""
    (config_dir / "tackroom.toml").write_text('[adapter.mine]\nextends = "codex"\n', encoding="utf-8")
    load_adapters(config=config_dir)
    path = _cache_file()
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(n for n, line in enumerate(lines) if line.startswith("mine\t"))
    lines[at] = 'mine\t{"variants": [{"effective": \n'
    path.write_text("".join(lines), encoding="utf-8")
    cached = load_adapters(config=config_dir)
    assert "mine" in cached and cached["codex"].family == "codex"  # the names; another adapter
    assert cached["mine"].harness == "codex"  # the damaged line: resolved again
    assert _cache_file().read_text(encoding="utf-8") != "".join(lines)


@pytest.mark.parametrize("damage", ["", "{}\n", "not json\nx\ty\n", "truncated"])
def test_a_damaged_or_truncated_cache_file_is_a_miss(config_dir: Path, damage: str) -> None:
    (config_dir / "tackroom.toml").write_text('[adapter.mine]\nextends = "codex"\n', encoding="utf-8")
    first = load_adapters(config=config_dir)
    path = _cache_file()
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: len(text) // 2] if damage == "truncated" else damage, encoding="utf-8")
    again = load_adapters(config=config_dir)
    assert list(again) == list(first)
    assert again["mine"].hash == first["mine"].hash
    assert _cache_file().read_text(encoding="utf-8") == text


def test_the_cache_keeps_what_the_adapters_scrub(config_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run learns every variable the adapters scrub from the cache file, without decoding each
    adapter; the list is the one the adapters give (the built-ins' is identity_variables)."""
    from tackroom.adapters.resolve import identity_variables

    table = '[adapter.mine]\nextends = "codex"\n[adapter.mine.env]\nscrub = ["MINE_SESSION_ID"]\n'
    (config_dir / "tackroom.toml").write_text(table, encoding="utf-8")
    load_adapters(config=config_dir)
    cached = load_adapters(config=config_dir)
    monkeypatch.setenv("TACKROOM_NO_CACHE", "1")
    fresh = load_adapters(config=config_dir)
    expected = sorted({v for name in fresh for v in fresh[name].effective["env"].get("scrub", [])})
    assert "MINE_SESSION_ID" in expected and "CLAUDECODE" in expected
    assert cached.scrubbed() == fresh.scrubbed() == expected
    assert set(identity_variables()) == set(expected) - {"MINE_SESSION_ID"}
