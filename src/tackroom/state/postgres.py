"""Tackroom's shared tables in a PostgreSQL database (psycopg 3): one server for many hosts.

The same schema as the SQLite state database's (the same tables, columns, checks and indexes, in
PostgreSQL's types), applied by named migrations recorded in ``_tackroom_migrations``, once, under
an advisory lock (two hosts starting at once apply them once). :class:`PostgresDB` holds one
connection, opened again after a failure, for every thread in turn, and says every psycopg error
as the caller's error class, naming the URL with its password hidden. The gateway's capture store
and the evaluation's result store build on it.

psycopg is an optional dependency (``pip install 'tackroom[postgres]'``), imported only when a
``postgresql://`` URL is opened.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

from tackroom.errors import StateError, TackroomError
from tackroom.redact import redact_text
from tackroom.values import iso

if TYPE_CHECKING:
    import psycopg

SCHEMES = ("postgresql://", "postgres://")
CONNECT_TIMEOUT_S = 10
LOCK_KEY = 0x7461636B726F6F6D  # "tackroom": the advisory lock migrations hold
TABLE = "_tackroom_migrations"

PgMigration = Callable[["psycopg.Connection[Any]"], None]
MIGRATIONS: list[PgMigration] = []


def is_postgres_url(text: str) -> bool:
    return text.startswith(SCHEMES)


def shown(url: str) -> str:
    """The URL as an error may show it: no password (in the userinfo or a ``password=`` parameter)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return redact_text(url)
    end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    netloc, tail = rest[:end], rest[end:]
    userinfo, at, host = netloc.rpartition("@")
    if at and ":" in userinfo:
        netloc = f"{userinfo.partition(':')[0]}:***@{host}"
    return f"{scheme}://{netloc}{redact_text(tail)}"


def _migration(fn: PgMigration) -> PgMigration:
    MIGRATIONS.append(fn)
    return fn


@_migration
def m005_gateway(db: psycopg.Connection[Any]) -> None:
    # The SQLite migration of the same name, in PostgreSQL's types: REAL is a double,
    # BLOB is bytea, INTEGER is bigint (token counts and byte sizes pass 2^31).
    db.execute(
        """
        CREATE TABLE gateway_blobs (
            hash TEXT PRIMARY KEY,
            size BIGINT NOT NULL,
            data BYTEA NOT NULL
        )
        """
    )
    db.execute(
        """
        CREATE TABLE gateway_calls (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            call_id TEXT NOT NULL UNIQUE,
            trace_id TEXT,
            run_id TEXT,
            method TEXT NOT NULL,
            path TEXT NOT NULL,
            wire_api TEXT,
            provider TEXT,
            streamed SMALLINT NOT NULL CHECK (streamed IN (0, 1)),
            model_requested TEXT,
            model_served TEXT,
            status BIGINT,
            started_at DOUBLE PRECISION NOT NULL,
            first_byte_ms DOUBLE PRECISION,
            duration_ms DOUBLE PRECISION NOT NULL,
            outcome TEXT NOT NULL CHECK (outcome IN ('complete', 'incomplete')),
            reason TEXT,
            input_uncached BIGINT,
            cache_read BIGINT,
            cache_write BIGINT,
            output BIGINT,
            reasoning BIGINT,
            usage_raw TEXT CHECK (usage_raw IS NULL OR usage_raw::jsonb IS NOT NULL),
            cost_usd TEXT,
            request_bytes BIGINT NOT NULL,
            response_bytes BIGINT NOT NULL,
            request_body TEXT REFERENCES gateway_blobs (hash),
            response_body TEXT REFERENCES gateway_blobs (hash),
            response_truncated SMALLINT NOT NULL CHECK (response_truncated IN (0, 1)),
            CHECK ((outcome = 'complete') = (reason IS NULL))
        )
        """
    )
    db.execute("CREATE INDEX gateway_calls_by_trace ON gateway_calls (trace_id, id)")
    db.execute("CREATE INDEX gateway_calls_by_run ON gateway_calls (run_id, id)")
    db.execute("CREATE INDEX gateway_calls_by_start ON gateway_calls (started_at)")


@_migration
def m008_eval_results(db: psycopg.Connection[Any]) -> None:
    # The SQLite migration of the same name, in PostgreSQL's types.
    db.execute(
        """
        CREATE TABLE eval_evaluations (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            directory TEXT NOT NULL UNIQUE,
            created_at TEXT NOT NULL
        )
        """
    )
    db.execute(
        """
        CREATE TABLE eval_results (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            evaluation BIGINT NOT NULL REFERENCES eval_evaluations (id) ON DELETE CASCADE,
            cell_id TEXT NOT NULL,
            attempt BIGINT NOT NULL,
            latest SMALLINT NOT NULL,
            task TEXT NOT NULL,
            harness TEXT NOT NULL,
            model TEXT,
            repeat BIGINT NOT NULL,
            outcome TEXT NOT NULL,
            reward DOUBLE PRECISION,
            passed SMALLINT,
            stored_at TEXT NOT NULL,
            result TEXT NOT NULL,
            UNIQUE (evaluation, cell_id, attempt)
        )
        """
    )
    db.execute(
        "CREATE UNIQUE INDEX eval_results_latest ON eval_results (evaluation, cell_id) WHERE latest = 1"
    )


