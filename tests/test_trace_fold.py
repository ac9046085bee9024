"""The fold every read file gets (:func:`tackroom.trace.summary.fold`, written inline for speed) is the
step-by-step fold (:func:`~tackroom.trace.summary._fold`) for any rows; what a report takes out of a
fold for calls counted elsewhere (:func:`~tackroom.trace.summary.taken_out`) leaves the fold of the
rest."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tackroom.trace.model import FIGURE_BITS, R_INPUT, SIDECHAIN
from tackroom.trace.summary import (
    C_ENTRY,
    C_FIELDS,
    C_PLACE,
    E_CALLS,
    E_REPORTED,
    E_SUMS,
    E_UNKNOWN,
    HOUR,
    QUARTER,
    _fold,
    fold,
    place,
    records,
    taken_out,
)

_TIMES = st.one_of(
    st.none(),
    st.sampled_from(
        [
            "2026-11-01T10:45:00.000Z",
            "2026-11-01T10:45:00Z",
            "2026-11-01T23:59:59.999Z",
            "2026-11-01T10:4x:00.000Z",
            "2026-11-01 10:45:00.000Z",
            "2026-11-01T10:45:00+05:30",
            "2026-11-01T10Z",
            "",
            "Z",
        ]
    ),
    st.text(max_size=30),
)
_FIGURE = st.one_of(
    st.none(), st.integers(min_value=0, max_value=2**40), st.sampled_from([0, 199_999, 200_000])
)
_ROW = st.tuples(
    st.integers(min_value=1, max_value=10**6),
    _TIMES,
    st.one_of(st.none(), st.sampled_from(["claude-sonnet-4-5", "claude-opus-4-1", "m"])),
    st.one_of(st.none(), st.sampled_from(["msg_1", "msg_2", "msg_3"])),
    st.sampled_from(["s1", "s2"]),
    _FIGURE,
    _FIGURE,
    _FIGURE,
    _FIGURE,
    _FIGURE,
    st.sampled_from([0, 1, 2, 1 | SIDECHAIN, SIDECHAIN, 31 | SIDECHAIN]),
)


@settings(max_examples=300, deadline=None)
@given(rows=st.lists(_ROW, max_size=30))
def test_the_inline_fold_is_the_step_by_step_fold(rows: list[tuple[Any, ...]]) -> None:
    listed = [list(row) for row in rows]
    assert fold(listed) == _fold(listed)
    assert fold(listed, HOUR, True) == _fold(listed, HOUR, True)
    assert fold(listed, QUARTER) == _fold(listed, QUARTER)


def _added(entries: list[list[Any]]) -> dict[tuple[Any, ...], list[Any]]:
    """Entries added up by place, those left with no call dropped (as a report leaves them out)."""
    sums: dict[tuple[Any, ...], list[Any]] = {}
    for entry in entries:
        known = sums.setdefault(tuple(entry[:E_CALLS]), [0] * (E_UNKNOWN - E_CALLS))
        known[:] = [a + b for a, b in zip(known, entry[E_CALLS:E_UNKNOWN], strict=True)]
    return {k: v for k, v in sums.items() if v[0]}


_COUNT = st.integers(min_value=0, max_value=2**40)
_CLEAN_ROW = st.tuples(
    st.integers(min_value=1, max_value=10**6),
    st.sampled_from(["2026-11-01T10:45:00.000Z", "2026-11-01T10:05:00.000Z", "2026-11-01T10:45:00+05:30"]),
    st.sampled_from(["claude-sonnet-4-5", "m"]),
    st.one_of(st.none(), st.sampled_from(["msg_1", "msg_2"])),
    st.just("s1"),
    _COUNT,
    _COUNT,
    _FIGURE,
    _FIGURE,
    _FIGURE,
    st.sampled_from([0, SIDECHAIN]),
)
"""Calls that can be taken out, many of them in one entry."""


@settings(max_examples=300, deadline=None)
@given(rows=st.lists(st.one_of(_ROW, _CLEAN_ROW, _CLEAN_ROW), max_size=30), data=st.data())
def test_taking_calls_out_of_a_fold_leaves_the_fold_of_the_rest(
    rows: list[tuple[Any, ...]], data: Any
) -> None:
    listed = [list(row) for row in rows]
    keys, copies, entries = fold(listed)
    assert len(copies) == C_FIELDS * len(keys) and records(copies.tobytes(), len(keys)) == copies
    chosen = data.draw(st.lists(st.sampled_from(range(len(keys))), unique=True) if keys else st.just([]))
    taken = [tuple(copies[n * C_FIELDS : (n + 1) * C_FIELDS]) for n in chosen]
    places = [copy[C_PLACE] for copy in taken]
    assert [listed[n][3] for n in places] == [keys[n] for n in chosen]  # a record names its key's row
    out = taken_out(entries, taken)
    gone = [listed[n] for n in places]
    if any(r[10] & FIGURE_BITS or r[5] is None or r[6] is None for r in gone):
        assert out is None  # an unknown figure cannot be subtracted: the file is folded again
        return
    assert out is not None
    # Each call folded alone at its place in the file (a call kept alone is keyed by it).
    every = [entry for n, row in enumerate(listed) for entry in _one(n, row, HOUR, False)]
    assert _added(entries) == _added(every)
    rest = [entry for n, row in enumerate(listed) if n not in places for entry in _one(n, row, HOUR, False)]
    assert _added([*entries, *out]) == _added(rest)


def test_a_record_naming_no_entry_is_not_trusted() -> None:
    rows: list[list[Any]] = [[1, "2026-11-01T10:05:00.000Z", "m", "a", "s", 10, 1, None, 5, None, 0]]
    _, copies, entries = fold(rows)
    record = list(copies)
    assert taken_out(entries, [tuple(record)]) is not None
    record[C_ENTRY] = -1  # Python would take the last entry
    assert taken_out(entries, [tuple(record)]) is None
    record[C_ENTRY] = 1
    assert taken_out(entries, [tuple(record)]) is None
    assert records(copies.tobytes()[:-1], 1) is None and records(copies.tobytes(), 2) is None


def _one(n: int, row: list[Any], width: int, alone: bool) -> list[list[Any]]:
    entry = [*place(n, row, width, alone), *[0] * (E_UNKNOWN - E_CALLS + 1)]
    entry[E_CALLS] += 1
    for at, value in enumerate(row[R_INPUT : R_INPUT + 5]):
        if value is not None:
            entry[E_SUMS + at] += value
            entry[E_REPORTED + at] += 1
    return [entry]


def test_a_fold_sums_per_hour_model_session_and_band() -> None:
    rows: list[list[Any]] = [
        [1, "2026-11-01T10:05:00.000Z", "m", "a", "s", 10, 1, None, 5, None, 0],
        [2, "2026-11-01T10:55:00.000Z", "m", "b", "s", 20, 2, 3, None, None, SIDECHAIN],
        [3, "2026-11-01T11:00:00.000Z", "m", None, "s", 300_000, 1, 0, 0, None, 2],
    ]
    keys, copies, entries = fold(rows)
    assert keys == ["a", "b"]
    # place, rank (not a side chain, total, output, cache write, input), entry, cache read, reasoning, flags
    assert list(copies) == [0, 1, 16, 1, 5, 10, 0, 0, 0, 0b101011, 1, 0, 25, 2, 0, 20, 0, 3, 0, 0b100111]
    assert entries == [
        ["2026-11-01T10", "m", "s", 0, 0, 2, 30, 3, 3, 5, 0, 2, 2, 1, 1, 0, 0],
        ["2026-11-01T11", "m", "s", 0, 7, 1, 300_000, 1, 0, 0, 0, 1, 1, 1, 1, 0, 2],
    ]
