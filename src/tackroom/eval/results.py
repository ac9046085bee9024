"""Cell results in a database: every attempt kept, the latest flagged, nothing rewritten.

A cell is done only once its result is stored here (one transaction: the previous attempt loses the
latest flag, the new one is inserted with it), so an evaluation that is killed loses at most the
cells that were running, and resuming reruns exactly the cells without a stored result.

The database is the state database (SQLite, the default), another SQLite file, or a PostgreSQL
server (``postgresql://...``, the one a shared gateway stores its captures in): the same tables
(migration ``m008_eval_results`` in both), the same statements.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from tackroom.eval.cell import CellResult
from tackroom.state.db import StateDB


class _Rows(Protocol):
    def fetchone(self) -> Any: ...
    def fetchall(self) -> list[Any]: ...


class _Session(Protocol):
    """What the store needs of a connection: statements with ``?`` placeholders."""

    def execute(self, sql: str, args: Sequence[Any] = ()) -> _Rows: ...
    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None: ...
    def insert(self, sql: str, args: Sequence[Any]) -> int: ...


class ResultStore:
    """The evaluations and cell results of one database: ``db`` is a :class:`StateDB`, a SQLite
    file, a ``postgresql://`` URL, or None (the user's state database)."""

    def __init__(self, db: StateDB | Path | str | None = None) -> None:
        if isinstance(db, str):
            from tackroom.state.postgres import is_postgres_url

            if is_postgres_url(db):
                self._backend: _SQLite | _Postgres = _Postgres(db)
                return
            db = Path(db)
        self._backend = _SQLite(db if isinstance(db, StateDB) else StateDB(db) if db else StateDB.default())

    @property
    def where(self) -> str:
        """The database, as a message may show it (no password)."""
        return self._backend.where

    def evaluation(self, directory: Path) -> int:
        """The id of the evaluation whose cells live in ``directory`` (made on first use)."""
        key = str(directory.resolve())
        with self._backend.transaction() as db:
            row = db.execute("SELECT id FROM eval_evaluations WHERE directory = ?", (key,)).fetchone()
            if row is not None:
                return int(row[0])
            made = "INSERT INTO eval_evaluations (directory, created_at) VALUES (?, ?)"
            return db.insert(made, (key, _now()))

    def store(self, evaluation: int, results: Iterable[CellResult]) -> None:
        """Keep ``results`` (each its cell's newest attempt), all in one transaction."""
        rows = [
            (
                evaluation,
                r.cell_id,
                r.attempt,
                r.task,
                r.harness,
                r.model,
                r.repeat,
                r.outcome,
                r.reward,
                None if r.passed is None else int(r.passed),
                _now(),
                json.dumps(r.to_json(), ensure_ascii=False, separators=(",", ":")),
            )
            for r in results
        ]
        with self._backend.transaction() as db:
            db.executemany(
                "UPDATE eval_results SET latest = 0 WHERE evaluation = ? AND cell_id = ? AND latest = 1",
                [(row[0], row[1]) for row in rows],
            )
            db.executemany(
                "INSERT INTO eval_results (evaluation, cell_id, attempt, latest, task, harness, model, "
                "repeat, outcome, reward, passed, stored_at, result) "
                "VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )

    def latest(self, evaluation: int) -> dict[str, CellResult]:
        """Each cell's latest stored attempt (a row that does not read back is no result: its cell is
        not done)."""
        with self._backend.session() as db:
            rows = db.execute(
                "SELECT result FROM eval_results WHERE evaluation = ? AND latest = 1 ORDER BY id",
                (evaluation,),
            ).fetchall()
        found: dict[str, CellResult] = {}
        for (text,) in rows:
            try:
                result = CellResult.from_json(json.loads(text))
            except (ValueError, KeyError, TypeError, AttributeError):
                continue
            found[result.cell_id] = result
        return found

    def attempts(self, evaluation: int) -> int:
        """How many attempts are stored, all cells together."""
        with self._backend.session() as db:
            query = "SELECT count(*) FROM eval_results WHERE evaluation = ?"
            row = db.execute(query, (evaluation,)).fetchone()
        return int(row[0])

    def last_directory(self) -> Path | None:
        """The directory of the evaluation a result was stored in last."""
        with self._backend.session() as db:
            row = db.execute(
                "SELECT e.directory FROM eval_results r JOIN eval_evaluations e ON e.id = r.evaluation "
                "ORDER BY r.id DESC LIMIT 1"
            ).fetchone()
        return None if row is None else Path(row[0])

    def known(self, directory: Path) -> int | None:
        """The id of the evaluation in ``directory`` if there is one."""
        with self._backend.session() as db:
            row = db.execute(
                "SELECT id FROM eval_evaluations WHERE directory = ?", (str(directory.resolve()),)
            ).fetchone()
        return None if row is None else int(row[0])

    def close(self) -> None:
        self._backend.close()


class _SQLite:
    def __init__(self, db: StateDB) -> None:
        self.db = db
        self.where = str(db.path)

    def session(self) -> AbstractContextManager[_Session]:
        return self._wrapped(self.db.connect())

    def transaction(self) -> AbstractContextManager[_Session]:
        return self._wrapped(self.db.transaction())

    @contextmanager
    def _wrapped(self, opened: AbstractContextManager[Any]) -> Iterator[_Session]:
        with opened as db:
            yield _SQLiteSession(db)

    def close(self) -> None:
        pass


class _SQLiteSession:
    def __init__(self, db: Any) -> None:
        self.db = db

    def execute(self, sql: str, args: Sequence[Any] = ()) -> _Rows:
        return self.db.execute(sql, args)  # type: ignore[no-any-return]

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self.db.executemany(sql, rows)

    def insert(self, sql: str, args: Sequence[Any]) -> int:
        return int(self.db.execute(sql, args).lastrowid or 0)


class _Postgres:
    def __init__(self, url: str) -> None:
        from tackroom.state.postgres import PostgresDB

        self.pg = PostgresDB(url, what="the PostgreSQL result store")
        self.where = self.pg.shown

    @contextmanager
    def session(self) -> Iterator[_Session]:
        with self.pg.connection() as db:
            yield _PostgresSession(db)

    @contextmanager
    def transaction(self) -> Iterator[_Session]:
        with self.pg.connection() as db, db.transaction():
            yield _PostgresSession(db)

    def close(self) -> None:
        self.pg.close()


class _PostgresSession:
    """psycopg's connection with the store's ``?`` placeholders (none of its statements holds a
    literal ``?`` or ``%``)."""

    def __init__(self, db: Any) -> None:
        self.db = db

    def execute(self, sql: str, args: Sequence[Any] = ()) -> _Rows:
        return self.db.execute(sql.replace("?", "%s"), args)  # type: ignore[no-any-return]

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            with self.db.cursor() as cur:
                cur.executemany(sql.replace("?", "%s"), rows)

    def insert(self, sql: str, args: Sequence[Any]) -> int:
        return int(self.db.execute(sql.replace("?", "%s") + " RETURNING id", args).fetchone()[0])


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
