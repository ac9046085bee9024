"""The state database: named migrations, WAL, whole rows only, many writers, and typed errors for
a file that is not ours."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tackroom.errors import StateError
from tackroom.probe.rows import Row
from tackroom.state import CapabilityRows, StateDB
from tackroom.state.migrations import MIGRATIONS

HASH = "cd" * 32
SRC = Path(__file__).resolve().parent.parent / "src"


def row(adapter: str = "claude-code", version: str = "2.1.197", seconds: int = 0, **supports: object) -> Row:
    when = datetime(2026, 11, 30, tzinfo=UTC) + timedelta(seconds=seconds)
    found = {k.replace("_", "."): v for k, v in supports.items()} or {"rules.read": True}
    return Row(adapter, HASH, version, when, "ok", found, {})  # type: ignore[arg-type]


def schema(path: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(path) as db:
        return sorted(db.execute("SELECT name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"))


def test_rows_keep_their_history_and_the_latest_wins(tmp_path: Path) -> None:
    store = CapabilityRows(StateDB(tmp_path / "state.db"))
    first, second = row(seconds=0), row(seconds=60, rules_read=False)
    other = row("codex", "0.171.0", seconds=30)
    newer = row(version="2.1.332", seconds=90)
    for r in (first, second, other, newer):
        store.add(r)
    assert store.history("claude-code") == [first, second, newer]
    assert store.latest("claude-code") == newer
    assert store.latest("claude-code", "2.1.197") == second
    assert store.latest("nobody") is None
    assert store.latest_by_adapter() == {"claude-code": newer, "codex": other}
    assert store.latest_by_version("claude-code") == {"2.1.197": second, "2.1.332": newer}


def test_the_database_is_in_wal_mode(tmp_path: Path) -> None:
    CapabilityRows(StateDB(tmp_path / "state.db")).add(row())
    with sqlite3.connect(tmp_path / "state.db") as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_a_new_database_has_large_pages_and_an_older_one_keeps_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A state database tackroom makes has 16 KiB pages; one made before (with SQLite's 4 KiB, in WAL
    mode, where the page size can no longer change) keeps them and is used as it is."""
    CapabilityRows(StateDB(tmp_path / "new.db")).add(row())
    older = tmp_path / "older.db"
    with monkeypatch.context() as before:
        before.setattr("tackroom.state.db.PAGE_SIZE", 4096)
        CapabilityRows(StateDB(older)).add(row())
    store = CapabilityRows(StateDB(older))
    store.add(row(seconds=60))
    assert store.history() == [row(), row(seconds=60)]
    for name, size in (("new.db", 16384), ("older.db", 4096)):
        with sqlite3.connect(tmp_path / name) as db:
            assert db.execute("PRAGMA page_size").fetchone() == (size,)


def test_migrating_an_old_database_equals_a_fresh_one(tmp_path: Path) -> None:
    old, fresh = tmp_path / "old.db", tmp_path / "fresh.db"
    assert len(MIGRATIONS) > 1, "with one migration there is no old database to migrate"
    # A database made by the first migration only, with a row in it...
    CapabilityRows(StateDB(old, upto=1)).add(row())
    before = schema(old)
    with sqlite3.connect(old) as db:
        applied = [n for (n,) in db.execute("SELECT name FROM _tackroom_migrations")]
    assert applied == [MIGRATIONS[0].__name__]
    # ...migrated by today's code, is the same as a new one, and keeps its row.
    store = CapabilityRows(StateDB(old))
    assert store.history() == [row()]
    CapabilityRows(StateDB(fresh)).history()
    assert before != schema(fresh)
    assert schema(old) == schema(fresh)
    with sqlite3.connect(old) as db:
        names = [n for (n,) in db.execute("SELECT name FROM _tackroom_migrations ORDER BY rowid")]
    assert names == [m.__name__ for m in MIGRATIONS]


def test_a_row_the_database_refuses_is_not_stored_at_all(tmp_path: Path) -> None:
    store = CapabilityRows(StateDB(tmp_path / "state.db"))
    store.add(row())
    with pytest.raises(StateError), store.db.transaction() as db:
        db.execute(
            "INSERT INTO capability_rows (adapter, adapter_hash, probed_at, outcome, supports, notes) "
            "VALUES ('x', ?, '2026-01-01T00:00:00.000000Z', 'ok', '{}', '{}')",
            (HASH,),
        )
        db.execute("INSERT INTO capability_rows (adapter) VALUES ('half')")  # NOT NULL fails: all rolls back
    assert [r.adapter for r in store.history()] == ["claude-code"]


