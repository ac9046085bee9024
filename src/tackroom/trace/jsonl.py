"""Reading a JSON-lines transcript from where the last read stopped, in bounded memory.

A harness appends to its session log while it runs, so the last line may be
half written: it is left for the next read (the cursor stops before it),
unless it already parses whole. A line longer than :data:`MAX_LINE` is skipped
without being held and reported; so is a line that is not a JSON object, or
nests deeper than :data:`~tackroom.families.base.MAX_DEPTH`. Strings come back
without lone surrogates. Nothing here raises on a file's content; a file that
cannot be opened is one :class:`~tackroom.trace.model.TraceIssue`.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

# SIMD substring search and counting (StringZilla): the usage fast path looks for its needle in every
# byte of a log, which CPython's bytes.find does at about 1 GB/s on JSON and this at several.
from stringzilla import count as _count
from stringzilla import find as _find
from stringzilla import rfind as _rfind

from tackroom.families.base import MAX_DEPTH, _depth, clean
from tackroom.trace.model import FIRST_BYTES, Cursor, TraceIssue

MAX_LINE = 64 * 1024 * 1024
"""A longer line is skipped (and reported): no harness writes one, and holding it would not bound memory."""
CHUNK = 1024 * 1024
BIG_CHUNK = 4 * 1024 * 1024

Parsed = tuple[int, dict[str, Any]] | TraceIssue


def parse(line: bytes, *, deep: bool = True) -> dict[str, Any] | str:
    """The JSON object on ``line``, or why there is none.

    ``deep=False`` skips the nesting check, for a caller that takes only scalars out of the object.
    """
    try:
        data = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        # orjson refuses lone surrogates ("\ud83d"); the standard parser takes them, then they are replaced.
        try:
            data = clean(json.loads(line.decode("utf-8", "replace"), parse_int=_int64))
        except RecursionError:
            return f"JSON nested deeper than {MAX_DEPTH} levels"
        except ValueError:
            return f"not JSON ({exc})"
    if not isinstance(data, dict):
        return f"a JSON {type(data).__name__}, not an object"
    if deep and line.count(b"{") + line.count(b"[") > MAX_DEPTH and _depth(data) > MAX_DEPTH:
        return f"JSON nested deeper than {MAX_DEPTH} levels"
    return data


def _int64(text: str) -> int | float:
    """An integer orjson can write back (64 bits); a larger one, never a real count, becomes a float."""
    value = int(text)
    return value if -(2**63) <= value < 2**64 else float(text)


def records(path: Path, cursor: Cursor, needles: tuple[bytes, ...] = (), head: int = 0) -> Iterator[Parsed]:
    """``(line number, object)`` for each complete line of ``path`` after ``cursor``, or an issue.

    With ``needles``, a line holding none of them is passed over unparsed (the
    usage fast path: most lines of a transcript carry no usage), except the
    first ``head`` lines of the file. The cursor advances past every line
    consumed, so a read stopped early resumes cleanly.
    """
    for number, line in lines(path, cursor, needles, head):
        if isinstance(line, TraceIssue):
            yield line
            continue
        data = parse(line)
        if isinstance(data, str):
            yield TraceIssue(path, number, data)
        else:
            yield number, data


def lines(
    path: Path, cursor: Cursor, needles: tuple[bytes, ...] = (), head: int = 0
) -> Iterator[tuple[int, bytes | TraceIssue]]:
    """The raw complete lines after ``cursor`` (without their newline), advancing it."""
    # O_NONBLOCK: a FIFO put where a log should be must not block the open; a regular file ignores it.
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        yield cursor.line, TraceIssue(path, 0, f"cannot be read ({exc.strerror or exc})")
        return
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        yield cursor.line, TraceIssue(path, 0, "cannot be read (not a regular file)")
        return
    with os.fdopen(fd, "rb", buffering=0) as handle:
        try:
            handle.seek(cursor.offset)
        except OSError as exc:
            yield cursor.line, TraceIssue(path, 0, f"cannot be read ({exc.strerror or exc})")
            return
        yield from _split(path, handle, cursor, needles, head)


def _split(
    path: Path, handle: Any, cursor: Cursor, needles: tuple[bytes, ...], head: int
) -> Iterator[tuple[int, bytes | TraceIssue]]:
    pending = b""
    skipping = 0  # bytes of an over-long line passed over so far
    start_of_file = cursor.offset == 0
    while True:
        try:
            chunk = handle.read(CHUNK)
        except OSError as exc:
            yield cursor.line, TraceIssue(path, cursor.line + 1, f"read failed ({exc.strerror or exc})")
            return
        if not chunk:
            break
        if start_of_file:
            cursor.first, start_of_file = chunk[:FIRST_BYTES], False
        start = 0
        if skipping:
            end = chunk.find(b"\n")
            if end < 0:
                skipping += len(chunk)
                continue
            cursor.line += 1
            cursor.offset += skipping + end + 1
            yield cursor.line, TraceIssue(path, cursor.line, _too_long(skipping + end))
            skipping, start = 0, end + 1
        data = pending + chunk[start:] if pending else chunk[start:]
        pending = b""
        at = 0
        while True:
            end = data.find(b"\n", at)
            if end < 0:
                break
            line = data[at:end]
            cursor.line += 1
            cursor.offset += end + 1 - at
            at = end + 1
            if needles and cursor.line > head and not any(needle in line for needle in needles):
                continue
            if line.strip():
                yield cursor.line, line
        rest = data[at:]
        if len(rest) > MAX_LINE:
            skipping = len(rest)
        else:
            pending = rest
    if skipping:
        return  # a giant line still being written: not consumed, looked at again next time
    if pending.strip():
        # The last line has no newline: a harness still writing it, or one that ends without one.
        # Consumed only when it already parses whole; otherwise read again next time.
        if needles and cursor.line >= head and not any(needle in pending for needle in needles):
            return
        if not isinstance(_whole(pending), str):
            cursor.line += 1
            cursor.offset += len(pending)
            yield cursor.line, pending


def _whole(line: bytes) -> object:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return "partial"


def needle_lines(
    path: Path, cursor: Cursor, needle: bytes, head: int = 0
) -> Iterator[tuple[int, bytes | memoryview | TraceIssue]]:
    """Like :func:`lines` with one needle, but faster: the lines holding ``needle`` are found by
    searching whole chunks for it, so the lines without it cost no Python work at all.

    The first ``head`` lines of the file are yielded whatever they hold. A line
    over :data:`MAX_LINE` is skipped and reported, as :func:`lines` does.
    """
    for batch in needle_batches(path, cursor, needle, head):
        yield from batch


def needle_batches(
    path: Path, cursor: Cursor, needle: bytes, head: int = 0
) -> Iterator[list[tuple[int, bytes | memoryview | TraceIssue]]]:
    """:func:`needle_lines` a chunk at a time: a reader's loop over a list costs less than a generator
    step per line. The cursor has moved past a batch's lines when it is yielded. A line found by its
    needle is a ``memoryview`` of the chunk read (not a copy of its bytes); the others are ``bytes``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        yield [(cursor.line, TraceIssue(path, 0, f"cannot be read ({exc.strerror or exc})"))]
        return
    with os.fdopen(fd, "rb", buffering=0) as handle:
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(0, "not a regular file")
            handle.seek(cursor.offset)
        except OSError as exc:
            yield [(cursor.line, TraceIssue(path, 0, f"cannot be read ({exc.strerror or exc})"))]
            return
        yield from _search(path, handle, cursor, needle, head)


