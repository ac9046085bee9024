"""The capture store in PostgreSQL: one gateway database shared by many hosts (psycopg 3).

The same schema as the SQLite store's ``m005_gateway``, applied with the rest of tackroom's tables
by :mod:`tackroom.state.postgres`. Bodies are the same content-addressed, deduplicated blobs; a
batch is one transaction, its rows sent by ``COPY`` (and only the blobs the database lacks). Every
error is a :class:`~tackroom.errors.GatewayError` naming the URL with its password hidden.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tackroom.errors import GatewayError
from tackroom.gateway.store import _COLUMNS, Call, GroupBy, _blobs, _public, _row, join_request, summarize
from tackroom.state.postgres import PostgresDB, is_postgres_url, shown

if TYPE_CHECKING:
    import psycopg

__all__ = ["PostgresCaptureStore", "is_postgres_url", "shown"]


class PostgresCaptureStore:
    """Captured calls in a PostgreSQL database.

    The server is reached (and the schema migrated) when the store is made,
    so a bad URL fails at start. One connection, opened again after a
    failure, serves every thread in turn (the gateway's writer is one thread).
    """

    def __init__(self, url: str, *, upto: int | None = None) -> None:
        self.pg = PostgresDB(url, what="the PostgreSQL capture store", error=GatewayError, upto=upto)
        self.url = url
        self.shown = self.pg.shown

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
            if not self.pg.lost:
                raise
            # The connection was lost (a server restart, a dropped link): write the batch once
            # more on a new connection rather than lose it, but not the calls stored already
            # (the link may have dropped after the commit, before its answer).
            self._write(rows, dict(blobs), again=True)

    def _write(self, rows: list[tuple[Any, ...]], unique: dict[str, bytes], *, again: bool = False) -> None:
        with self.pg.connection() as db, db.transaction(), db.cursor() as cur:
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
        with self.pg.connection() as db, db.cursor() as cur:
            cur.execute(f"SELECT {', '.join(_COLUMNS)} FROM gateway_calls {where} ORDER BY id", args)
            names = [column.name for column in cur.description or ()]
            return [_public(dict(zip(names, row, strict=True))) for row in cur.fetchall()]

    def usage(self, by: GroupBy) -> list[dict[str, Any]]:
        return summarize(self.calls(), by)

    def body(self, digest: str) -> bytes | None:
        with self.pg.connection() as db:
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
        with self.pg.connection() as db:
            row = db.execute("SELECT count(*) FROM gateway_blobs").fetchone()
            return int(row[0]) if row else 0

    def close(self) -> None:
        self.pg.close()


def _load(db: psycopg.Connection[Any], digest: str) -> bytes | None:
    row = db.execute("SELECT data FROM gateway_blobs WHERE hash = %s", (digest,)).fetchone()
    return None if row is None else bytes(row[0])