WRITER = textwrap.dedent(
    """
    import sys
    from datetime import UTC, datetime
    from pathlib import Path
    from tackroom.probe.rows import Row
    from tackroom.state import CapabilityRows, StateDB

    store = CapabilityRows(StateDB(Path(sys.argv[1])))
    notes = {"rules.read": "n" * 1900}
    for n in range(int(sys.argv[3])):
        supports = {"rules.read": True, "mcp.offered": n % 2 == 0}
        store.add(Row(sys.argv[2], "ab" * 32, "1.0", datetime.now(UTC), "ok", supports, notes))
        print(n, flush=True)
    """
)


def _writer(path: Path, name: str, count: int) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), name, str(count)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    writers = [_writer(path, f"writer-{n}", 40) for n in range(4)]
    for proc in writers:
        assert proc.wait(timeout=120) == 0
        assert proc.stdout is not None
        proc.stdout.close()
    rows = CapabilityRows(StateDB(path)).history()
    assert sorted({r.adapter: 0 for r in rows}) == [f"writer-{n}" for n in range(4)]
    assert {a: sum(r.adapter == a for r in rows) for a in {r.adapter for r in rows}} == dict.fromkeys(
        [f"writer-{n}" for n in range(4)], 40
    )


def test_a_writer_killed_mid_stream_leaves_only_whole_rows(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    proc = _writer(path, "killed", 100_000)
    assert proc.stdout is not None
    for _ in range(20):  # let it get going, then kill it between or inside writes
        proc.stdout.readline()
    time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    proc.stdout.close()
    rows = CapabilityRows(StateDB(path)).history()  # every row is re-parsed strictly
    assert len(rows) >= 20
    assert all(r.notes == {"rules.read": "n" * 1900} and r.supports["rules.read"] is True for r in rows)


def test_a_file_that_is_not_a_database_is_an_error_naming_it_and_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StateError) as caught:
        CapabilityRows(StateDB(path)).history()
    assert str(path) in str(caught.value) and "move it aside" in str(caught.value)


def test_a_kept_connection_is_migrated_and_its_errors_name_the_file(tmp_path: Path) -> None:
    db = StateDB(tmp_path / "state.db")
    kept = db.open()
    try:
        with db.errors():
            assert kept.execute("SELECT count(*) FROM trace_files").fetchone() == (0,)
        failed = r"state\.db: the state database failed \(no such table"
        with pytest.raises(StateError, match=failed), db.errors():
            kept.execute("SELECT * FROM no_such_table")
    finally:
        kept.close()
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StateError, match="move it aside"):
        StateDB(bad).open()


def test_another_programs_database_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE photos (id INTEGER)")
    with pytest.raises(StateError, match="not a tackroom state database"):
        CapabilityRows(StateDB(path)).add(row())
    assert [n for (n, _) in schema(path)] == ["photos"]


def test_a_newer_tackroom_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    CapabilityRows(StateDB(path)).add(row())
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO _tackroom_migrations VALUES ('m999_from_the_future', 'x')")
    with pytest.raises(StateError, match=r"newer tackroom.*m999_from_the_future.*upgrade tackroom"):
        CapabilityRows(StateDB(path)).history()


def test_a_row_edited_behind_our_back_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    store = CapabilityRows(StateDB(path))
    store.add(row())
    with sqlite3.connect(path) as db:
        db.execute("UPDATE capability_rows SET supports = ?", (json.dumps({"rules.read": "yes"}),))
    with pytest.raises(StateError, match=r"capability row 1 is not a row tackroom wrote.*DELETE FROM"):
        store.history()


def test_a_directory_that_cannot_be_written_is_an_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(StateError, match="cannot create its directory"):
        CapabilityRows(StateDB(blocker / "sub" / "state.db")).add(row())


def test_the_collector_is_paused_inside_and_restored_after_even_on_error() -> None:
    import gc

    from tackroom._gc import paused

    assert gc.isenabled()
    with pytest.raises(ValueError), paused():
        assert not gc.isenabled()
        raise ValueError
    assert gc.isenabled()
    gc.disable()
    try:
        with paused():
            pass
        assert not gc.isenabled()  # left as it was found
    finally:
        gc.enable()
