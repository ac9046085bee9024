"""The examples in the public names' docstrings run, and print what they say (``help(tackroom.X)``)."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

import tackroom

EXAMPLES = {
    name: found
    for name in sorted(tackroom.__all__)
    for found in doctest.DocTestFinder(recurse=False).find(getattr(tackroom, name), f"tackroom.{name}")
    if found.examples
}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_a_public_names_example_runs(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))
    for var in ("TACKROOM_CONFIG_DIR", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME"):
        monkeypatch.delenv(var, raising=False)  # the examples write and read under their own HOME
    monkeypatch.chdir(tmp_path)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS, verbose=False)
    example = EXAMPLES[name]
    example.globs = {}
    result = runner.run(example, out=lambda text: pytest.fail(f"{name}'s example:\n{text}"))
    assert result.attempted and not result.failed


def test_every_public_name_has_an_example() -> None:
    """Every public name explains itself with an example (a version string has no docstring)."""
    missing = sorted(set(tackroom.__all__) - set(EXAMPLES) - {"__version__"})
    assert not missing, missing
