"""A log's usage folded once, when it is read, so a report adds up folds instead of calls.

A report over half a gigabyte of logs meets about a hundred thousand model
calls; adding each one costs more than reading the index. So when a file is
read (in the worker that read it), its calls are folded into *entries*: one
per quarter hour, model and session, holding the calls' count, each figure's
sum and how many calls reported it. A quarter hour decides the day in every
time zone (all offsets are whole quarter hours), so the report still counts
days in the zone it is asked for.

Two kinds of call are kept alone, one entry each: a call whose whole input
passes :data:`BIG` tokens (its price may be a higher tier's, so it is priced
by itself), and a call whose time is not a UTC instant (its day is worked out
from the time as written). The file's call keys are kept beside the entries:
a call logged in more than one file is counted from the rows instead, once.
"""

from __future__ import annotations

from typing import Any

from tackroom.trace.model import FIGURE_BITS, R_INPUT, R_KEY, R_MODEL, R_SESSION, R_TS, R_UNKNOWN, UsageRow

BIG = 100_000
"""Whole input (tokens) above which a call is priced alone. Every price tier genai-prices knows starts
above this; a model whose tier starts lower makes the report price from the rows instead."""

E_SLOT, E_MODEL, E_SESSION, E_ALONE, E_CALLS, E_SUMS, E_REPORTED, E_UNKNOWN = 0, 1, 2, 3, 4, 5, 10, 15
"""An entry: ``[slot, model, session, alone, calls, 5 sums, 5 reported counts, unknown mask]``; ``alone``
is 0 for a fold of calls, else 1 + the call's place in the file (a call kept by itself)."""
_N = 5
_ZEROS = (0,) * (E_UNKNOWN - E_CALLS + 1)


def slot(ts: Any) -> tuple[str | None, bool]:
    """The quarter hour of a UTC timestamp (``2026-11-01T10:45``) and True; else the time itself and False."""
    utc = isinstance(ts, str) and len(ts) >= 17 and ts.endswith("Z")
    if utc and ts[10] == "T" and ts[13] == ts[16] == ":":
        minute = ts[14:16]
        if minute.isdigit():
            return f"{ts[:14]}{int(minute) // 15 * 15:02d}", True
    return (ts if isinstance(ts, str) else None), False


def _place(n: int, row: UsageRow) -> tuple[Any, ...]:
    """The entry row ``n`` of a file is folded into."""
    whole = sum(v for v in row[R_INPUT : R_INPUT + 4] if v is not None)
    when, utc = slot(row[R_TS])
    return (when, row[R_MODEL], row[R_SESSION], n + 1 if whole > BIG or not utc else 0)


def fold(rows: list[UsageRow]) -> tuple[list[str], list[list[Any]]]:
    """The keys of ``rows`` and their entries."""
    keys = [row[R_KEY] for row in rows if row[R_KEY] is not None]
    entries: dict[tuple[Any, ...], list[Any]] = {}
    for n, row in enumerate(rows):
        figures = row[R_INPUT : R_INPUT + _N]
        key = _place(n, row)
        when, alone = key[0], key[3]
        entry = entries.get(key)
        if entry is None:
            entry = entries[key] = [
                when,
                row[R_MODEL],
                row[R_SESSION],
                alone,
                *_ZEROS,
            ]
        entry[E_CALLS] += 1
        for i, value in enumerate(figures):
            if value is not None:
                entry[E_SUMS + i] += value
                entry[E_REPORTED + i] += 1
        entry[E_UNKNOWN] |= row[R_UNKNOWN] & FIGURE_BITS
    return keys, list(entries.values())


def unfold(entries: list[list[Any]], rows: list[UsageRow], taken: list[int]) -> list[list[Any]]:
    """``entries`` (the fold of ``rows``) without the rows at the places ``taken``.

    A row whose figure was unknown cannot be taken out of a fold (an unknown does not subtract):
    then the rest of the rows are folded again.
    """
    if not taken:
        return entries
    if any(rows[n][R_UNKNOWN] & FIGURE_BITS for n in taken):
        gone = set(taken)
        return fold([row for n, row in enumerate(rows) if n not in gone])[1]
    at = {tuple(entry[:E_CALLS]): entry for entry in entries}
    for n in taken:
        row = rows[n]
        entry = at[_place(n, row)]
        entry[E_CALLS] -= 1
        for i, value in enumerate(row[R_INPUT : R_INPUT + _N]):
            if value is not None:
                entry[E_SUMS + i] -= value
                entry[E_REPORTED + i] -= 1
    return [entry for entry in entries if entry[E_CALLS] > 0]
