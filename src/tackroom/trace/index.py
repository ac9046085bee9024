"""The trace index: what tackroom has read of every session log, so the next report reads only what is new.

For each file the index keeps its size, modification time, inode and a hash
of its first bytes, where the last read stopped (a byte offset and the
reader's carry-over), the usage of every model call read so far (one JSON
array per file, each call's key once, its last figures), the sessions it
holds, and the problems found in it. A scan then:

* passes over a file whose size, time and inode are unchanged, unopened;
* reads on from the stored offset when an append-only log has grown and its
  first bytes are the same;
* reads it again whole when it was rewritten in place (smaller, another
  inode, other first bytes) or is a database (``incremental = False``);
* forgets a file that no longer exists, or is no longer under a root it looks in.

New bytes are read by worker processes (one per core) when there are many of
them; a file is read by one process at a time, and everything it yields is
stored in one transaction, so an interrupted scan loses nothing already
stored and repeats nothing. Each change bumps the index's generation, which
invalidates cached reports. The files themselves are only ever read.
"""

from __future__ import annotations

import atexit
import multiprocessing
import multiprocessing.util
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import orjson

from tackroom._gc import paused
from tackroom._hash import blake2b
from tackroom.families import get_family
from tackroom.paths import read_regular
from tackroom.state.db import BUSY_S, StateDB
from tackroom.trace.discover import Source
from tackroom.trace.model import (
    FIRST_BYTES,
    R_KEY,
    Cursor,
    SessionMeta,
    TraceIssue,
    TranscriptReader,
    UsageRow,
)
from tackroom.trace.summary import E_REPORTED, E_SUMS, E_UNKNOWN, MAX_TOKENS, bounded, fold, rank
from tackroom.values import iso

HEAD = FIRST_BYTES
"""How many leading bytes identify a file's content (a log rewritten in place has other first bytes)."""
MAX_ISSUES = 100
"""Problems kept per file (the count of the rest is kept too)."""
PARALLEL_BYTES = 16 * 1024 * 1024
"""Below this much to read, a scan reads in this process: starting workers costs more."""
BATCH_BYTES = 8 * 1024 * 1024
BATCH_FILES = 64
"""A batch (read, then stored in one transaction) holds about this many bytes to read, or files."""

Row = UsageRow


@dataclass
class Task:
    """One file to read, from where the index says its last read stopped."""

    family: str
    path: str
    offset: int = 0
    line: int = 0
    state: dict[str, Any] = field(default_factory=dict)
    head: str = ""
    """``"<length>:<hash>"`` of the bytes the last read started from; empty for a first read."""
    source: Source | None = None
    """The file as the walk found it (what is stored beside what was read)."""
    known: bool = False
    """Whether the index already has a row for the file."""


@dataclass
class Done:
    """What one read of one file found."""

    path: str
    restarted: bool
    """Read from the start (new, rewritten, or a database): the stored rows are replaced, not extended."""
    offset: int
    line: int
    state: dict[str, Any]
    head: str
    rows: list[Row]
    sessions: list[dict[str, Any]]
    issues: list[list[Any]]
    more_issues: int = 0
    blobs: tuple[bytes, bytes, bytes, bytes] | None = None
    """For a file read whole: :func:`stored` of its rows, made in the worker that read them (``rows`` is
    then empty)."""


_READERS: dict[str, TranscriptReader] = {}


def _reader(family: str) -> TranscriptReader:
    reader = _READERS.get(family)
    if reader is None:
        found = get_family(family).transcripts()
        if found is None:
            raise LookupError(f"family {family!r} has no transcript reader")
        reader = _READERS[family] = found
    return reader


def head_of(path: str, length: int) -> str:
    """``"<length>:<hash>"`` of the first ``length`` bytes of ``path`` (fewer if it is shorter)."""
    try:
        return identity(read_regular(path, length))
    except OSError:
        return ""


def identity(data: bytes) -> str:
    """``"<length>:<hash>"`` of a file's first bytes ``data``."""
    return f"{len(data)}:{blake2b(data, digest_size=16).hexdigest()}"


