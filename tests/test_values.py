"""Typed values: known, stale, not supported and unknown are never interchangeable, never blank, never 0."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tackroom.values import (
    Known,
    NotSupported,
    Stale,
    Unknown,
    age,
    from_json,
    iso,
    known,
    not_supported,
    parse_time,
    show,
    stale,
    to_json,
    unknown,
)

AS_OF = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def test_each_kind_shows_distinctly_and_never_blank_or_zero() -> None:
    shown = [show(known(0)), show(stale(0, AS_OF)), show(not_supported()), show(unknown())]
    assert shown == ["0", "0 (stale, as of 2026-11-30)", "n/s", "unknown"]
    assert len(set(shown)) == 4
    # A figure that was not observed is never shown as a number, blank or not.
    for value in (not_supported(), unknown("not installed")):
        assert show(value).strip() and not show(value).strip().isdigit()
    assert show(known(""), str) == "''"


def test_json_round_trips_each_kind() -> None:
    for value in (
        known("2.1.197"),
        known(0),
        stale("1.0", AS_OF, "2.0 is installed"),
        not_supported("n/a"),
        unknown(),
    ):
        assert from_json(to_json(value)) == value
    assert to_json(stale("1.0", AS_OF)) == {
        "kind": "stale",
        "value": "1.0",
        "as_of": "2026-11-30T12:00:00.000000Z",
    }


@pytest.mark.parametrize(
    "data",
    [
        None,
        {},
        {"kind": "known"},
        {"kind": "zero", "value": 0},
        {"kind": "known", "value": 1, "extra": 2},
        {"kind": "stale", "value": 1},
        {"kind": "stale", "value": 1, "as_of": "yesterday"},
        {"kind": "unknown", "why": 3},
    ],
)
def test_anything_else_is_refused(data: object) -> None:
    with pytest.raises(ValueError):
        from_json(data)


def test_stale_needs_a_timezone() -> None:
    with pytest.raises(ValueError):
        stale(1, datetime(2026, 1, 1))


def test_times_are_utc_with_a_fixed_width_so_they_sort_as_text() -> None:
    early = datetime(2026, 1, 1, 0, 0, 0, tzinfo=UTC)
    later = early + timedelta(microseconds=500_000)
    assert iso(early) == "2026-01-01T00:00:00.000000Z" < iso(later)
    assert parse_time("2026-01-01T02:00:00+02:00") == early
    for bad in ("2026-01-01T00:00:00", "2026-01-01", "not a time", 5, "2026-01-01 00:00:00Z x"):
        with pytest.raises(ValueError):
            parse_time(bad)


def test_age_is_in_its_largest_unit() -> None:
    now = AS_OF
    assert age(now - timedelta(seconds=42), now) == "42s"
    assert age(now - timedelta(hours=3, minutes=5), now) == "3h"
    assert age(now - timedelta(days=12), now) == "12d"
    assert age(now + timedelta(days=1), now) == "0s"


def test_kinds_are_types_not_truthiness() -> None:
    assert isinstance(known(0), Known) and isinstance(stale(0, AS_OF), Stale)
    assert isinstance(not_supported(), NotSupported) and isinstance(unknown(), Unknown)
