"""The usage fast path's line search (:func:`tackroom.trace.jsonl.needle_lines`) finds the lines, line
numbers and cursor that the plain line loop (:func:`~tackroom.trace.jsonl.lines`) finds with the same
needle, whatever the bytes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tackroom.trace import jsonl
from tackroom.trace.model import Cursor

NEEDLE = b'"usage"'
_PIECES = st.sampled_from(
    [b"\n", b"\n\n", b"x", b" ", b'"usage"', b'"usag', b'e"', b"{}", b'{"usage":1}', b"\r"]
)


def _both(path: Path, head: int) -> tuple[list[object], list[object], Cursor, Cursor]:
    plain, fast = Cursor(), Cursor()
    found = list(jsonl.lines(path, plain, (NEEDLE,), head))
    searched = list(jsonl.needle_lines(path, fast, NEEDLE, head))
    return found, searched, plain, fast


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(_PIECES, max_size=60), head=st.integers(min_value=0, max_value=3))
def test_the_search_finds_what_the_line_loop_finds(
    tmp_path_factory: pytest.TempPathFactory, pieces: list[bytes], head: int
) -> None:
    path = tmp_path_factory.mktemp("jsonl") / "log.jsonl"
    path.write_bytes(b"".join(pieces))
    found, searched, plain, fast = _both(path, head)
    assert searched == found
    assert (fast.offset, fast.line) == (plain.offset, plain.line)


def test_line_numbers_count_every_line_passed_over(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    lines = [b'{"a":1}'] * 40 + [b'{"usage":{"input_tokens":1}}'] + [b"x" * 10] * 25 + [b'{"usage":2}']
    path.write_bytes(b"\n".join(lines) + b"\n")
    found, searched, plain, fast = _both(path, 1)
    assert [n for n, _ in searched] == [1, 41, 67]
    assert searched == found
    assert (fast.offset, fast.line) == (plain.offset, plain.line) == (path.stat().st_size, 67)


@settings(max_examples=200, deadline=None)
@given(
    pieces=st.lists(_PIECES, max_size=80),
    head=st.integers(min_value=0, max_value=3),
    chunk=st.integers(min_value=1, max_value=24),
)
def test_the_search_finds_the_same_across_chunk_boundaries(
    tmp_path_factory: pytest.TempPathFactory, pieces: list[bytes], head: int, chunk: int
) -> None:
    # Logs are read 4 MiB at a time: here a few bytes at a time, so lines, needles and the last
    # unfinished line fall across every boundary.
    path = tmp_path_factory.mktemp("jsonl") / "log.jsonl"
    path.write_bytes(b"".join(pieces))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(jsonl, "BIG_CHUNK", chunk)
        patch.setattr(jsonl, "CHUNK", chunk)
        found, searched, plain, fast = _both(path, head)
    assert searched == found
    assert (fast.offset, fast.line) == (plain.offset, plain.line)
