"""The capture store: one row per call, bodies content-addressed, behind one small interface.

:class:`CaptureStore` is what the gateway and the CLI need (add calls, list
them, sum their usage, read a body back); :class:`SQLiteCaptureStore` keeps
them in the state database (``m005_gateway``);
:class:`~tackroom.gateway.pgstore.PostgresCaptureStore` keeps the same schema
in PostgreSQL, for a gateway shared by many hosts. :func:`~tackroom.gateway.stores.open_store` picks
one from a path or a ``postgresql://`` URL.

Bodies are stored by SHA-256. A request's conversation (``messages``,
``input``, ``contents``) is split into its items, each its own blob, and the
request itself is kept as a skeleton naming them (``{"$blob": hash}``): the
tenth call of a conversation stores only what is new since the ninth.

Nothing secret reaches here: the proxy redacts the path and the bodies before
it builds a :class:`Call`, and no header is stored.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal, Protocol

import orjson

from tackroom.errors import TackroomError
from tackroom.gateway.capture import USAGE_FIGURES, CallUsage
from tackroom.state.db import StateDB

CONVERSATION_KEYS = ("messages", "input", "contents")
BLOB_REF = "$blob"
GroupBy = Literal["run", "model", "day"]


@dataclass
class Call:
    """One call as the proxy saw it, ready to store (secrets already redacted)."""

    call_id: str
    method: str
    path: str
    started_at: float
    duration_ms: float
    trace_id: str | None = None
    run_id: str | None = None
    wire_api: str | None = None
    provider: str | None = None
    streamed: bool = False
    model_requested: str | None = None
    model_served: str | None = None
    status: int | None = None
    first_byte_ms: float | None = None
    reason: str | None = None
    """None: the call is complete; otherwise why it is not."""
    usage: CallUsage = field(default_factory=CallUsage)
    usage_raw: dict[str, Any] | None = None
    cost_usd: Decimal | None = None
    request_body: bytes | None = None
    response_body: bytes | None = None
    request_bytes: int = 0
    response_bytes: int = 0
    response_truncated: bool = False
    secrets: frozenset[str] = field(default=frozenset(), repr=False)
    """The call's credentials, for redaction only: never stored."""
    settle: Callable[[Call], None] | None = field(default=None, repr=False, compare=False)
    """Work left for the capture writer (reading the answer's copy), off the proxy's loop."""

    @property
    def outcome(self) -> str:
        return "complete" if self.reason is None else "incomplete"


class CaptureStore(Protocol):
    """Where captured calls go; every backend has the same schema and answers the same."""

    def add(self, calls: Sequence[Call]) -> None:
        """Store ``calls`` in one transaction: all of them, or none."""

    def calls(self, *, run: str | None = None, trace: str | None = None) -> list[dict[str, Any]]:
        """The stored calls, oldest first (``run`` matches a run id, or a trace id a run used)."""

    def usage(self, by: GroupBy) -> list[dict[str, Any]]:
        """Usage and cost summed by run, model or UTC day."""

    def body(self, digest: str) -> bytes | None:
        """A stored body by hash, a request's conversation put back together."""


def blob_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def split_request(body: bytes) -> tuple[bytes, list[bytes]]:
    """A request body as a skeleton plus its conversation items (each stored on its own)."""
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        return body, []
    if not isinstance(value, dict):
        return body, []
    items: list[bytes] = []
    skeleton = dict(value)
    for key in CONVERSATION_KEYS:
        if isinstance(value.get(key), list):
            refs = []
            for item in value[key]:
                data = orjson.dumps(item, option=orjson.OPT_SORT_KEYS)
                items.append(data)
                refs.append({BLOB_REF: blob_hash(data)})
            skeleton[key] = refs
    if not items:
        return body, []
    return orjson.dumps(skeleton, option=orjson.OPT_SORT_KEYS), items


def join_request(skeleton: bytes, load: Any) -> bytes:
    """The request a skeleton names, items loaded with ``load(hash) -> bytes``."""
    try:
        value = orjson.loads(skeleton)
    except orjson.JSONDecodeError:
        return skeleton
    if not isinstance(value, dict):
        return skeleton
    changed = False
    for key in CONVERSATION_KEYS:
        items = value.get(key)
        if isinstance(items, list) and items and all(_is_ref(i) for i in items):
            value[key] = [orjson.loads(load(i[BLOB_REF])) for i in items]
            changed = True
    return orjson.dumps(value) if changed else skeleton