class PostgresDB:
    """A PostgreSQL database of tackroom's tables, reached (and migrated) when made, so a bad URL
    fails at once. One connection, opened again after a failure, serves every thread in turn; every
    psycopg error inside :meth:`connection` becomes ``error`` (a :class:`StateError` by default)
    saying what failed (``what``), the URL's password hidden."""

    def __init__(
        self,
        url: str,
        *,
        what: str = "the PostgreSQL database",
        error: type[TackroomError] = StateError,
        upto: int | None = None,
    ) -> None:
        self.url = url
        self.shown = shown(url)
        self.what = what
        self.error = error
        if not is_postgres_url(url):
            raise error(f"not a PostgreSQL URL (postgresql://...): {self.shown!r}")
        self._check_url()
        try:
            import psycopg  # noqa: F401
        except ImportError as exc:
            raise error(f"{self.shown}: {what} needs psycopg 3: pip install 'tackroom[postgres]'") from exc
        self._upto = upto
        self._lock = threading.Lock()
        self._db: psycopg.Connection[Any] | None = None
        self._held: list[psycopg.Connection[Any]] = []
        weakref.finalize(self, _close_all, self._held)  # dropped unclosed: its connection closes
        with self.connection():
            pass  # an unreachable server or a refused schema is said now, not at the first write

    def _check_url(self) -> None:
        try:
            parts = urlsplit(self.url)
            parts.port  # noqa: B018  (a port that is not a number raises here)
            options = parse_qsl(parts.query, strict_parsing=bool(parts.query))
        except ValueError as exc:
            raise self.error(f"{self.shown}: not a usable PostgreSQL URL ({exc})") from exc
        self._secrets = [
            value for value in (parts.password, *(v for k, v in options if k == "password")) if value
        ]
        if parts.fragment:
            raise self.error(
                f"{self.shown}: not a usable PostgreSQL URL (a #fragment): "
                "give postgresql://user@host[:port]/database[?option=value]"
            )

    @property
    def lost(self) -> bool:
        """The connection was dropped (the next :meth:`connection` opens another)."""
        return self._db is None

    def close(self) -> None:
        with self._lock:
            _close_all(self._held)
            self._db = None

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        """The open, migrated connection (one user at a time); psycopg's errors become ``error``."""
        import psycopg

        with self._lock:
            try:
                if self._db is None or self._db.closed or self._db.broken:
                    _close_all(self._held)
                    self._db = self._open()
                    self._held.append(self._db)
                yield self._db
            except psycopg.Error as exc:
                if self._db is not None and (self._db.closed or self._db.broken):
                    self._db = None
                raise self.error(f"{self.shown}: {self.what} failed: {self._said(exc)}") from exc

    def _said(self, exc: BaseException) -> str:
        """psycopg's message on one line, the URL's password (and any credential) hidden."""
        text = " ".join(str(exc).split()) or type(exc).__name__
        return redact_text(text, self._secrets)

    def _open(self) -> psycopg.Connection[Any]:
        import psycopg

        try:
            db = psycopg.connect(self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
        except psycopg.ProgrammingError as exc:  # a malformed conninfo
            raise self.error(f"{self.shown}: not a usable PostgreSQL URL ({self._said(exc)})") from exc
        except psycopg.OperationalError as exc:
            raise self.error(
                f"{self.shown}: cannot reach the PostgreSQL server ({self._said(exc)}): "
                "check the host, port, database, user and password, and that the server runs"
            ) from exc
        try:
            migrate(db, self.shown, self._upto, self.error)
        except BaseException:
            db.close()
            raise
        return db


def migrate(
    db: psycopg.Connection[Any], where: str, upto: int | None = None, error: type[TackroomError] = StateError
) -> list[str]:
    """Apply the pending migrations in one transaction (under an advisory lock); return those applied."""
    wanted = MIGRATIONS if upto is None else MIGRATIONS[:upto]
    with db.transaction():
        db.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
        db.execute(f"CREATE TABLE IF NOT EXISTS {TABLE} (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
        applied = {name for (name,) in db.execute(f"SELECT name FROM {TABLE}")}
        unknown = sorted(applied - {fn.__name__ for fn in MIGRATIONS})
        if unknown:
            raise error(
                f"{where}: written by a newer tackroom (migrations {', '.join(unknown)} are unknown here): "
                "upgrade tackroom"
            )
        done = []
        for fn in wanted:
            if fn.__name__ not in applied:
                fn(db)
                db.execute(
                    f"INSERT INTO {TABLE} (name, applied_at) VALUES (%s, %s)",
                    (fn.__name__, iso(datetime.now(UTC))),
                )
                done.append(fn.__name__)
    return done


def _close_all(held: list[psycopg.Connection[Any]]) -> None:
    while held:
        held.pop().close()
