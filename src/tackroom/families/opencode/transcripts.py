"""OpenCode's session store: one SQLite database, ``$XDG_DATA_HOME/opencode/opencode.db``.

Verified on 1.18.33. Three tables matter: ``session`` (``id``, ``parent_id``
for a subagent's session, ``directory``, ``title``, ``agent``, times in epoch
milliseconds), ``message`` (JSON ``data``: ``role``, an assistant's
``modelID``, ``tokens``, ``error``) and ``part`` (JSON ``data`` by
``type``: ``text``, ``tool`` with its ``state``, ``step-start``,
``step-finish`` with the call's ``tokens``, ``reasoning``, ``patch``,
``file``, ...). Each ``step-finish`` part is one model call: its usage,
keyed by the part's id. Parts tackroom does not map are kept as raw records
(``part.<type>``), and so are the rows of ``session_message``; the ``event``
table (a replication log of the same rows) and ``todo`` are not read.

Token figures are opencode's own and already uncached
(:func:`~tackroom.families.opencode.stream.step_usage`); a zero reasoning figure
is no figure.

``opencode run --session <id> --fork`` copies the session's messages and
parts into a new session with new ids but their original times, so a copy is
older than the session holding it: it is the fork's history, not its
spending, and its usage is left out. The fork names no parent; the session
holding the original of its last copied message is taken as its parent.

The database is never written to, nor its ``-wal`` and ``-shm``: a harness may
be writing it. Without a write-ahead log it is opened immutable (no lock, no
``-shm``); with one, the database and its log are copied to a temporary
directory (until a copy is taken while neither changed) and the copy is read.
The store is read whole whenever it changes (``incremental = False``).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
import tempfile
from collections.abc import Iterator
from contextlib import closing, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import orjson

from tackroom.families.base import MAX_DEPTH, _depth, int_or_none, obj, str_or_none
from tackroom.families.opencode.stream import error_message, step_usage
from tackroom.trace.events import (
    FIGURES,
    AssistantText,
    ErrorEvent,
    Event,
    Record,
    SessionStarted,
    ToolCall,
    ToolResult,
    Usage,
    UsageReport,
    UserText,
)
from tackroom.trace.model import Cursor, SessionMeta, TraceEvent, TraceIssue, TraceItem, TranscriptReader

COPY_ATTEMPTS = 5
"""Copies of a database and its log taken while a harness writes, before giving up."""
_DONE = frozenset({"completed", "error"})


def iso(ms: Any) -> str | None:
    """An epoch-milliseconds time as ISO 8601 UTC (``2026-12-01T13:21:02.454Z``), or None."""
    value = int_or_none(ms)
    if value is None:
        return None
    try:
        when = datetime.fromtimestamp(value / 1000, UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _json(text: Any) -> dict[str, Any] | str:
    """A row's JSON object, or why there is none."""
    if not isinstance(text, str | bytes):
        return "its data is not text"
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        return f"its data is not JSON ({exc})"
    if not isinstance(data, dict):
        return f"its data is a JSON {type(data).__name__}, not an object"
    if _depth(data) > MAX_DEPTH:
        return f"its data nests deeper than {MAX_DEPTH} levels"
    return data


def usage_of(tokens: Any) -> Usage:
    """A ``step-finish`` part's tokens; a figure that is there but not a count (``"5"``) is unknown."""
    usage = step_usage(tokens)
    tokens = obj(tokens)
    cache = tokens.get("cache")
    wrong = {name for name in ("input", "output", "reasoning") if name in tokens and _not_count(tokens[name])}
    if "cache" in tokens and not isinstance(cache, dict):
        wrong |= {"cache_read", "cache_write"}
    for key, name in (("read", "cache_read"), ("write", "cache_write")):
        if key in obj(cache) and _not_count(obj(cache)[key]):
            wrong.add(name)
    if not wrong:
        return usage
    values = {name: getattr(usage, name) for name in FIGURES if name not in wrong}
    return Usage(**values, unknown=frozenset(wrong))


def _not_count(value: Any) -> bool:
    return int_or_none(value) is None


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    return info.st_size, info.st_mtime_ns


