"""``[[adapter.X.since]]`` entries are operator input: fuzzed, they load or raise a ConfigError naming a file.

Random entries (any version text, any key, any value) on a built-in and on a
new adapter go through the real loader; a loaded adapter then resolves for
random versions without raising, and each form is a valid adapter.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from hypothesis import given
from hypothesis import strategies as st

from hostile.fuzz import FUZZ
from tackroom.adapters.resolve import load_adapters
from tackroom.adapters.schema import AdapterSpec
from tackroom.errors import ConfigError

_KEYS = st.sampled_from(
    [
        "version",
        "env",
        "one_shot",
        "detect",
        "options",
        "executable",
        "family",
        "since",
        "verified_with",
        "tools",
    ]
) | st.text(min_size=1, max_size=6)
_SCALARS = (
    st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.text(max_size=12)
    | st.sampled_from(["2.1.300", "0", "2.1.300-beta", "{{prompt}}", "9" * 30, "1..2", "v2"])
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["set", "pass", "model", "path", "score", "x"]), inner, max_size=3)
    ),
    max_leaves=12,
)
_ENTRY = st.dictionaries(_KEYS, _VALUES, max_size=4) | st.builds(
    lambda version, rest: {"version": version, **rest},
    st.sampled_from(["2.1.300", "3.0.0", "3.0.0", "0.1", "2.1.300-rc.1"]) | st.text(max_size=8),
    st.dictionaries(_KEYS, _VALUES, max_size=3),
)
_VERSIONS = st.sampled_from(["2.1.197", "2.1.300", "3.0.0", "99.0", "0.0.1-a"]) | st.text(max_size=10)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("since") / "config"
    (path / "adapters.d").mkdir(parents=True)
    return path


@pytest.fixture(autouse=True)
def _no_cache() -> Iterator[None]:
    os.environ["TACKROOM_NO_CACHE"] = "1"
    yield
    del os.environ["TACKROOM_NO_CACHE"]


@FUZZ
@given(
    name=st.sampled_from(["claude-code", "fresh"]),
    since=st.lists(_ENTRY, max_size=4) | _VALUES,
    versions=st.lists(_VERSIONS, max_size=4),
)
def test_any_since_entries_load_or_raise_config_error(
    scratch: Path, name: str, since: Any, versions: list[str]
) -> None:
    table: dict[str, Any] = {"since": since}
    if name == "fresh":
        table["extends"] = "claude-code"
    try:
        text = tomli_w.dumps({"adapter": {name: table}})
    except (TypeError, ValueError):
        return
    path = scratch / "adapters.d" / "10-since.toml"
    path.write_text(text, encoding="utf-8")
    try:
        adapter = load_adapters(config=scratch)[name]
    except ConfigError as exc:
        assert exc.problems
        for problem in exc.problems:
            assert problem.file in (str(path), "builtin/claude-code.toml"), problem
        return
    for version in versions:
        resolved = adapter.at(version)
        AdapterSpec.model_validate(resolved.effective)
        assert resolved.hash
