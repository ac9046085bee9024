"""Fuzzing the capability row parser and the external probe's output parser.

Valid rows round-trip; a valid row with one thing made wrong (an extra or a
missing key, a value of another type, a capability that does not exist, a
support value that is not exactly ``true``/``false``/``"n/o"``, a bad note)
is rejected whole; and any JSON or any bytes end in a row or a
:class:`RowError`, never another exception.
"""

from __future__ import annotations

import contextlib
import json
import string
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hostile.fuzz import FUZZ
from tackroom.errors import RowError
from tackroom.probe.rows import CAPABILITIES, MAX_NOTE, OUTCOMES, Row, parse_probe_output, parse_row

SUPPORT = st.sampled_from([True, False, "n/o"])
NOTE = st.text(max_size=60)
NAME = st.from_regex(r"[a-z0-9][a-z0-9._-]{0,20}", fullmatch=True)
VERSION = st.from_regex(r"[0-9A-Za-z][0-9A-Za-z.+_-]{0,20}", fullmatch=True)
WHEN = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC))


@st.composite
def rows(draw: st.DrawFn) -> dict[str, Any]:
    """A valid row's JSON data."""
    outcome = draw(st.sampled_from(OUTCOMES))
    supports = (
        {} if outcome == "not_installed" else draw(st.dictionaries(st.sampled_from(CAPABILITIES), SUPPORT))
    )
    notes = draw(st.dictionaries(st.sampled_from([*CAPABILITIES, "outcome"]), NOTE, max_size=4))
    return Row(
        adapter=draw(NAME),
        adapter_hash=draw(st.text("0123456789abcdef", min_size=64, max_size=64)),
        harness_version=draw(st.none() | VERSION),
        probed_at=draw(WHEN),
        outcome=outcome,
        supports=supports,
        notes=notes,
    ).to_json()


WRONG_SUPPORT = st.one_of(
    st.integers(),
    st.floats(allow_nan=False),
    st.none(),
    st.text().filter(lambda t: t != "n/o"),
    st.sampled_from(["N/O", "n/o ", "true", "false", "yes", "", "n\\/o"]),
    st.lists(st.booleans(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.booleans(), max_size=2),
)
NOT_A_CAPABILITY = st.text(alphabet=string.ascii_lowercase + ".-_ ", max_size=30).filter(
    lambda t: t not in CAPABILITIES
)
ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)


@st.composite
def malformed(draw: st.DrawFn) -> dict[str, Any]:
    """A valid row with exactly one thing made wrong."""
    data = draw(rows())
    kind = draw(
        st.sampled_from(
            ["extra", "missing", "retype", "support", "capability", "note-key", "note-value", "installed"]
        )
    )
    if kind == "extra":
        data[draw(st.text(max_size=12).filter(lambda k: k not in data))] = draw(ANY_JSON)
    elif kind == "missing":
        del data[draw(st.sampled_from(sorted(data)))]
    elif kind == "retype":
        key = draw(st.sampled_from(sorted(data)))
        data[key] = draw(ANY_JSON.filter(lambda v: not _fits(key, v)))
    elif kind == "support":
        data["outcome"] = "ok"
        data["supports"][draw(st.sampled_from(CAPABILITIES))] = draw(WRONG_SUPPORT)
    elif kind == "capability":
        data["supports"] = {**data["supports"], draw(NOT_A_CAPABILITY): draw(SUPPORT)}
        data["outcome"] = "ok"
    elif kind == "note-key":
        data["notes"][draw(NOT_A_CAPABILITY.filter(lambda k: k != "outcome"))] = "why"
    elif kind == "note-value":
        data["notes"][draw(st.sampled_from(CAPABILITIES))] = draw(
            ANY_JSON.filter(lambda v: not isinstance(v, str)) | st.just("x" * (MAX_NOTE + 1))
        )
    else:
        data["outcome"] = "not_installed"
        data["supports"] = {draw(st.sampled_from(CAPABILITIES)): draw(SUPPORT)}
    return data


def _fits(key: str, value: Any) -> bool:
    """Whether ``value`` could be valid for ``key`` (so a retype must pick something else)."""
    if key == "supports":
        return isinstance(value, dict) and all(
            k in CAPABILITIES and (type(v) is bool or v == "n/o") for k, v in value.items()
        )
    if key == "notes":
        return isinstance(value, dict) and all(
            k in (*CAPABILITIES, "outcome") and isinstance(v, str) for k, v in value.items()
        )
    if key == "harness_version":
        return value is None or isinstance(value, str)
    return isinstance(value, str)


@FUZZ
@given(rows())
def test_valid_rows_round_trip(data: dict[str, Any]) -> None:
    row = parse_row(json.dumps(data))
    assert row.to_json() == data
    assert parse_row(row.dumps()) == row


@FUZZ
@given(malformed())
def test_one_wrong_thing_rejects_the_whole_row(data: dict[str, Any]) -> None:
    with pytest.raises(RowError):
        parse_row(json.dumps(data))


@FUZZ
@given(ANY_JSON | rows().map(lambda d: {**d, "probed_at": d["probed_at"][:-1]}))
def test_any_json_is_a_row_or_a_row_error(data: Any) -> None:
    for parse in (parse_row, parse_probe_output):
        with contextlib.suppress(RowError):
            parse(json.dumps(data))


@FUZZ
@given(st.binary(max_size=400) | rows().map(lambda d: json.dumps(d).encode()[: len(json.dumps(d)) // 2]))
def test_any_bytes_are_a_row_or_a_row_error(data: bytes) -> None:
    for parse in (parse_row, parse_probe_output):
        with contextlib.suppress(RowError):
            parse(data)


@FUZZ
@given(st.dictionaries(st.sampled_from(CAPABILITIES), WRONG_SUPPORT, min_size=1))
def test_an_external_probe_with_one_wrong_value_fails_whole(supports: dict[str, Any]) -> None:
    with pytest.raises(RowError):
        parse_probe_output(json.dumps({"supports": supports}))


def test_times_survive_the_round_trip() -> None:
    moment = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(microseconds=1)
    row = Row("a", "0" * 64, None, moment, "ok")
    assert parse_row(row.dumps()).probed_at == moment