@contextmanager
def snapshot(path: Path) -> Iterator[sqlite3.Connection]:
    """A read-only view of the database at ``path`` that cannot change it, its log or its shared memory.

    Raises:
        OSError: the database (or its log) cannot be read, or kept changing while it was copied.
        sqlite3.Error: it is not a database SQLite can open.
    """
    for part in (path, path.with_name(path.name + "-wal")):
        try:
            info = part.lstat()
        except FileNotFoundError:
            continue
        if stat.S_ISLNK(info.st_mode):
            raise OSError(f"{part.name} is a symbolic link: not followed")
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{part.name} is not a regular file")  # a FIFO would block the open forever
    wal = path.with_name(path.name + "-wal")
    if not (_stat(wal) or (0, 0))[0]:
        uri = f"file:{quote(str(path.resolve()))}?mode=ro&immutable=1"
        with closing(sqlite3.connect(uri, uri=True)) as db:
            db.text_factory = _text
            yield db
        return
    with tempfile.TemporaryDirectory(prefix="tackroom-opencode-") as scratch:
        copy = Path(scratch) / "opencode.db"
        for _ in range(COPY_ATTEMPTS):
            before = (_stat(path), _stat(wal))
            shutil.copyfile(path, copy, follow_symlinks=False)
            shutil.copyfile(wal, copy.with_name("opencode.db-wal"), follow_symlinks=False)
            if (_stat(path), _stat(wal)) == before:
                break
        else:
            raise OSError(f"{path.name} kept changing while it was copied ({COPY_ATTEMPTS} attempts)")
        with closing(sqlite3.connect(copy)) as db:
            db.text_factory = _text
            db.execute("PRAGMA query_only = 1")
            yield db


def _text(value: bytes) -> str:
    """TEXT as the store holds it; bytes a damaged store holds that are not UTF-8 become U+FFFD."""
    return value.decode("utf-8", "replace")


class OpencodeTranscripts(TranscriptReader):
    """Reads ``opencode.db``: every session in it, subagents' and forks' linked to their parent."""

    incremental = False
    suffixes = (".db",)

    def read(self, path: Path, cursor: Cursor, *, usage_only: bool = False) -> Iterator[TraceItem]:
        try:
            with snapshot(path) as db:
                yield from _Store(path, db, usage_only).items()
        except (OSError, sqlite3.Error, UnicodeDecodeError) as exc:
            # A damaged schema's error message can hold bytes that are not UTF-8: Python's sqlite3
            # then raises UnicodeDecodeError decoding the message itself (found by the fuzzer).
            yield TraceIssue(path, 0, f"cannot be read ({exc})")