def read_file(task: Task) -> Done:
    """Read one file on from ``task``'s cursor (whole, when it changed underneath); never raises."""
    reader = _reader(task.family)
    restarted = not reader.incremental or not task.head
    if not restarted:
        length = int(task.head.split(":", 1)[0])
        if head_of(task.path, length) != task.head:
            restarted = True  # rewritten in place: what was read before is not what is there now
    cursor = Cursor() if restarted else Cursor(task.offset, task.line, dict(task.state))
    rows: list[Row] = []
    sessions: dict[str, SessionMeta] = {}
    issues: list[list[Any]] = []
    more = 0
    path = Path(task.path)
    try:
        for item in reader.usage(path, cursor):
            if isinstance(item, list):
                rows.append(item)
            elif isinstance(item, SessionMeta):
                known = sessions.get(item.session_id)
                sessions[item.session_id] = item if known is None else merge_meta(known, item)
            elif len(issues) < MAX_ISSUES:
                issues.append([item.line, item.message])
            else:
                more += 1
    except Exception as exc:
        issues.append([cursor.line, f"the reader failed here: {type(exc).__name__}: {exc}"])
    head = task.head
    if restarted or not task.head:
        # The identity of the file is its first bytes as far as they were read (it may be shorter than HEAD).
        length = min(HEAD, max(cursor.offset, 1)) if reader.incremental else HEAD
        # The bytes the read began with, when the reader kept them: the file is not opened again.
        head = identity(cursor.first[:length]) if cursor.first is not None else head_of(task.path, length)
    rows = dedupe(rows)
    blobs = None
    if restarted or not task.head:  # read whole: stored as it is (a grown file is merged, then folded)
        blobs = stored(rows)
        rows = []
    return Done(
        task.path,
        restarted,
        cursor.offset,
        cursor.line,
        cursor.state,
        head,
        rows,
        [meta.to_json() for meta in sessions.values()],
        issues,
        more,
        blobs,
    )


def stored(rows: list[Row]) -> tuple[bytes, bytes, bytes, bytes]:
    """What the index keeps of a file's calls: the calls, their keys, their copy records and their fold
    (:mod:`tackroom.trace.summary`).

    A figure above :data:`~tackroom.trace.summary.MAX_TOKENS` is unknown (so a call's figures add up
    in 64 bits); looked for only when a sum is that large. A sum of millions of such calls that is
    still too large for 64 bits is unknown too.
    """
    try:
        keys, copies, entries = fold(rows)
        sums = [entry[E_SUMS:E_REPORTED] for entry in entries]
        large = any(max(each) > MAX_TOKENS or min(each) < 0 for each in sums)
    except OverflowError:  # a figure the records cannot hold
        large = True
    if large:
        rows = bounded(rows)
        keys, copies, entries = fold(rows)
        for entry in entries:
            for n in range(5):
                if entry[E_SUMS + n] >= 2**62:  # unknown, and none of its calls reported it
                    entry[E_SUMS + n] = entry[E_REPORTED + n] = 0
                    entry[E_UNKNOWN] |= 1 << n
    return orjson.dumps(rows), orjson.dumps(keys), copies.tobytes(), orjson.dumps(entries)


def dedupe(rows: list[Row]) -> list[Row]:
    """Each call's key once: of its lines, one that is not a side chain's copy, then the one with the
    largest total, wins (the first of equals).

    A streamed message's usage only grows as it is written (Claude Code writes
    the message once per content block), so the largest is the final count;
    ccusage keeps the same one.
    """
    at: dict[str, int] = {}
    out: list[Row] = []
    for row in rows:
        key = row[R_KEY]
        if key is None:
            out.append(row)
            continue
        place = at.get(key)
        if place is None:
            at[key] = len(out)
            out.append(row)
        elif rank(row) > rank(out[place]):
            out[place] = row
    return out


def merge_meta(old: SessionMeta, new: SessionMeta) -> SessionMeta:
    """One session seen in two reads: the wider window, every model, the first of the rest."""
    merged = SessionMeta(
        old.session_id,
        parent_id=old.parent_id or new.parent_id,
        cwd=old.cwd or new.cwd,
        models=list(old.models),
        title=old.title or new.title,
        agent=old.agent or new.agent,
    )
    merged.saw(old.started)
    merged.saw(old.ended)
    merged.saw(new.started)
    merged.saw(new.ended)
    for model in new.models:
        merged.saw(None, model)
    return merged


def _meta(data: dict[str, Any]) -> SessionMeta:
    return SessionMeta(
        data["session_id"],
        parent_id=data.get("parent_id"),
        cwd=data.get("cwd"),
        started=data.get("started"),
        ended=data.get("ended"),
        models=list(data.get("models") or []),
        title=data.get("title"),
        agent=data.get("agent"),
    )


