"""A registry answer is outside input: whatever its client prints, it is a version or a RegistryError.

The client is a scripted ``npm`` (or ``python -m pip``) that prints fuzzed
bytes and exits with a fuzzed code: a real subprocess each time. An accepted
answer is always a version that is one safe file name (an install directory).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hostile.fuzz import FUZZ
from tackroom.adapters.resolve import resolve_builtins
from tackroom.adapters.versions import VERSION_PATTERN
from tackroom.errors import RegistryError
from tackroom.paths import check_name
from tackroom.registry import latest_version

CLAUDE = resolve_builtins()["claude-code"]
AIDER = resolve_builtins()["aider"]

_CLIENT = '#!/bin/sh\ncat "$(dirname "$0")/answer"\nexit "$(cat "$(dirname "$0")/code")"\n'

_ANSWERS = (
    st.binary(max_size=200)
    | st.text(max_size=60).map(lambda t: json.dumps(t).encode())
    | st.from_regex(r"[0-9]{1,3}(\.[0-9]{1,3}){0,4}([-+.][a-z0-9./]{0,8})?", fullmatch=True).map(
        lambda t: json.dumps(t).encode()
    )
    | st.sampled_from(
        [b'"../x"', b'"1.0/../.."', b'"1.0\\u0000"', b'"\\ud800"', b"[" * 5000, b'"' + b"9" * 300 + b'"']
    )
    | st.from_regex(r"[a-z-]{1,10} \([^\n]{0,20}\)\n", fullmatch=True).map(str.encode)
)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One client directory for every example: each example rewrites its answer and exit code."""
    path = tmp_path_factory.mktemp("registry")
    for name in ("npm", "python"):
        (path / name).write_text(_CLIENT, encoding="utf-8")
        (path / name).chmod(0o755)
    return path


def _accepted(version: str) -> None:
    import re

    assert re.fullmatch(VERSION_PATTERN, version), version
    assert check_name(version, "version") == version


@FUZZ
@given(answer=_ANSWERS, code=st.sampled_from([0, 0, 0, 1, 2, 127]))
def test_any_npm_answer_is_a_version_or_a_registry_error(scratch: Path, answer: bytes, code: int) -> None:
    (scratch / "answer").write_bytes(answer)
    (scratch / "code").write_text(str(code))
    env = {**os.environ, "PATH": f"{scratch}{os.pathsep}/usr/bin{os.pathsep}/bin"}
    try:
        version = latest_version(CLAUDE, env=env, timeout_s=10)
    except RegistryError as exc:
        assert str(exc) and len(str(exc)) < 1000
        return
    assert code == 0
    assert json.loads(answer) == version
    _accepted(version)


@FUZZ
@given(answer=_ANSWERS, code=st.sampled_from([0, 0, 1]))
def test_any_pip_answer_is_a_version_or_a_registry_error(scratch: Path, answer: bytes, code: int) -> None:
    (scratch / "answer").write_bytes(answer)
    (scratch / "code").write_text(str(code))
    try:
        version = latest_version(AIDER, python=str(scratch / "python"), timeout_s=10)
    except RegistryError as exc:
        assert str(exc) and len(str(exc)) < 1000
        return
    assert code == 0
    _accepted(version)