def _is_ref(item: Any) -> bool:
    return isinstance(item, dict) and set(item) == {BLOB_REF}


_COLUMNS = (
    "call_id",
    "trace_id",
    "run_id",
    "method",
    "path",
    "wire_api",
    "provider",
    "streamed",
    "model_requested",
    "model_served",
    "status",
    "started_at",
    "first_byte_ms",
    "duration_ms",
    "outcome",
    "reason",
    "input_uncached",
    "cache_read",
    "cache_write",
    "output",
    "reasoning",
    "usage_raw",
    "cost_usd",
    "request_bytes",
    "response_bytes",
    "request_body",
    "response_body",
    "response_truncated",
)


_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _text(value: str | None) -> str | None:
    """A text column's value every backend can store: a NUL (PostgreSQL refuses it) or a lone
    surrogate (not UTF-8) from a hostile request becomes U+FFFD, so the call is still stored."""
    if value is None or (value.isascii() and "\x00" not in value):
        return value
    return _UNSTORABLE.sub("\ufffd", value)


def _row(call: Call, request: str | None, response: str | None) -> tuple[Any, ...]:
    usage = call.usage
    return (
        _text(call.call_id),
        _text(call.trace_id),
        _text(call.run_id),
        _text(call.method),
        _text(call.path),
        _text(call.wire_api),
        _text(call.provider),
        int(call.streamed),
        _text(call.model_requested),
        _text(call.model_served),
        call.status,
        call.started_at,
        call.first_byte_ms,
        call.duration_ms,
        call.outcome,
        _text(call.reason),
        *(getattr(usage, name) for name in USAGE_FIGURES),
        None if call.usage_raw is None else orjson.dumps(call.usage_raw).decode(),
        None if call.cost_usd is None else str(call.cost_usd),
        call.request_bytes,
        call.response_bytes,
        request,
        response,
        int(call.response_truncated),
    )


def _blobs(call: Call) -> tuple[str | None, str | None, list[tuple[str, bytes]]]:
    blobs: list[tuple[str, bytes]] = []
    request = response = None
    if call.request_body is not None:
        skeleton, items = split_request(call.request_body)
        blobs += [(blob_hash(item), item) for item in items]
        request = blob_hash(skeleton)
        blobs.append((request, skeleton))
    if call.response_body is not None:
        response = blob_hash(call.response_body)
        blobs.append((response, call.response_body))
    return request, response, blobs


class SQLiteCaptureStore:
    """Captured calls in the state database (WAL; one transaction per batch)."""

    def __init__(self, db: StateDB | Path) -> None:
        self.db = db if isinstance(db, StateDB) else StateDB(Path(db))

    def add(self, calls: Sequence[Call]) -> None:
        rows, blobs = [], []
        for call in calls:
            request, response, found = _blobs(call)
            blobs += found
            rows.append(_row(call, request, response))
        marks = ", ".join("?" for _ in _COLUMNS)
        with self.db.transaction() as db:
            db.executemany(
                "INSERT OR IGNORE INTO gateway_blobs (hash, size, data) VALUES (?, ?, ?)",
                [(digest, len(data), data) for digest, data in blobs],
            )
            db.executemany(f"INSERT INTO gateway_calls ({', '.join(_COLUMNS)}) VALUES ({marks})", rows)

    def calls(self, *, run: str | None = None, trace: str | None = None) -> list[dict[str, Any]]:
        where: str = ""
        args: tuple[str, ...] = ()
        if run is not None:
            # A tackroom run sends its calls under /t/<run id>: its trace id is its run id.
            where, args = "WHERE run_id = ? OR (run_id IS NULL AND trace_id = ?)", (run, run)
        elif trace is not None:
            where, args = "WHERE trace_id = ?", (trace,)
        with self.db.connect() as db:
            db.row_factory = sqlite3.Row
            found = db.execute(f"SELECT {', '.join(_COLUMNS)} FROM gateway_calls {where} ORDER BY id", args)
            return [_public(dict(row)) for row in found]

    def usage(self, by: GroupBy) -> list[dict[str, Any]]:
        return summarize(self.calls(), by)

    def body(self, digest: str) -> bytes | None:
        with self.db.connect() as db:
            data = self._load(db, digest)
            if data is None:
                return None

            def load(item: str) -> bytes:
                found = self._load(db, item)
                if found is None:
                    raise KeyError(item)
                return found

            return join_request(data, load)

    @staticmethod
    def _load(db: sqlite3.Connection, digest: str) -> bytes | None:
        row = db.execute("SELECT data FROM gateway_blobs WHERE hash = ?", (digest,)).fetchone()
        return None if row is None else bytes(row[0])

    def blob_count(self) -> int:
        with self.db.connect() as db:
            return int(db.execute("SELECT count(*) FROM gateway_blobs").fetchone()[0])