@dataclass
class ScanReport:
    """What one scan did."""

    files: int = 0
    """Files found."""
    read: int = 0
    """Files read (new, grown, or changed)."""
    bytes_read: int = 0
    removed: int = 0
    issues: list[TraceIssue] = field(default_factory=list)
    """Problems found while listing (unreadable directories); a file's own are in the index."""
    roots: list[list[str]] = field(default_factory=list)
    """``[path, glob]`` of every root walked."""
    templates: list[str] = field(default_factory=list)
    """The adapter data the roots were expanded from."""
    harnesses: list[str] = field(default_factory=list)
    listing: str = ""
    """Every log found, as :func:`tackroom.trace.shortcut.listing` writes it (what a repeat compares)."""
    trees: list[list[Any]] = field(default_factory=list)
    """Per root, the directories walked and the lines of the listing it found
    (:func:`tackroom.trace.shortcut.trees`)."""
    walked_at: int = 0
    """When the walk began (ns since the epoch): a directory changed after it is seen as changed."""


Progress = Callable[[int, int], None]
"""Called with (bytes done, bytes to do) as files are read."""


class TraceIndex:
    """The ``trace_*`` tables of one state database."""

    def __init__(self, db: StateDB) -> None:
        self.db = db

    def generation(self) -> int:
        with self.db.connect() as db:
            (value,) = db.execute("SELECT value FROM trace_generation WHERE id = 1").fetchone()
        return int(value)

    def scan(
        self,
        sources: Sequence[Source],
        *,
        families: Mapping[str, str],
        jobs: int | None = None,
        progress: Progress | None = None,
        released: Callable[[], None] | None = None,
    ) -> ScanReport:
        """Bring the index up to date with ``sources``: every file found for the harnesses ``families``
        names (adapter name -> family name).

        ``released`` is called once the scan no longer keeps every core busy: at once when it reads
        in this process or has nothing to read, and, with workers, once fewer batches are left than
        workers (a caller's side work, such as loading a price table, then runs beside the rest
        instead of under the readers)."""
        report = ScanReport(files=len(sources))
        with self.db.connect() as db:
            known = {
                row[1]: row
                for row in db.execute(
                    "SELECT id, path, harness, size, mtime_ns, inode, head, offset, line, state "
                    "FROM trace_files"
                )
            }
        tasks: list[Task] = []
        for source in sources:
            key = source.location
            row = known.get(key)
            if row is not None and (row[3], row[4], row[5]) == (source.size, source.mtime_ns, source.inode):
                continue
            family = families[source.harness]
            if row is None or row[5] != source.inode or source.size < row[7]:
                tasks.append(Task(family, key, source=source, known=row is not None))
            else:
                state = orjson.loads(row[9])
                tasks.append(Task(family, key, row[7], row[8], state, row[6], source=source, known=True))
        # A log of these harnesses that this scan did not find (deleted, or under a root no longer
        # looked at, such as another CLAUDE_CONFIG_DIR) is forgotten: a report covers what is there now.
        seen = {s.location for s in sources}
        scanned = set(families)
        gone = [row[0] for path, row in known.items() if row[2] in scanned and path not in seen]
        if not tasks and not gone:
            if released is not None:
                released()
            return report
        report.bytes_read = sum(_todo(task) for task in tasks)
        report.read = len(tasks)
        report.removed = len(gone)
        # A connection held open while the batches are stored: the last one to close a WAL database
        # copies the log into it, and each batch's own connection would otherwise be the last (about a
        # sixth of a first pass's time went there). It is closed aside (see _close_aside).
        held = self.db.open()
        try:
            with self.db.errors():
                held.execute("PRAGMA synchronous=NORMAL")  # a cache of the logs: a crash loses a batch
            self._read_all(tasks, report.bytes_read, jobs, progress, held, released)
            with self.db.errors():
                held.execute("PRAGMA wal_autocheckpoint=0")  # this commit leaves the log to _close_aside
                _begin(held)
                try:
                    held.executemany("DELETE FROM trace_files WHERE id = ?", [(i,) for i in gone])
                    held.execute("UPDATE trace_generation SET value = value + 1 WHERE id = 1")
                except BaseException:
                    held.execute("ROLLBACK")
                    raise
                held.execute("COMMIT")
        finally:
            _close_aside(self.db, held)
        return report

    def _read_all(
        self,
        tasks: list[Task],
        total: int,
        jobs: int | None,
        progress: Progress | None,
        held: sqlite3.Connection,
        released: Callable[[], None] | None = None,
    ) -> None:
        """Read ``tasks`` and store what each read found, in batches of about :data:`BATCH_BYTES`.

        Many bytes are read by worker processes, each storing its own batches in the state
        database (one transaction per batch: SQLite takes one writer at a time, and a batch holds
        it for milliseconds). Nothing read crosses back to this process, so its memory stays that
        of one batch, not of the whole scan.
        """
        jobs = jobs or os.cpu_count() or 1
        # A batch holds files next to each other in path order: its rows then land in a few pages of the
        # index's path order, and a transaction writes a quarter fewer pages than for files far apart.
        # The largest batches go first, so no worker is left with a big one at the end.
        batches: list[list[Task]] = [[]]
        sizes = [0]
        for task in sorted(tasks, key=lambda task: task.path):
            todo = _todo(task)
            if batches[-1] and (sizes[-1] + todo > BATCH_BYTES or len(batches[-1]) >= BATCH_FILES):
                batches.append([])
                sizes.append(0)
            batches[-1].append(task)
            sizes[-1] += todo
        batches = [batch for _, batch in sorted(zip(sizes, batches, strict=True), key=lambda pair: -pair[0])]
        done = 0
        # Each worker keeps a connection of its own, opened after the fork, never shared, and closed as
        # it ends (before ``held``).
        if jobs <= 1 or total < PARALLEL_BYTES or len(batches) < 2:
            if released is not None:
                released()  # one core reads: the others are free
            for batch in batches:
                done += read_and_store(self.db, batch, held)
                if progress:
                    progress(done, total)
            return
        _finish_checkpoints()  # no thread of this process inside SQLite as it forks
        context = multiprocessing.get_context(
            "fork" if "fork" in multiprocessing.get_all_start_methods() else None
        )
        workers = min(jobs, len(batches))
        with context.Pool(workers, initializer=_start_worker, initargs=(self.db,)) as pool:
            for n, read in enumerate(pool.imap_unordered(partial(_worker_read, self.db), batches), 1):
                done += read
                if progress:
                    progress(done, total)
                if released is not None and len(batches) - n < workers:
                    released()  # fewer batches left than workers: a core is free from now on
                    released = None
            pool.close()
            pool.join()
        if released is not None:
            released()


