"""The path guard every writer and deleter goes through."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hostile.fuzz import FUZZ
from tackroom.errors import UnsafePathError
from tackroom.paths import check_name, inside


@pytest.mark.parametrize("name", ["1.2.3", "claude-code", "20261201-040000-codex-abc123", "v1+build.5"])
def test_safe_names_pass(name: str) -> None:
    assert check_name(name, "version") == name


@pytest.mark.parametrize(
    "name", ["", ".", "..", "../x", "x/../..", "a/b", ".hidden", "x\0y", "a" * 200, "1..2"]
)
def test_unsafe_names_are_refused(name: str) -> None:
    with pytest.raises(UnsafePathError, match="cannot be used as a file name"):
        check_name(name, "version")


def test_inside_refuses_climbing_out(tmp_path: Path) -> None:
    assert inside(tmp_path, "a", "b") == tmp_path / "a" / "b"
    for parts in (("..",), ("a", "..", ".."), ("/etc/passwd",)):
        with pytest.raises(UnsafePathError, match="would leave"):
            inside(tmp_path, *parts)


def test_inside_refuses_a_planted_link(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "root"
    root.mkdir()
    (root / "link").symlink_to(outside)
    with pytest.raises(UnsafePathError, match="symbolic link"):
        inside(root, "link", "file")
    (root / "dangling").symlink_to(tmp_path / "nowhere")
    with pytest.raises(UnsafePathError, match="symbolic link"):
        inside(root, "dangling")


@FUZZ
@given(st.text(max_size=40))
def test_a_name_either_passes_or_is_refused_with_a_typed_error(name: str) -> None:
    try:
        checked = check_name(name, "name")
    except UnsafePathError:
        return
    assert "/" not in checked and ".." not in checked and not checked.startswith(".")
