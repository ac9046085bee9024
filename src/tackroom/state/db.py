"""One SQLite file for tackroom's state: opened, migrated, and its errors translated once.

The file is ``$XDG_DATA_HOME/tackroom/state.db``. It runs in WAL mode, so
readers never wait for a writer; writers wait for each other (up to
:data:`BUSY_S`) and each write is one transaction, so a row is stored whole
or not at all, whatever kills the process. Every ``sqlite3`` error is
translated here into a :class:`~tackroom.errors.StateError` naming the file
and the fix: a file that is not a database, another program's database, a
newer tackroom's, a directory that cannot be written.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from tackroom._files import data_dir
from tackroom.errors import StateError
from tackroom.state.migrations import migrate

STATE_FILE = "state.db"
BUSY_S = 30.0
"""How long a writer waits for another writer before giving up (a probe writes in milliseconds)."""
PAGE_SIZE = 16384
"""Bytes per page of a state database this process creates (see :meth:`StateDB._open`)."""


def state_path(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_DATA_HOME/tackroom/state.db``."""
    return data_dir(os.environ if env is None else env) / STATE_FILE


class StateDB:
    """The state database at ``path``, migrated on first use.

    Connections are short-lived (one per operation), so one ``StateDB`` may be
    shared by threads, and many processes may write at once.
    """

    def __init__(self, path: Path, *, upto: int | None = None) -> None:
        self.path = Path(path)
        self._upto = upto
        self._migrated = False

    @classmethod
    def default(cls, env: Mapping[str, str] | None = None) -> StateDB:
        """The user's state database (see :func:`state_path`)."""
        return cls(state_path(env))

    @contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        """A connection in autocommit mode; any sqlite3 error inside becomes a StateError."""
        db = self.open()
        try:
            with self._translated():
                yield db
        finally:
            db.close()

    def open(self) -> sqlite3.Connection:
        """A connection the caller keeps, for many transactions, and closes; use it inside
        :meth:`errors`. Opening one costs about a millisecond (the schema is read again), which a
        process storing hundreds of batches (a scan's worker) pays once this way."""
        with self._translated():
            db = self._open()
            try:
                if not self._migrated:
                    migrate(db, self.path, self._upto)
                    self._migrated = True
            except BaseException:
                db.close()
                raise
            return db

    def errors(self) -> AbstractContextManager[None]:
        """Inside it, any sqlite3 error is raised as a StateError naming this file and the fix."""
        return self._translated()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (``BEGIN IMMEDIATE``): all of it is stored, or none."""
        with self.connect() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def _open(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StateError(
                f"{self.path}: cannot create its directory ({exc.strerror or exc}): "
                "make it writable or point XDG_DATA_HOME elsewhere"
            ) from exc
        db = sqlite3.connect(self.path, timeout=BUSY_S, isolation_level=None)
        try:
            # Pages of 16 KiB where SQLite's default is 4: a trace index row (a log's calls, keys, copy
            # records and fold, 7 KiB for a common log) then fits in one, where it spilled over three,
            # and a first usage report stores and reads its index 2 % faster. It holds for a database
            # this connection creates; one made before keeps its own.
            db.execute(f"PRAGMA page_size={PAGE_SIZE}")
            # Not inside a transaction: the journal mode sticks to the file once set.
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA foreign_keys=ON")
        except BaseException:
            db.close()
            raise
        return db

    @contextmanager
    def _translated(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise StateError(_explain(self.path, exc)) from exc
        except (
            UnicodeDecodeError
        ) as exc:  # sqlite hands back TEXT as it is stored: a damaged file's is not UTF-8
            raise StateError(
                _explain(self.path, sqlite3.DatabaseError(f"file is not a database: {exc}"))
            ) from exc


def _explain(path: Path, exc: sqlite3.Error) -> str:
    text = str(exc)
    if "not a database" in text or "malformed" in text or "file is encrypted" in text:
        return (
            f"{path}: not a usable SQLite database ({text}): move it aside "
            f"(mv {path} {path}.bad); tackroom makes a new one on next use"
        )
    if "readonly" in text or "unable to open" in text or "disk I/O" in text:
        return f"{path}: cannot be written ({text}): make it and its directory writable, or free disk space"
    if "locked" in text or "busy" in text:
        return f"{path}: still locked by another process after {BUSY_S:g}s ({text}): try again"
    return f"{path}: the state database failed ({text}): move it aside to start a new one"