_CHECKPOINTS: list[threading.Thread] = []
"""Threads copying a scan's write-ahead log into the database, joined before the process ends."""


def _close_aside(db: StateDB, held: sqlite3.Connection) -> None:
    """Close ``held``, a scan's connection, and leave the copy of the scan's write-ahead log into the
    database to a thread, which makes it while the report is built on the other core.

    The last connection to close a WAL database copies the log into it and syncs the disk: after a
    first pass over 500 MB, 40 ms before the report could start (and ``held``, which does not copy
    the log as it commits, would be that last one). The thread opens a connection of its own first,
    so ``held`` is not the last, then runs a passive checkpoint, which SQLite makes without holding
    Python's lock and without stopping the report's reads. What it leaves, the process's last
    connection copies as it closes; nothing is lost either way.
    """
    opened = threading.Event()

    def checkpoint() -> None:
        try:
            conn = db.open()
        except BaseException:
            return  # then held's close copies the log itself
        finally:
            opened.set()
        try:
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except sqlite3.Error:
            pass
        finally:
            conn.close()

    thread = threading.Thread(target=checkpoint, name="tackroom-checkpoint")
    try:
        thread.start()
    except RuntimeError:  # no thread to be had: held's close copies the log itself
        pass
    else:
        opened.wait()
        _CHECKPOINTS[:] = [t for t in _CHECKPOINTS if t.is_alive()] + [thread]
    with db.errors():
        held.close()


@atexit.register
def _finish_checkpoints() -> None:
    """Wait for the log copies under way (an exit would otherwise cut one short)."""
    for thread in _CHECKPOINTS:
        thread.join()


_WORKER_DB: sqlite3.Connection | None = None
"""A scan worker's connection to the state database, kept for every batch it stores (opening one per
batch cost a tenth of a first pass's CPU: each reads the schema again)."""


def _start_worker(db: StateDB) -> None:
    global _WORKER_DB
    _WORKER_DB = db.open()
    with db.errors():
        _WORKER_DB.execute("PRAGMA synchronous=NORMAL")
        # A checkpoint syncs the disk: every 4000 pages of the log (64 MB of 16 KiB pages, 16 MB of a
        # database made with 4 KiB ones), not every 1000 (10 % off a 500 MB first pass here); what is
        # left is copied aside as the scan ends (_close_aside).
        _WORKER_DB.execute("PRAGMA wal_autocheckpoint=4000")
        # The workers take turns at the one write lock: _store waits for it in finer steps than SQLite.
        _WORKER_DB.execute("PRAGMA busy_timeout=0")
    multiprocessing.util.Finalize(None, _WORKER_DB.close, exitpriority=0)  # runs as a closed pool ends