class _Store:
    def __init__(self, path: Path, db: sqlite3.Connection, usage_only: bool) -> None:
        self.path = path
        self.db = db
        self.usage_only = usage_only

    def items(self) -> Iterator[TraceItem]:
        tables = {row[0] for row in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not {"session", "message", "part"} <= tables:
            yield TraceIssue(self.path, 0, "not an opencode database (no session, message and part tables)")
            return
        self.extra = "session_message" in tables
        sessions = self.db.execute(
            "SELECT rowid, id, parent_id, directory, title, agent, time_created, time_updated"
            " FROM session ORDER BY time_created, id"
        )
        for row in sessions.fetchall():
            yield from self._session(*row)

    def _session(
        self,
        rowid: int,
        session: Any,
        parent: Any,
        directory: Any,
        title: Any,
        agent: Any,
        created: Any,
        updated: Any,
    ) -> Iterator[TraceItem]:
        if not isinstance(session, str) or not session:
            yield TraceIssue(self.path, rowid, "a session without an id: not read")
            return
        info = SessionMeta(
            session,
            parent_id=str_or_none(parent),
            cwd=str_or_none(directory),
            title=str_or_none(title),
            agent=str_or_none(agent) if parent else None,
        )
        since = int_or_none(created)
        info.saw(iso(created))
        info.saw(iso(updated))
        yield TraceEvent(session, SessionStarted(session_id=session), iso(created), line=rowid)
        last_copy: int | None = None
        messages = self.db.execute(
            "SELECT rowid, id, time_created, data FROM message"
            " WHERE session_id = ? ORDER BY time_created, id",
            (session,),
        )
        for number, message_id, time, text in messages:
            data = _json(text)
            if isinstance(data, str):
                yield TraceIssue(self.path, number, f"message {message_id}: {data}")
                continue
            copied = since is not None and isinstance(time, int) and time < since
            if copied:
                last_copy = time
            yield from self._message(session, info, number, message_id, time, data, copied)
        if self.extra and not self.usage_only:
            yield from self._session_messages(session)
        if info.parent_id is None and last_copy is not None:
            info.parent_id = self._forked_from(session, last_copy)
        yield info

    def _message(
        self,
        session: str,
        info: SessionMeta,
        number: int,
        message_id: Any,
        time: Any,
        data: dict[str, Any],
        copied: bool,
    ) -> Iterator[TraceItem]:
        role = data.get("role")
        model = str_or_none(data.get("modelID")) if role == "assistant" else None
        info.saw(None, model)
        if self.usage_only:
            query = (
                "SELECT rowid, id, time_created, data FROM part"
                " WHERE message_id = ? AND data LIKE ? ORDER BY id"
            )
            parts = self.db.execute(query, (message_id, '%"step-finish"%'))
        else:
            parts = self.db.execute(
                "SELECT rowid, id, time_created, data FROM part WHERE message_id = ? ORDER BY id",
                (message_id,),
            )
        for part_row, part_id, part_time, text in parts:
            part = _json(text)
            if isinstance(part, str):
                yield TraceIssue(self.path, part_row, f"part {part_id}: {part}")
                continue
            stamp = iso(part_time)
            if not copied:
                info.saw(stamp)
            for event, key in _part(role, part, part_id, copied, self.usage_only):
                yield TraceEvent(session, event, stamp, model if role == "assistant" else None, part_row, key)
        error = data.get("error")
        if error and not self.usage_only:
            event = ErrorEvent(message=error_message(error), fatal=False)
            yield TraceEvent(session, event, iso(time), model, number)

    def _session_messages(self, session: str) -> Iterator[TraceItem]:
        rows = self.db.execute(
            "SELECT rowid, type, time_created, data FROM session_message WHERE session_id = ? ORDER BY seq",
            (session,),
        )
        for number, kind, time, text in rows:
            data = _json(text)
            if isinstance(data, str):
                yield TraceIssue(self.path, number, f"session_message: {data}")
                continue
            record = Record(orjson.dumps(data).decode(), record_type=f"session_message.{kind}")
            yield TraceEvent(session, record, iso(time), line=number)

    def _forked_from(self, session: str, time: int) -> str | None:
        """The one other session holding the original (not a copy) of a message written at ``time``."""
        rows = self.db.execute(
            "SELECT DISTINCT message.session_id FROM message JOIN session ON session.id = message.session_id"
            " WHERE message.time_created = ? AND message.session_id != ? AND session.time_created <= ?",
            (time, session, time),
        ).fetchall()
        return str(rows[0][0]) if len(rows) == 1 and isinstance(rows[0][0], str) else None


def _part(
    role: Any, part: dict[str, Any], part_id: Any, copied: bool, usage_only: bool
) -> Iterator[tuple[Event, str | None]]:
    kind = part.get("type")
    if kind == "step-finish":
        usage = usage_of(part.get("tokens"))
        if usage.reported and not copied:
            yield UsageReport(usage=usage), str_or_none(part_id)
        elif not usage_only:  # a copy's call, or one without figures: kept as it is
            yield Record(orjson.dumps(part).decode(), record_type="part.step-finish"), None
        return
    if usage_only:
        return
    # A synthetic text is opencode's own (a file's content it attached): not what anyone wrote.
    if (
        kind == "text"
        and isinstance(text := part.get("text"), str)
        and text
        and part.get("synthetic") is not True
    ):
        yield (UserText(text=text) if role == "user" else AssistantText(text=text)), None
    elif kind == "tool":
        state = obj(part.get("state"))
        call_id = str_or_none(part.get("callID"))
        yield (
            ToolCall(name=str_or_none(part.get("tool")) or "", call_id=call_id, input=state.get("input")),
            None,
        )
        status = state.get("status")
        if isinstance(status, str) and status in _DONE:
            output = state.get("output") if status == "completed" else state.get("error")
            result = ToolResult(call_id=call_id, output=str_or_none(output), is_error=status == "error")
            yield result, None
    else:
        record_type = f"part.{kind}" if isinstance(kind, str) else "part"
        yield Record(orjson.dumps(part).decode(), record_type=record_type), None
