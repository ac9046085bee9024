"""Capability rows parse strictly: one wrong key or value rejects the whole row."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tackroom.errors import RowError
from tackroom.probe.rows import CAPABILITIES, Row, is_supported, parse_probe_output, parse_row

HASH = "ab" * 32


def valid() -> dict[str, Any]:
    return {
        "adapter": "claude-code",
        "adapter_hash": HASH,
        "harness_version": "2.1.197",
        "probed_at": "2026-11-30T12:00:00.000000Z",
        "outcome": "ok",
        "supports": {"rules.read": True, "mcp.offered": False, "hooks.session-end.fire": "n/o"},
        "notes": {"mcp.offered": "never offered", "outcome": "fine"},
    }


def test_a_valid_row_round_trips() -> None:
    row = parse_row(json.dumps(valid()))
    assert parse_row(row.dumps()) == row
    assert row.to_json() == valid()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(extra=1), "unknown key 'extra'"),
        (lambda d: d.pop("outcome"), "missing outcome"),
        (lambda d: d.update(outcome="passed"), "outcome must be one of"),
        (lambda d: d["supports"].update({"rules.read": 1}), "must be true, false or"),
        (lambda d: d["supports"].update({"rules.read": "true"}), "must be true, false or"),
        (lambda d: d["supports"].update({"rules.read": "N/O"}), "must be true, false or"),
        (lambda d: d["supports"].update({"rules.read": None}), "must be true, false or"),
        (lambda d: d["supports"].update({"rules.reed": True}), "unknown capability 'rules.reed'"),
        (lambda d: d["notes"].update({"rules.reed": "x"}), "unknown capability 'rules.reed'"),
        (lambda d: d["notes"].update({"rules.read": 3}), "must be UTF-8 text"),
        (lambda d: d["notes"].update({"rules.read": "x" * 2001}), "at most 2000"),
        (lambda d: d.update(adapter="../etc"), "adapter"),
        (lambda d: d.update(adapter_hash="abc"), "adapter_hash"),
        (lambda d: d.update(harness_version="1.0; rm -rf"), "harness_version"),
        (lambda d: d.update(probed_at="2026-11-30T12:00:00"), "probed_at"),
        (lambda d: d.update(supports=[]), "supports must be an object"),
        (lambda d: d.update(outcome="not_installed"), "not_installed row observed nothing"),
    ],
)
def test_one_bad_thing_rejects_the_whole_row(change: Any, message: str) -> None:
    data = valid()
    change(data)
    with pytest.raises(RowError, match=None) as caught:
        parse_row(json.dumps(data))
    assert message in str(caught.value)


@pytest.mark.parametrize(
    "text",
    [
        '{"adapter": "a", "adapter": "b"}',
        '{"supports": {"rules.read": NaN}}',
        "[]",
        "",
        b"\xff\xfe",
        '{"a": 1} {"b": 2}',
        "[" * 5000 + "]" * 5000,
        "x" * 300_000,
    ],
    ids=["duplicate", "nan", "array", "empty", "not-utf8", "two", "deep", "huge"],
)
def test_text_that_is_not_one_row_is_refused(text: str | bytes) -> None:
    with pytest.raises(RowError):
        parse_row(text)


def test_an_external_probe_may_say_only_supports_and_notes() -> None:
    supports, notes = parse_probe_output('{"supports": {"rules.read": true}, "notes": {"rules.read": "ok"}}')
    assert supports == {"rules.read": True} and notes == {"rules.read": "ok"}
    for text in (
        '{"supports": {}, "outcome": "ok"}',
        '{"notes": {}}',
        '{"supports": {}, "notes": {"outcome": "ok"}}',
        '{"supports": {}, "adapter": "x"}',
    ):
        with pytest.raises(RowError):
            parse_probe_output(text)


def test_rows_made_in_code_pass_the_same_checks() -> None:
    from datetime import UTC, datetime

    with pytest.raises(RowError):
        Row("x", HASH, None, datetime.now(UTC), "ok", {"rules.read": 1})  # type: ignore[dict-item]
    with pytest.raises(RowError):
        Row("x", HASH, None, datetime(2026, 1, 1), "ok")


def test_n_o_is_not_support() -> None:
    assert (
        is_supported(True) and not is_supported("n/o") and not is_supported(False) and not is_supported(None)
    )
    assert len(set(CAPABILITIES)) == len(CAPABILITIES) == 20
