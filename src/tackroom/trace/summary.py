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

Beside the entries, each file keeps its calls' keys with what decides between
copies of one call (:func:`rank`): a call logged in more than one file counts
once, from its best copy, and the report takes the others out of their
files' folds (:func:`taken_out`).
"""

from __future__ import annotations

from bisect import bisect_left
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


def fold(
    rows: list[UsageRow], width: int = HOUR, alone: bool = False
) -> tuple[dict[str, list[int]], list[list[Any]]]:
    """The keys of ``rows`` (each with its row's place and :func:`rank`) and their entries."""
    if width != HOUR or alone:
        return _fold(rows, width, alone)
    # The fold every read file gets: :func:`place`, :func:`rank` and the sums inline (a report's first
    # pass folds every call of every log here). A test holds it to :func:`_fold`.
    keys: dict[str, list[int]] = {}
    entries: dict[tuple[Any, ...], list[Any]] = {}
    get = entries.get
    for n, row in enumerate(rows):
        _, ts, model, key, session, i, o, cr, cw, r, unknown = row
        whole = (i or 0) + (cr or 0) + (cw or 0)
        if key is not None:
            out = o or 0
            keys[key] = [n, 0 if unknown & SIDECHAIN else 1, whole + out, out, cw or 0, i or 0]
        if type(ts) is str and len(ts) >= 17 and ts[-1] == "Z" and ts[10] == "T" and ts[13] == ts[16] == ":":
            if ts[14:16].isdigit():
                where: tuple[Any, ...] = (ts[:13], model, session, 0, bisect_left(BOUNDS, whole))
            else:
                where = place(n, row)
        else:
            where = place(n, row)
        entry = get(where)
        if entry is None:
            entry = entries[where] = [*where, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        else:
            entry[5] += 1  # E_CALLS, and below E_SUMS + n, E_REPORTED + n, E_UNKNOWN
        if i is not None:
            entry[6] += i
            entry[11] += 1
        if o is not None:
            entry[7] += o
            entry[12] += 1
        if cr is not None:
            entry[8] += cr
            entry[13] += 1
        if cw is not None:
            entry[9] += cw
            entry[14] += 1
        if r is not None:
            entry[10] += r
            entry[15] += 1
        if unknown:
            entry[16] |= unknown & FIGURE_BITS
    return keys, list(entries.values())


def _fold(
    rows: list[UsageRow], width: int = HOUR, alone: bool = False
) -> tuple[dict[str, list[int]], list[list[Any]]]:
    """:func:`fold`, one step at a time: any width, and calls kept alone."""
    keys: dict[str, list[int]] = {}
    entries: dict[tuple[Any, ...], list[Any]] = {}
    for n, row in enumerate(rows):
        if row[R_KEY] is not None:
            keys[row[R_KEY]] = [n, *rank(row)]
        key = place(n, row, width, alone)
        entry = entries.get(key)
        if entry is None:
            entry = entries[key] = [*key, *_ZEROS]
        entry[E_CALLS] += 1
        for at, value in zip(_SUMS, row[R_INPUT : R_INPUT + _N], strict=True):
            if value is not None:
                entry[at] += value
                entry[at + _N] += 1
        entry[E_UNKNOWN] |= row[R_UNKNOWN] & FIGURE_BITS
    return keys, list(entries.values())


def taken_out(
    rows: list[UsageRow], places: list[int], width: int = HOUR, alone: bool = False
) -> list[list[Any]] | None:
    """The entries that take rows ``places`` of a file back out of its fold (one per entry they were
    folded into), or None when one cannot: an unknown figure does not subtract (the file is folded
    again without them instead).

    Added to a report, they undo the rows' share of every sum and count, and of the cost."""
    out: dict[tuple[Any, ...], list[Any]] = {}
    get = out.get
    for n in places:
        row = rows[n]
        _, _, _, _, _, i, o, cr, cw, r, unknown = row
        if unknown & FIGURE_BITS or i is None or o is None:
            return None  # (a call without input or output made its whole entry unpriced)
        where = place(n, row, width, alone)
        entry = get(where)
        if entry is None:
            entry = out[where] = [*where, *_ZEROS]
        entry[5] -= 1  # E_CALLS, and below E_SUMS + n, E_REPORTED + n
        entry[6] -= i
        entry[7] -= o
        entry[11] -= 1
        entry[12] -= 1
        if cr is not None:
            entry[8] -= cr
            entry[13] -= 1
        if cw is not None:
            entry[9] -= cw
            entry[14] -= 1
        if r is not None:
            entry[10] -= r
            entry[15] -= 1
    return list(out.values())
