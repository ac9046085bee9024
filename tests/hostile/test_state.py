"""Fuzzing the state database: whatever the file holds, opening it is a StateError or it works;
whatever a row says, it is stored whole and read back the same."""

from __future__ import annotations

import itertools
import sqlite3
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from hostile.fuzz import FUZZ
from hostile.test_rows import rows
from tackroom.errors import StateError
from tackroom.probe.rows import row_from_json
from tackroom.state import CapabilityRows, StateDB

HEADER = b"SQLite format 3\x00"


def _valid_database() -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "state.db"
        with sqlite3.connect(path) as db:
            db.execute("PRAGMA journal_mode=DELETE")
        # The capability tables only (migrations 1-2): opening a damaged copy then also applies the
        # later migrations (the trace index) to it. A file with every table makes examples whose repr
        # passes Hypothesis's 30 kB warning, which fails the run however the example ends.
        CapabilityRows(StateDB(path, upto=2)).history()
        with sqlite3.connect(path) as db:
            db.execute("PRAGMA journal_mode=DELETE")  # one file, no WAL beside it
        return path.read_bytes()


VALID = _valid_database()


@st.composite
def damaged(draw: st.DrawFn) -> bytes:
    """A real state database with bytes overwritten, cut short, or random bytes behind a SQLite header."""
    kind = draw(st.sampled_from(["overwrite", "truncate", "header"]))
    if kind == "header":
        return HEADER + draw(st.binary(max_size=2000))
    data = bytearray(VALID)
    if kind == "truncate":
        return bytes(data[: draw(st.integers(0, len(data)))])
    for _ in range(draw(st.integers(1, 8))):
        at = draw(st.integers(0, len(data) - 1))
        data[at] = draw(st.integers(0, 255))
    return bytes(data)


@FUZZ
@given(st.binary(max_size=2000) | damaged())
def test_any_file_is_a_state_error_or_a_database(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "state.db"
        path.write_bytes(data)
        store = CapabilityRows(StateDB(path))
        try:
            store.history()
        except StateError as exc:
            assert str(path) in str(exc)


_SHARED = tempfile.TemporaryDirectory(prefix="tackroom-fuzz-state-")
_COUNTER = itertools.count()
_STORE = CapabilityRows(StateDB(Path(_SHARED.name) / "state.db"))


@FUZZ
@given(st.lists(rows(), min_size=1, max_size=3))
def test_any_row_is_stored_whole_and_read_back_the_same(datas: list[dict[str, object]]) -> None:
    # One database for every example (a new one each time costs most of the test); each example's
    # rows get an adapter name of their own, so it reads back exactly what it wrote.
    store = _STORE
    adapter = f"fuzz-{next(_COUNTER)}"
    written = [row_from_json({**d, "adapter": adapter}) for d in datas]
    for row in written:
        store.add(row)
    assert sorted(r.dumps() for r in store.history(adapter)) == sorted(r.dumps() for r in written)
