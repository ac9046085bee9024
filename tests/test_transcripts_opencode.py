"""OpenCode's session database: read while a harness holds it, never written; forks; bad rows."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tackroom.families import get_family
from tackroom.families.opencode.transcripts import OpencodeTranscripts, iso
from tackroom.mock.script import Script, Turn
from tackroom.trace.events import Record
from tackroom.trace.model import Cursor, SessionMeta, TraceEvent, TraceIssue, TraceItem
from tracekit import usage_reports

GOLDEN = Path(__file__).parent / "golden" / "opencode" / "transcripts" / "subagent-resume-fork-1.18.33"
MAIN, SUB, FORK = (
    "ses_dce3bf00affeC9H9rb2B8aEFJy",
    "ses_dce3bd621ffeo6B6mHgaUCXGBg",
    "ses_dce3b21b2ffekRRqBqu3uCmdgK",
)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "opencode.db"
    shutil.copy(GOLDEN / "files" / "opencode.db", path)
    return path


def _read(path: Path, usage_only: bool = False) -> list[TraceItem]:
    return list(OpencodeTranscripts().read(path, Cursor(), usage_only=usage_only))


def _digests(path: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(path.parent.glob(path.name + "*"))
        if p.is_file()
    }


def _add_call(db: sqlite3.Connection, session: str, created: int, tokens: Any) -> None:
    message = {"role": "assistant", "modelID": "gpt-5", "providerID": "openai", "tokens": tokens}
    db.execute(
        "INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)",
        (f"msg_new_{created}", session, created, created, json.dumps(message)),
    )
    part = {"type": "step-finish", "reason": "stop", "tokens": tokens}
    db.execute(
        "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (f"prt_new_{created}", f"msg_new_{created}", session, created, created, json.dumps(part)),
    )


@pytest.fixture
def live(store: Path) -> Iterator[sqlite3.Connection]:
    """The store as a running opencode holds it: WAL mode, a write not yet checkpointed."""
    db = sqlite3.connect(store)
    db.execute("PRAGMA journal_mode = wal")
    db.execute("PRAGMA wal_autocheckpoint = 0")
    with db:
        _add_call(
            db,
            MAIN,
            1796131400000,
            {"input": 5, "output": 6, "reasoning": 0, "cache": {"read": 7, "write": 0}},
        )
    yield db
    db.close()


def test_the_family_has_this_reader() -> None:
    reader = get_family("opencode").transcripts()
    assert isinstance(reader, OpencodeTranscripts)
    assert not reader.incremental


def test_a_write_still_in_the_log_is_read_and_nothing_is_touched(
    store: Path, live: sqlite3.Connection
) -> None:
    wal = store.with_name("opencode.db-wal")
    assert wal.stat().st_size > 0
    before = _digests(store)
    items = _read(store)
    assert _digests(store) == before  # database, -wal and -shm byte for byte
    [new] = [u for u in usage_reports(items) if u.key == "prt_new_1796131400000"]
    assert new.session_id == MAIN and new.model == "gpt-5"
    assert new.event.usage.to_json() == {  # type: ignore[attr-defined]
        "input": 5,
        "output": 6,
        "cache_read": 7,
        "cache_write": 0,
        "reasoning": "not_reported",
    }
    assert not [i for i in items if isinstance(i, TraceIssue)]


def test_a_store_without_a_log_is_read_without_creating_one(store: Path) -> None:
    items = _read(store)
    assert sorted(p.name for p in store.parent.iterdir()) == ["opencode.db"]
    assert len(usage_reports(items)) == 7


def test_a_fork_counts_only_its_own_calls_and_is_linked_to_its_parent(store: Path) -> None:
    items = _read(store)
    by_session: dict[str, list[int | None]] = {}
    for usage in usage_reports(items):
        by_session.setdefault(usage.session_id, []).append(usage.event.usage.input)  # type: ignore[attr-defined]
    assert by_session == {MAIN: [1000, 1100, 1200, 1300], SUB: [1000, 1100], FORK: [1234]}
    metas = {m.session_id: m for m in items if isinstance(m, SessionMeta)}
    assert metas[FORK].parent_id == MAIN
    assert (metas[SUB].parent_id, metas[SUB].agent) == (MAIN, "general")
    assert metas[MAIN].parent_id is None


def test_the_usage_fast_path_yields_the_same_usage(store: Path) -> None:
    def keyed(items: list[TraceItem]) -> list[tuple[Any, ...]]:
        return [(u.session_id, u.key, u.timestamp, u.event.to_json()["usage"]) for u in usage_reports(items)]

    assert keyed(_read(store, usage_only=True)) == keyed(_read(store))


def test_bad_rows_are_issues_naming_the_row_and_the_rest_is_read(store: Path) -> None:
    with sqlite3.connect(store) as db:
        db.execute("UPDATE part SET data = '{not json' WHERE id = 'prt_231c426e40013IrBFZj0allx4m'")
        db.execute("UPDATE part SET data = '[1, 2]' WHERE id = 'prt_231c434a00015twPk5f2uEDqCq'")
        db.execute("UPDATE message SET data = 'null' WHERE id = 'msg_231c42a38001JS5Q5eKk2RQWTX'")
        _add_call(db, MAIN, 1796131400000, {"input": "5", "output": [], "cache": "none"})
        db.execute(
            "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data)"
            " VALUES ('prt_zz', 'msg_231c4321a001t1BbqLXH1Wy4X5', ?, 1, 1, ?)",
            (MAIN, json.dumps({"type": "hologram", "x": 1})),
        )
    items = _read(store)
    issues = [i for i in items if isinstance(i, TraceIssue)]
    assert len(issues) == 3
    assert all(i.path == store and i.line > 0 for i in issues)
    # One call lost its part, one its message, one its step-finish: the others are still there,
    # and the new call's figures of the wrong type are unknown, not absent.
    usage = usage_reports(items)
    assert len(usage) == 7 - 3 + 1
    [new] = [u for u in usage if u.key == "prt_new_1796131400000"]
    assert new.event.usage.to_json() == dict.fromkeys(  # type: ignore[attr-defined]
        ("input", "output", "cache_read", "cache_write"), "unknown"
    ) | {"reasoning": "not_reported"}
    records = [i.event for i in items if isinstance(i, TraceEvent) and isinstance(i.event, Record)]
    [hologram] = [r for r in records if r.record_type == "part.hologram"]
    assert json.loads(hologram.raw) == {"type": "hologram", "x": 1}


def test_what_is_not_an_opencode_store_is_one_issue(tmp_path: Path) -> None:
    junk = tmp_path / "opencode.db"
    junk.write_bytes(b"this is not sqlite" * 100)
    [issue] = _read(junk)
    assert isinstance(issue, TraceIssue) and issue.line == 0
    empty = tmp_path / "empty" / "opencode.db"
    empty.parent.mkdir()
    sqlite3.connect(empty).close()
    [issue] = _read(empty)
    assert "not an opencode database" in str(issue)
    link = tmp_path / "link" / "opencode.db"
    link.parent.mkdir()
    link.symlink_to(GOLDEN / "files" / "opencode.db")
    [issue] = _read(link)
    assert "symbolic link" in str(issue)


def test_times_are_iso_and_a_wild_one_is_none() -> None:
    assert iso(1796131262454) == "2026-12-01T13:21:02.454Z"
    assert iso(10**20) is None
    assert iso("1796131262454") is None


@settings(max_examples=40, deadline=None)
@given(st.binary(min_size=1, max_size=2000), st.integers(min_value=0, max_value=360000))
def test_a_damaged_store_is_an_issue_never_a_crash(tmp_path_factory: Any, junk: bytes, at: int) -> None:
    path = tmp_path_factory.mktemp("opencode") / "opencode.db"
    data = (GOLDEN / "files" / "opencode.db").read_bytes()
    path.write_bytes(data[:at] + junk + data[at + len(junk) :])
    items = _read(path)
    assert all(isinstance(i, TraceEvent | SessionMeta | TraceIssue) for i in items)
    assert all(i.path == path for i in items if isinstance(i, TraceIssue))


def test_text_that_is_not_utf8_is_read_with_replacement_characters(tmp_path: Path) -> None:
    """SQLite keeps whatever bytes a TEXT was given: a title or a part that is not UTF-8 is read with
    U+FFFD where the bytes were bad, and the usage beside it is still counted."""
    path = tmp_path / "opencode.db"
    shutil.copy(GOLDEN / "files" / "opencode.db", path)
    before = len(usage_reports(_read(path)))
    with sqlite3.connect(path) as db:
        db.execute("UPDATE session SET title = CAST(X'4142FF43' AS TEXT)")
        db.execute(
            "UPDATE part SET data = CAST(X'7BFF7D' AS TEXT) WHERE rowid = (SELECT min(rowid) FROM part)"
        )
    db.close()
    items = _read(path)
    titles = {i.title for i in items if isinstance(i, SessionMeta)}
    assert titles == {"AB\ufffdC"}
    assert len(usage_reports(items)) >= before - 1  # the damaged part alone is lost
    assert all(isinstance(i, TraceEvent | SessionMeta | TraceIssue) for i in items)


def _installed(harness: str) -> str:
    """The data dir where the real harness is installed (as tests/real has it), else the test is skipped."""
    root = Path(__file__).resolve().parents[1]
    data = os.environ.get("TACKROOM_TEST_DATA") or str(root / ".cache" / "tackroom-test")
    if not (Path(data) / "tackroom" / "harnesses" / harness).is_dir():
        pytest.skip(f"{harness} is not installed under {data}")
    return data


@pytest.mark.real
def test_the_real_harness_store_holds_the_usage_its_stream_reported(tmp_path: Path) -> None:
    data = _installed("opencode")
    from tackroom.run.runner import run

    workdir = tmp_path / "work"
    workdir.mkdir()
    script = Script([Turn.call("shell", {"command": "echo hi > out.txt"}), Turn.reply("DONE")])
    environ = {**os.environ, "XDG_DATA_HOME": data}
    result = run(
        "opencode",
        "run the shell",
        workdir=workdir,
        mock=script,
        options={"auto_accept": True},
        runs_dir=tmp_path / "runs",
        environ=environ,
        timeout_s=180,
    )
    assert result.ok, result.error
    store = result.run_dir / "home" / ".local" / "share" / "opencode" / "opencode.db"
    before = _digests(store)
    items = _read(store)
    assert _digests(store) == before
    usage = [u.event.usage for u in usage_reports(items) if u.session_id == result.session_id]  # type: ignore[attr-defined]
    assert len(usage) == 2
    total = usage[0] + usage[1]
    for figure in ("input", "output", "cache_read", "cache_write", "reasoning"):
        assert total.state(figure) == result.usage.state(figure), figure
