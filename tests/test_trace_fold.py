"""The fold every read file gets (:func:`tackroom.trace.summary.fold`, written inline for speed) is the
step-by-step fold (:func:`~tackroom.trace.summary._fold`) for any rows."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tackroom.trace.model import SIDECHAIN
from tackroom.trace.summary import HOUR, QUARTER, _fold, fold

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


def test_a_fold_sums_per_hour_model_session_and_band() -> None:
    rows: list[list[Any]] = [
        [1, "2026-11-01T10:05:00.000Z", "m", "a", "s", 10, 1, None, 5, None, 0],
        [2, "2026-11-01T10:55:00.000Z", "m", "b", "s", 20, 2, 3, None, None, SIDECHAIN],
        [3, "2026-11-01T11:00:00.000Z", "m", None, "s", 300_000, 1, 0, 0, None, 2],
    ]
    keys, entries = fold(rows)
    assert keys == {"a": [0, 1, 16, 1, 5, 10], "b": [1, 0, 25, 2, 0, 20]}
    assert entries == [
        ["2026-11-01T10", "m", "s", 0, 0, 2, 30, 3, 3, 5, 0, 2, 2, 1, 1, 0, 0],
        ["2026-11-01T11", "m", "s", 0, 7, 1, 300_000, 1, 0, 0, 0, 1, 1, 1, 1, 0, 2],
    ]