def _search(
    path: Path, handle: Any, cursor: Cursor, needle: bytes, head: int
) -> Iterator[list[tuple[int, bytes | memoryview | TraceIssue]]]:
    pending = b""
    skipping = 0
    start_of_file = cursor.offset == 0
    while True:
        batch: list[tuple[int, bytes | memoryview | TraceIssue]] = []
        try:
            chunk = handle.read(BIG_CHUNK)
        except OSError as exc:
            yield [(cursor.line, TraceIssue(path, cursor.line + 1, f"read failed ({exc.strerror or exc})"))]
            return
        if not chunk:
            break
        if start_of_file:
            cursor.first, start_of_file = chunk[:FIRST_BYTES], False
        if skipping:
            end = chunk.find(b"\n")
            if end < 0:
                skipping += len(chunk)
                continue
            cursor.line += 1
            cursor.offset += skipping + end + 1
            batch.append((cursor.line, TraceIssue(path, cursor.line, _too_long(skipping + end))))
            skipping, chunk = 0, chunk[end + 1 :]
        data = pending + chunk if pending else chunk
        stop = data.rfind(b"\n") + 1  # the complete lines end here
        if stop == 0:
            if len(data) > MAX_LINE:
                skipping, pending = len(data), b""
            else:
                pending = data
            if batch:
                yield batch
            continue
        pos = 0
        line = cursor.line
        offset = cursor.offset
        view = memoryview(data)  # a found line is a view of the chunk: its bytes are not copied again
        while line < head and pos < stop:
            end = data.find(b"\n", pos)
            line += 1
            offset += end + 1 - pos
            if data[pos:end].strip():
                batch.append((line, data[pos:end]))
            pos = end + 1
        while (at := _find(data, needle, pos, stop)) >= 0:
            start = _rfind(data, b"\n", pos, at) + 1 or pos
            end = _find(data, b"\n", at, stop)
            line += _count(data, b"\n", pos, start) + 1
            offset += end + 1 - pos
            pos = end + 1
            if end - start > MAX_LINE:
                batch.append((line, TraceIssue(path, line, _too_long(end - start))))
            else:
                batch.append((line, view[start:end]))
        cursor.line = line + _count(data, b"\n", pos, stop)
        cursor.offset = offset + stop - pos
        pending = data[stop:]
        if len(pending) > MAX_LINE:
            skipping, pending = len(pending), b""
        if batch:
            yield batch
    if skipping or not pending.strip():
        return
    if (cursor.line < head or needle in pending) and not isinstance(_whole(pending), str):
        cursor.line += 1
        cursor.offset += len(pending)
        yield [(cursor.line, pending)]


def _too_long(size: int) -> str:
    return f"a line of {size} bytes is over the {MAX_LINE} byte limit: not read"
