"""A log's usage folded once, when it is read, so a report adds up folds instead of calls.

A report over half a gigabyte of logs meets about a hundred thousand model
calls; adding each one costs more than reading the index. So when a file is
read (in the worker that read it), its calls are folded into *entries*: one
per UTC hour, model, session and price band, holding the calls' count, each
figure's sum and how many calls reported it.

* An hour decides the day in every zone whose offset is whole hours. A report
  in a zone with a half or quarter hour offset (India, Nepal, parts of
  Australia) folds the calls again by quarter hour, from the rows kept beside
  the entries.
* Some models charge every token of a call more once its whole input passes a
  threshold (200k tokens for Claude Sonnet 4.5), so calls on either side of
  one cannot be priced as one sum. The band of a call is how many of
  :data:`BOUNDS` (every threshold ``genai-prices`` knows, for any model) its
  whole input passes: calls of one band are in one price class of every
  model. A report meeting a model with a threshold outside :data:`BOUNDS` (a
  newer price table) folds the calls again, each call alone.
* A call whose time is not a UTC instant is kept alone: its day is worked
  out from the time as written.

Beside the entries, each file keeps its calls' keys (a JSON list) and, in the
same order, a *copy record* per key (:data:`C_FIELDS` 64-bit integers, packed):
what decides between copies of one call (:func:`rank`) and what taking the
call out of the fold needs. A call logged in more than one file counts once,
from its best copy, and the report takes the others out of their files' folds
(:func:`taken_out`) from these records alone, without the files' calls.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Sequence
from itertools import chain
from typing import Any

from tackroom.trace.model import (
    FIGURE_BITS,
    R_INPUT,
    R_KEY,
    R_UNKNOWN,
    SIDECHAIN,
    UsageRow,
)

BOUNDS = (32_000, 100_000, 128_000, 199_999, 200_000, 256_000, 272_000, 512_000, 524_288)
"""Every threshold of a tiered price in ``genai-prices`` (a test holds this to the installed table; a
release adding one makes those models' reports fold each call alone until it is added here)."""

E_SLOT, E_MODEL, E_SESSION, E_ALONE, E_BAND, E_CALLS, E_SUMS, E_REPORTED, E_UNKNOWN = (
    0,
    1,
    2,
    3,
    4,
    5,
    6,
    11,
    16,
)
"""An entry: ``[slot, model, session, alone, band, calls, 5 sums, 5 reported counts, unknown mask]``;
``alone`` is 0 for a fold of calls, else 1 + the call's place in the file (a call kept by itself)."""
_N = 5
_ZEROS = (0,) * (E_UNKNOWN - E_CALLS + 1)
_SUMS = range(E_SUMS, E_SUMS + _N)

C_PLACE, C_RANK, C_ENTRY, C_CACHE_READ, C_REASONING, C_FLAGS = 0, 1, 6, 7, 8, 9
"""A copy record: ``[place of the row in the file, *rank (5), index of its entry in the fold, cache
read, reasoning, flags]`` (a figure not reported is 0 here; the flags say which were)."""
C_FIELDS = 10
C_SUBTRACTABLE = 1 << _N
"""Set in a record's flags when the call can be taken out of its entry: it has input and output figures
and none unknown. Bits 0-4 say which of the five figures it reported."""
MAX_TOKENS = 2**40
"""A figure above this (a thousand billion tokens in one call) is no count: it is unknown, as a negative
one is (it would not add up in 64 bits)."""

Fold = tuple[list[str], "array[int]", list[list[Any]]]
"""What :func:`fold` gives: the keys, their copy records (``array("q")``) and the entries."""

HOUR, QUARTER = 13, 16
"""Slot widths: ``2026-11-01T10`` (the stored folds) or ``2026-11-01T10:45``."""


def slot(ts: Any, width: int = HOUR) -> tuple[str | None, bool]:
    """The UTC hour (or quarter hour) of a UTC timestamp and True; else ``@`` and the time as written
    (None without one) and False."""
    utc = isinstance(ts, str) and len(ts) >= 17 and ts.endswith("Z")
    if utc and ts[10] == "T" and ts[13] == ts[16] == ":":
        minute = ts[14:16]
        if minute.isdigit():
            if width == HOUR:
                return ts[:13], True
            return f"{ts[:14]}{int(minute) // 15 * 15:02d}", True
    return (f"@{ts}" if isinstance(ts, str) else None), False


def band(whole_input: int) -> int:
    """How many of :data:`BOUNDS` a call's whole input (uncached, cache read and cache write) passes."""
    return bisect_left(BOUNDS, whole_input)


def place(n: int, row: UsageRow, width: int = HOUR, alone: bool = False) -> tuple[Any, ...]:
    """The entry row ``n`` of a file is folded into (``alone``: every call an entry of its own)."""
    _, ts, model, _, session, i, _, cr, cw = row[:9]
    whole = (i or 0) + (cr or 0) + (cw or 0)
    utc = type(ts) is str and len(ts) >= 17 and ts[-1] == "Z" and ts[10] == "T"
    if width == HOUR and utc and ts[13] == ts[16] == ":" and ts[14:16].isdigit():  # slot(), inline
        return (ts[:13], model, session, n + 1 if alone else 0, bisect_left(BOUNDS, whole))
    when, utc = slot(ts, width)
    return (when, model, session, n + 1 if alone or not utc else 0, bisect_left(BOUNDS, whole))


def rank(row: UsageRow) -> list[int]:
    """How a copy of a call compares with another: not a side chain's first, then the larger total,
    then (for equal totals) more of the dearer tokens: output, cache writes, input."""
    i, o, cr, cw = row[R_INPUT] or 0, row[R_INPUT + 1] or 0, row[R_INPUT + 2] or 0, row[R_INPUT + 3] or 0
    return [0 if row[R_UNKNOWN] & SIDECHAIN else 1, i + o + cr + cw, o, cw, i]


def fold(rows: list[UsageRow], width: int = HOUR, alone: bool = False) -> Fold:
    """The keys of ``rows``, their copy records and the rows' entries (a key twice: its last row's)."""
    if width != HOUR or alone:
        return _fold(rows, width, alone)
    # The fold every read file gets: :func:`place`, :func:`rank`, the record and the sums inline (a
    # report's first pass folds every call of every log here). A test holds it to :func:`_fold`.
    keys: dict[str, tuple[int, ...]] = {}
    entries: dict[tuple[Any, ...], list[Any]] = {}
    get = entries.get
    for n, row in enumerate(rows):
        _, ts, model, key, session, i, o, cr, cw, r, unknown = row
        whole = (i or 0) + (cr or 0) + (cw or 0)
        if type(ts) is str and len(ts) >= 17 and ts[-1] == "Z" and ts[10] == "T" and ts[13] == ts[16] == ":":
            if ts[14:16].isdigit():
                where: tuple[Any, ...] = (ts[:13], model, session, 0, bisect_left(BOUNDS, whole))
            else:
                where = place(n, row)
        else:
            where = place(n, row)
        entry = get(where)
        if entry is None:
            # The entry's index rides at its end while folding (cut off below): the records name it.
            entry = entries[where] = [*where, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, len(entries)]
        else:
            entry[5] += 1  # E_CALLS, and below E_SUMS + n, E_REPORTED + n, E_UNKNOWN
        flags = 0  # which figures the call reported, for its record (as _flags says)
        if i is not None:
            entry[6] += i
            entry[11] += 1
            flags = 1
        if o is not None:
            entry[7] += o
            entry[12] += 1
            flags |= 2
        if cr is not None:
            entry[8] += cr
            entry[13] += 1
            flags |= 4
        if cw is not None:
            entry[9] += cw
            entry[14] += 1
            flags |= 8
        if r is not None:
            entry[10] += r
            entry[15] += 1
            flags |= 16
        if unknown:
            entry[16] |= unknown & FIGURE_BITS
        if key is not None:
            if flags & 3 == 3 and not unknown & FIGURE_BITS:
                flags |= C_SUBTRACTABLE
            out = o or 0
            side = 0 if unknown & SIDECHAIN else 1
            keys[key] = (n, side, whole + out, out, cw or 0, i or 0, entry[17], cr or 0, r or 0, flags)
    return list(keys), array("q", chain.from_iterable(keys.values())), [e[:17] for e in entries.values()]


def _flags(i: Any, o: Any, cr: Any, cw: Any, r: Any, unknown: int) -> int:
    flags = (
        (i is not None)
        | (o is not None) << 1
        | (cr is not None) << 2
        | (cw is not None) << 3
        | (r is not None) << 4
    )
    if i is not None and o is not None and not unknown & FIGURE_BITS:
        flags |= C_SUBTRACTABLE
    return flags


def _fold(rows: list[UsageRow], width: int = HOUR, alone: bool = False) -> Fold:
    """:func:`fold`, one step at a time: any width, and calls kept alone."""
    keys: dict[str, tuple[int, ...]] = {}
    entries: dict[tuple[Any, ...], list[Any]] = {}
    for n, row in enumerate(rows):
        key = place(n, row, width, alone)
        entry = entries.get(key)
        if entry is None:
            entry = entries[key] = [*key, *_ZEROS]
        if row[R_KEY] is not None:
            i, o, cr, cw, r = row[R_INPUT : R_INPUT + _N]
            flags = _flags(i, o, cr, cw, r, row[R_UNKNOWN])
            keys[row[R_KEY]] = (n, *rank(row), list(entries).index(key), cr or 0, r or 0, flags)
        entry[E_CALLS] += 1
        for at, value in zip(_SUMS, row[R_INPUT : R_INPUT + _N], strict=True):
            if value is not None:
                entry[at] += value
                entry[at + _N] += 1
        entry[E_UNKNOWN] |= row[R_UNKNOWN] & FIGURE_BITS
    return list(keys), array("q", chain.from_iterable(keys.values())), list(entries.values())


def bounded(rows: list[UsageRow]) -> list[UsageRow]:
    """``rows`` with every figure above :data:`MAX_TOKENS` (or below 0) unknown."""
    out = []
    for row in rows:
        figures = row[R_INPUT : R_INPUT + _N]
        if any(f is not None and not 0 <= f <= MAX_TOKENS for f in figures):
            row = list(row)
            for n, f in enumerate(figures):
                if f is not None and not 0 <= f <= MAX_TOKENS:
                    row[R_INPUT + n] = None
                    row[R_UNKNOWN] |= 1 << n
        out.append(row)
    return out


def records(blob: bytes, count: int) -> array[int] | None:
    """The copy records stored for ``count`` keys, or None when ``blob`` does not hold that many."""
    found = array("q")
    if len(blob) != count * C_FIELDS * found.itemsize:
        return None
    found.frombytes(blob)
    return found


def taken_out(entries: list[list[Any]], copies: Sequence[Sequence[int]]) -> list[list[Any]] | None:
    """The entries that take the calls of copy records ``copies`` back out of a file's fold
    ``entries`` (one per entry they were folded into), or None when one cannot: an unknown figure does
    not subtract, a missing input or output made its entry unpriced (the file is folded again without
    them instead), and a record naming no entry is not trusted.

    Added to a report, they undo the calls' share of every sum and count, and of the cost."""
    out: dict[int, list[Any]] = {}  # by the entry taken from: a fold's entries are each one place
    get = out.get
    for copy in copies:
        flags, at = copy[C_FLAGS], copy[C_ENTRY]
        if not flags & C_SUBTRACTABLE or not 0 <= at < len(entries):
            return None
        entry = get(at)
        if entry is None:
            entry = out[at] = [*entries[at][:E_CALLS], *_ZEROS]
        _, _, _, o, cw, i, _, cr, r, _ = copy
        entry[5] -= 1  # E_CALLS, and below E_SUMS + n, E_REPORTED + n
        entry[6] -= i
        entry[7] -= o
        entry[11] -= 1
        entry[12] -= 1
        if flags & 4:
            entry[8] -= cr
            entry[13] -= 1
        if flags & 8:
            entry[9] -= cw
            entry[14] -= 1
        if flags & 16:
            entry[10] -= r
            entry[15] -= 1
    return list(out.values())
