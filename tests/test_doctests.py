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
    monkeypatch.delenv("TACKROOM_CONFIG_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    example = EXAMPLES[name]
    example.globs = {}
    result = runner.run(example, out=lambda text: pytest.fail(f"{name}'s example:\n{text}"))
    assert result.attempted and not result.failed


def test_the_main_names_have_examples() -> None:
    """What a newcomer calls first explains itself with an example (more names get theirs over time)."""
    first = {"load_adapters", "plan_run", "RunSpec", "Script", "MockServer", "detect", "CellError", "Usage"}
    assert first <= set(EXAMPLES), sorted(first - set(EXAMPLES))
