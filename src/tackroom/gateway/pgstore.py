"""The capture store in PostgreSQL: one gateway database shared by many hosts (psycopg 3).

The same schema as the SQLite store's ``m005_gateway`` (the same tables,
columns, checks and indexes, in PostgreSQL's types), applied by named
migrations recorded in ``_tackroom_migrations``, once, under an advisory
lock (two gateways starting at once apply them once). Bodies are the same
content-addressed, deduplicated blobs; a batch is one transaction, its rows
sent by ``COPY`` (and only the blobs the database lacks). Every error is a
:class:`~tackroom.errors.GatewayError` naming the URL with its password hidden.

psycopg is an optional dependency (``pip install 'tackroom[postgres]'``),
imported only when a ``postgresql://`` store is opened.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

from tackroom.errors import GatewayError
from tackroom.gateway.store import _COLUMNS, Call, GroupBy, _blobs, _public, _row, join_request, summarize
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


class PostgresCaptureStore:
    """Captured calls in a PostgreSQL database.

    The server is reached (and the schema migrated) when the store is made,
    so a bad URL fails at start. One connection, opened again after a
    failure, serves every thread in turn (the gateway's writer is one thread).
    """

    def __init__(self, url: str, *, upto: int | None = None) -> None:
        if not is_postgres_url(url):
            raise GatewayError(f"not a PostgreSQL URL (postgresql://...): {shown(url)!r}")
        self.url = url
        self.shown = shown(url)
        self._check_url()
        try:
            import psycopg  # noqa: F401
        except ImportError as exc:
            raise GatewayError(
                f"{self.shown}: a PostgreSQL capture store needs psycopg 3: pip install 'tackroom[postgres]'"
            ) from exc
        self._upto = upto
        self._lock = threading.Lock()
        self._db: psycopg.Connection[Any] | None = None
        self._held: list[psycopg.Connection[Any]] = []
        weakref.finalize(self, _close_all, self._held)  # a store dropped unclosed closes its connection
        with self._connection():
            pass  # an unreachable server or a refused schema is said now, not at the first write

    def _check_url(self) -> None:
        try:
            parts = urlsplit(self.url)
            parts.port  # noqa: B018  (a port that is not a number raises here)
            options = parse_qsl(parts.query, strict_parsing=bool(parts.query))
        except ValueError as exc:
            raise GatewayError(f"{self.shown}: not a usable PostgreSQL URL ({exc})") from exc
        self._secrets = [
            value for value in (parts.password, *(v for k, v in options if k == "password")) if value
        ]
        if parts.fragment:
            raise GatewayError(
                f"{self.shown}: not a usable PostgreSQL URL (a #fragment): "
                "give postgresql://user@host[:port]/database[?option=value]"
            )

    def add(self, calls: Sequence[Call]) -> None:
        rows, blobs = [], []
        for call in calls:
            request, response, found = _blobs(call)
            blobs += found
            rows.append(_row(call, request, response))
        if not rows:
            return
        try:
            self._write(rows, dict(blobs))
        except GatewayError:
            if self._db is not None:
                raise
            # The connection was lost (a server restart, a dropped link): write the batch once
            # more on a new connection rather than lose it, but not the calls stored already
            # (the link may have dropped after the commit, before its answer).
            self._write(rows, dict(blobs), again=True)

    def _write(self, rows: list[tuple[Any, ...]], unique: dict[str, bytes], *, again: bool = False) -> None:
        with self._connection() as db, db.transaction(), db.cursor() as cur:
            if again:
                cur.execute(
                    "SELECT call_id FROM gateway_calls WHERE call_id = ANY(%s)", ([row[0] for row in rows],)
                )
                stored = {call_id for (call_id,) in cur.fetchall()}
                rows = [row for row in rows if row[0] not in stored]
            # Only the blobs not stored yet cross the network (a conversation's history, once).
            cur.execute("SELECT hash FROM gateway_blobs WHERE hash = ANY(%s)", (list(unique),))
            for (digest,) in cur.fetchall():
                unique.pop(digest, None)
            if unique:
                # One statement, in hash order: hosts storing the same new blobs at once wait for
                # each other in one order, never in a deadlock that would lose a batch.
                digests = sorted(unique)
                cur.execute(
                    "INSERT INTO gateway_blobs (hash, size, data) "
                    "SELECT * FROM unnest(%s::text[], %s::bigint[], %s::bytea[]) ORDER BY 1 "
                    "ON CONFLICT DO NOTHING",
                    (digests, [len(unique[d]) for d in digests], [unique[d] for d in digests]),
                )
            with cur.copy(f"COPY gateway_calls ({', '.join(_COLUMNS)}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)

    def calls(self, *, run: str | None = None, trace: str | None = None) -> list[dict[str, Any]]:
        where = ""
        args: tuple[str, ...] = ()
        if run is not None:
            where, args = "WHERE run_id = %s OR (run_id IS NULL AND trace_id = %s)", (run, run)
        elif trace is not None:
            where, args = "WHERE trace_id = %s", (trace,)
        with self._connection() as db, db.cursor() as cur:
            cur.execute(f"SELECT {', '.join(_COLUMNS)} FROM gateway_calls {where} ORDER BY id", args)
            names = [column.name for column in cur.description or ()]
            return [_public(dict(zip(names, row, strict=True))) for row in cur.fetchall()]

    def usage(self, by: GroupBy) -> list[dict[str, Any]]:
        return summarize(self.calls(), by)

    def body(self, digest: str) -> bytes | None:
        with self._connection() as db:
            data = _load(db, digest)
            if data is None:
                return None

            def load(item: str) -> bytes:
                found = _load(db, item)
                if found is None:
                    raise KeyError(item)
                return found

            return join_request(data, load)

    def blob_count(self) -> int:
        with self._connection() as db:
            row = db.execute("SELECT count(*) FROM gateway_blobs").fetchone()
            return int(row[0]) if row else 0

    def close(self) -> None:
        with self._lock:
            _close_all(self._held)
            self._db = None

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        """The open, migrated connection (one user at a time); psycopg's errors become GatewayErrors."""
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
                raise GatewayError(
                    f"{self.shown}: the PostgreSQL capture store failed: {self._said(exc)}"
                ) from exc

    def _said(self, exc: BaseException) -> str:
        """psycopg's message on one line, the URL's password (and any credential) hidden."""
        text = " ".join(str(exc).split()) or type(exc).__name__
        return redact_text(text, self._secrets)

    def _open(self) -> psycopg.Connection[Any]:
        import psycopg

        try:
            db = psycopg.connect(self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
        except psycopg.ProgrammingError as exc:  # a malformed conninfo
            raise GatewayError(f"{self.shown}: not a usable PostgreSQL URL ({self._said(exc)})") from exc
        except psycopg.OperationalError as exc:
            raise GatewayError(
                f"{self.shown}: cannot reach the PostgreSQL server ({self._said(exc)}): "
                "check the host, port, database, user and password, and that the server runs"
            ) from exc
        try:
            migrate(db, self.shown, self._upto)
        except BaseException:
            db.close()
            raise
        return db


def migrate(db: psycopg.Connection[Any], where: str, upto: int | None = None) -> list[str]:
    """Apply the pending migrations in one transaction (under an advisory lock); return those applied."""
    wanted = MIGRATIONS if upto is None else MIGRATIONS[:upto]
    with db.transaction():
        db.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
        db.execute(f"CREATE TABLE IF NOT EXISTS {TABLE} (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
        applied = {name for (name,) in db.execute(f"SELECT name FROM {TABLE}")}
        unknown = sorted(applied - {fn.__name__ for fn in MIGRATIONS})
        if unknown:
            raise GatewayError(
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


def _load(db: psycopg.Connection[Any], digest: str) -> bytes | None:
    row = db.execute("SELECT data FROM gateway_blobs WHERE hash = %s", (digest,)).fetchone()
    return None if row is None else bytes(row[0])