def _worker_read(db: StateDB, batch: list[Task]) -> int:
    assert _WORKER_DB is not None
    return read_and_store(db, batch, _WORKER_DB)


def read_and_store(db: StateDB, batch: list[Task], conn: sqlite3.Connection) -> int:
    """Read each file of ``batch`` and store what was found on ``conn`` (one of ``db``'s), in one
    transaction; the bytes read. Runs in the scan's workers, or in the scanning process itself."""
    with paused():
        results = [(task, read_file(task)) for task in batch]
        with db.errors():
            _store(conn, results)
    return sum(_todo(task) for task in batch)


def _todo(task: Task) -> int:
    """The bytes ``task`` has to read."""
    return max((task.source.size if task.source else 0) - task.offset, 0)


def _begin(db: Any, patience: float = BUSY_S) -> None:
    """``BEGIN IMMEDIATE``, waiting up to ``patience`` seconds for another writer, first in steps of a
    tenth of a millisecond, doubling to 5 ms.

    The scan's workers take turns at the write lock, each holding it a millisecond or two per batch;
    SQLite's own wait (on a connection with a busy timeout) sleeps 1, 2, then 5 ms and more, and those
    sleeps were a twentieth of a worker's time."""
    deadline = time.monotonic() + patience
    delay = 0.0001
    while True:
        try:
            db.execute("BEGIN IMMEDIATE")
            return
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorcode & 0xFF != sqlite3.SQLITE_BUSY:  # the busy codes, extended or not
                raise
            if time.monotonic() + delay > deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.005)


def _store(db: Any, batch: list[tuple[Task, Done]]) -> None:
    stamp = iso(datetime.now(UTC))
    _begin(db)
    try:
        for task, done in batch:
            source = task.source
            assert source is not None
            old = (
                db.execute(
                    "SELECT id, usage, issues FROM trace_files WHERE path = ?", (done.path,)
                ).fetchone()
                if task.known
                else None
            )
            issues: list[Any] = done.issues
            if done.blobs is not None:
                blobs = done.blobs
            else:
                rows = done.rows
                if old is not None:
                    rows = dedupe([*orjson.loads(old[1]), *rows])
                    issues = [*orjson.loads(old[2]), *issues][:MAX_ISSUES]
                blobs = stored(rows)
            values = (
                source.harness,
                source.run_id,
                source.size,
                source.mtime_ns,
                source.inode,
                done.head,
                done.offset,
                done.line,
                orjson.dumps(done.state).decode(),
                *blobs,
                orjson.dumps(issues).decode(),
                stamp,
            )
            if old is None:
                file_id = db.execute(
                    "INSERT INTO trace_files (harness, run_id, size, mtime_ns, inode, head, offset, "
                    "line, state, usage, keys, copies, summary, issues, read_at, path) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (*values, done.path),
                ).lastrowid
                assert file_id is not None
            else:
                file_id = old[0]
                db.execute(
                    "UPDATE trace_files SET harness = ?, run_id = ?, size = ?, mtime_ns = ?, inode = ?, "
                    "head = ?, offset = ?, line = ?, state = ?, usage = ?, keys = ?, copies = ?, "
                    "summary = ?, issues = ?, read_at = ? "
                    "WHERE id = ?",
                    (*values, file_id),
                )
            _store_sessions(db, file_id, source.harness, done, old is None)
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _store_sessions(db: Any, file_id: int, harness: str, done: Done, fresh: bool) -> None:
    if done.restarted and not fresh:
        db.execute("DELETE FROM trace_sessions WHERE file_id = ?", (file_id,))
    for data in done.sessions:
        meta = _meta(data)
        row = (
            None
            if fresh
            else db.execute(
                "SELECT session_id, parent_id, cwd, started, ended, models, title, agent "
                "FROM trace_sessions WHERE file_id = ? AND session_id = ?",
                (file_id, meta.session_id),
            ).fetchone()
        )
        if row is not None:
            old = _meta(dict(zip(_SESSION_KEYS, [*row[:5], orjson.loads(row[5]), *row[6:]], strict=True)))
            meta = merge_meta(old, meta)
        db.execute(
            "INSERT OR REPLACE INTO trace_sessions (file_id, harness, session_id, parent_id, cwd, "
            "started, ended, models, title, agent) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                file_id,
                harness,
                meta.session_id,
                meta.parent_id,
                meta.cwd,
                meta.started,
                meta.ended,
                orjson.dumps(meta.models).decode(),
                meta.title,
                meta.agent,
            ),
        )


_SESSION_KEYS = ("session_id", "parent_id", "cwd", "started", "ended", "models", "title", "agent")
