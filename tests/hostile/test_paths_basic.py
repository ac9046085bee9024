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


def test_a_shared_memo_remembers_directories_only_and_still_finds_a_link_below_them(tmp_path: Path) -> None:
    """One operation proves many files with one memo: what it remembers are real directories, never a
    file or a link, so a link planted below a remembered directory is refused all the same."""
    root = tmp_path / "root"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "file").write_text("x")
    (root / "a" / "b" / "link").symlink_to(tmp_path)
    proven: set[str] = set()
    assert inside(root, "a", "b", "file", proven=proven) == root / "a" / "b" / "file"
    assert proven == {str(root / "a"), str(root / "a" / "b")}
    with pytest.raises(UnsafePathError, match="symbolic link"):
        inside(root, "a", "b", "link", "x", proven=proven)
    assert inside(root, "a", "new", "deeper", proven=proven) == root / "a" / "new" / "deeper"
    assert proven == {str(root / "a"), str(root / "a" / "b")}  # nothing is remembered of a missing one


def test_a_transaction_refuses_a_link_or_a_file_in_the_way_of_a_directory(tmp_path: Path) -> None:
    from tackroom.paths import Transaction

    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "link").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "d" / "plain").write_text("a file")
    files = Transaction(tmp_path)
    files.put("d/one.txt", b"1")  # remembers d as proven
    with pytest.raises(UnsafePathError, match="symbolic link"):
        files.put("d/link/two.txt", b"2")
    with pytest.raises(UnsafePathError, match="is in the way: it is not a directory"):
        files.put("d/plain/three.txt", b"3")
    files.put("d/new/deep/four.txt", b"4")
    (tmp_path / "d" / "new").symlink_to(tmp_path / "elsewhere")  # planted after the check
    with pytest.raises(UnsafePathError, match="symbolic link"):
        files.commit()
    assert not (tmp_path / "elsewhere").exists() and not (tmp_path / "d" / "one.txt").exists()


@FUZZ
@given(st.text(max_size=40))
def test_a_name_either_passes_or_is_refused_with_a_typed_error(name: str) -> None:
    try:
        checked = check_name(name, "name")
    except UnsafePathError:
        return
    assert "/" not in checked and ".." not in checked and not checked.startswith(".")


def test_a_transaction_flushes_what_it_replaces_and_not_what_it_creates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A replaced file reaches the disk before its rename (the old bytes are at stake); a new file
    is not flushed one by one (a crash can lose it, nothing else); a run's own home flushes nothing."""
    import os

    from tackroom.paths import Transaction

    flushed: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        flushed.append(Path(f"/proc/self/fd/{fd}").readlink().name)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    (tmp_path / "old.json").write_text("{}", encoding="utf-8")
    files = Transaction(tmp_path)
    files.put("old.json", b'{"a": 1}')
    files.put("dir/new.json", b"{}")
    files.commit()
    assert len(flushed) == 1 and flushed[0].startswith(".tackroom-"), flushed  # old.json's replacement
    assert (tmp_path / "old.json").read_bytes() == b'{"a": 1}'
    assert (tmp_path / "dir" / "new.json").read_bytes() == b"{}"

    flushed.clear()
    home = Transaction(tmp_path, durable=False)
    home.put("old.json", b'{"a": 2}')
    home.commit()
    assert flushed == []
    assert (tmp_path / "old.json").read_bytes() == b'{"a": 2}'