@contextlib.contextmanager
def held_open(store: CaptureStore) -> Iterator[Callable[[], None]]:
    """For a writer that stores batch after batch: yields ``hold``, to call once a batch is stored.
    Its first call opens a connection to a SQLite store that stays open until the end: the last
    connection to close a WAL database copies the log into it, and each batch's own connection would
    otherwise be that last one. Only once a batch is stored: a gateway that stores nothing (one that
    cannot listen, say) creates no database file."""
    with contextlib.ExitStack() as held:
        holding = False

        def hold() -> None:
            nonlocal holding
            if not holding and isinstance(store, SQLiteCaptureStore):
                holding = True
                with contextlib.suppress(TackroomError, OSError):
                    held.enter_context(store.db.connect())

        yield hold


def _public(row: dict[str, Any]) -> dict[str, Any]:
    row["streamed"] = bool(row["streamed"])
    row["response_truncated"] = bool(row["response_truncated"])
    row["usage_raw"] = None if row["usage_raw"] is None else orjson.loads(row["usage_raw"])
    row["usage"] = {name: row.pop(name) for name in USAGE_FIGURES}
    return row


def summarize(calls: Iterable[dict[str, Any]], by: GroupBy) -> list[dict[str, Any]]:
    """Sum usage per group; a figure some calls did not report is counted in ``not_reported``
    (and is None when no call of the group reported it).

    ``cost_usd`` sums the priced calls (None when none is); ``unpriced_calls`` says how many
    calls' cost is unknown, so a partial sum is never mistaken for the whole.
    """
    groups: dict[str, dict[str, Any]] = {}
    for call in calls:
        key = _group_key(call, by)
        group = groups.setdefault(key, _empty_group(by, key))
        group["calls"] += 1
        group["incomplete"] += call["outcome"] != "complete"
        for name in USAGE_FIGURES:
            value = call["usage"][name]
            if value is None:
                group["not_reported"][name] += 1
            else:
                group["usage"][name] += value
        if call["cost_usd"] is None:
            group["unpriced_calls"] += 1
        else:
            group["cost_usd"] = str(Decimal(group["cost_usd"] or 0) + Decimal(call["cost_usd"]))
    for group in groups.values():
        for name in USAGE_FIGURES:
            if group["not_reported"][name] == group["calls"]:
                group["usage"][name] = None  # no call reported it: unknown, not 0
    return [groups[key] for key in sorted(groups)]


def _empty_group(by: GroupBy, key: str) -> dict[str, Any]:
    return {
        by: key,
        "calls": 0,
        "incomplete": 0,
        "usage": dict.fromkeys(USAGE_FIGURES, 0),
        "not_reported": dict.fromkeys(USAGE_FIGURES, 0),
        "cost_usd": None,
        "unpriced_calls": 0,
    }


def _group_key(call: dict[str, Any], by: GroupBy) -> str:
    if by == "run":
        return str(call["run_id"] or call["trace_id"] or "-")
    if by == "model":
        return str(call["model_served"] or call["model_requested"] or "-")
    return dt.datetime.fromtimestamp(call["started_at"], dt.UTC).date().isoformat()


def chunks(items: Sequence[Call], size: int) -> Iterator[Sequence[Call]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
