"""The resolution cache: the same adapters as a fresh load, invalidated by any input, never a failure."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tackroom.adapters.resolve import load_adapters
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


def test_a_cached_listing_imports_neither_pydantic_nor_a_toml_parser() -> None:
    def probe() -> str:
        done = subprocess.run(
            [sys.executable, "-c", PROBE], capture_output=True, text=True, env=os.environ, check=True
        )
        return done.stdout.strip()

    assert probe() == "True True"  # the first listing resolves and validates
    assert probe() == "False False"
