"""The capture store's contract, the same suite on both backends: SQLite and a real PostgreSQL server.

Every test takes ``backend`` (tests/pgkit.py): a fresh SQLite file, or a fresh
database on the session's own PostgreSQL server; it opens the store the way
``--db`` does (:func:`open_store`).
"""

from __future__ import annotations

import json
import random
import sqlite3
import threading
from decimal import Decimal
from typing import Any

import pytest
from tests.pgkit import PostgresServer, backend, postgres_server  # noqa: F401  (fixtures)

from tackroom.errors import GatewayError, TackroomError
from tackroom.gateway.capture import USAGE_FIGURES, CallUsage
from tackroom.gateway.store import _COLUMNS, Call, CaptureStore
from tackroom.gateway.stores import open_store

HISTORY = [{"role": "user", "content": "x" * 3000}]


def call(n: int, **fields: Any) -> Call:
    made = Call(
        call_id=f"call-{n}",
        method="POST",
        path="/v1/messages",
        started_at=1_764_547_200.0 + n * 3600.0,  # 2025-12-01, an hour apart
        duration_ms=12.5 + n,
        trace_id="tr-1",
        wire_api="anthropic-messages",
        provider="anthropic",
        model_requested="claude-sonnet-4-5",
        model_served="claude-sonnet-4-5",
        status=200,
        first_byte_ms=3.25,
        usage=CallUsage(input_uncached=100, cache_read=20, cache_write=3, output=7, reasoning=None),
        usage_raw={"input_tokens": 100, "output_tokens": 7},
        cost_usd=Decimal("0.000123"),
        request_body=json.dumps({"model": "claude-sonnet-4-5", "messages": HISTORY}).encode(),
        response_body=b'{"id": "msg_1", "content": []}',
        request_bytes=3100,
        response_bytes=31,
    )
    for name, value in fields.items():
        setattr(made, name, value)
    return made


def sql(db: str, query: str) -> list[tuple[Any, ...]]:
    """Rows of ``query`` read straight from the backend (not through the store)."""
    if db.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(db) as conn:
            return [tuple(row) for row in conn.execute(query).fetchall()]
    with sqlite3.connect(db) as conn:
        return conn.execute(query).fetchall()


def sql_commit(db: str, statement: str) -> None:
    import psycopg

    with psycopg.connect(db, autocommit=True) as conn:
        conn.execute(statement)


def blobs(store: CaptureStore) -> int:
    count = getattr(store, "blob_count", None)
    assert count is not None
    return int(count())


def test_a_call_reads_back_as_stored(backend: str) -> None:  # noqa: F811
    store = open_store(backend)
    store.add([call(1), call(2, reason="upstream reset", status=None, run_id="run-9", streamed=True)])
    first, second = store.calls()
    assert first == {
        "call_id": "call-1",
        "trace_id": "tr-1",
        "run_id": None,
        "method": "POST",
        "path": "/v1/messages",
        "wire_api": "anthropic-messages",
        "provider": "anthropic",
        "streamed": False,
        "model_requested": "claude-sonnet-4-5",
        "model_served": "claude-sonnet-4-5",
        "status": 200,
        "started_at": 1_764_550_800.0,
        "first_byte_ms": 3.25,
        "duration_ms": 13.5,
        "outcome": "complete",
        "reason": None,
        "usage": {"input_uncached": 100, "cache_read": 20, "cache_write": 3, "output": 7, "reasoning": None},
        "usage_raw": {"input_tokens": 100, "output_tokens": 7},
        "cost_usd": "0.000123",
        "request_bytes": 3100,
        "response_bytes": 31,
        "request_body": first["request_body"],
        "response_body": first["response_body"],
        "response_truncated": False,
    }
    assert (second["outcome"], second["reason"], second["status"], second["streamed"]) == (
        "incomplete",
        "upstream reset",
        None,
        True,
    )
    assert store.body(first["response_body"]) == b'{"id": "msg_1", "content": []}'
    assert json.loads(store.body(first["request_body"]) or b"")["messages"] == HISTORY
    assert store.body("0" * 64) is None


def test_calls_are_found_by_run_and_by_trace(backend: str) -> None:  # noqa: F811
    store = open_store(backend)
    store.add([call(1, trace_id="run-a"), call(2, trace_id="tr-b", run_id="run-a"), call(3, trace_id="tr-b")])
    assert [c["call_id"] for c in store.calls(run="run-a")] == ["call-1", "call-2"]
    assert [c["call_id"] for c in store.calls(trace="tr-b")] == ["call-2", "call-3"]
    assert store.calls(run="nothing") == []


def test_repeated_history_is_stored_once(backend: str) -> None:  # noqa: F811
    store = open_store(backend)
    history: list[dict[str, Any]] = list(HISTORY)
    store.add([call(0, request_body=json.dumps({"model": "m", "messages": history}).encode())])
    before = blobs(store)
    bodies = []
    for turn in range(1, 5):
        history = [
            *history,
            {"role": "assistant", "content": f"a{turn}"},
            {"role": "user", "content": f"u{turn}"},
        ]
        bodies.append(json.dumps({"model": "m", "messages": history}).encode())
    # One batch, sharing blobs within it as well as with what is stored.
    store.add([call(n, request_body=body) for n, body in enumerate(bodies, 1)])
    # Each call adds its skeleton and its two new messages; the answer is the same each time.
    assert blobs(store) - before == 4 * 3
    last = store.calls()[-1]
    assert json.loads(store.body(last["request_body"]) or b"") == {"model": "m", "messages": history}


def test_usage_sums_by_run_model_and_day(backend: str) -> None:  # noqa: F811
    store = open_store(backend)
    store.add(
        [
            call(1, run_id="r1"),
            call(2, run_id="r1", cost_usd=None, model_served="mystery"),
            call(30, run_id="r2", usage=CallUsage(input_uncached=5, output=None), cost_usd=Decimal("1.5")),
        ]
    )
    by_run = {g["run"]: g for g in store.usage("run")}
    assert by_run["r1"]["calls"] == 2 and by_run["r1"]["usage"]["input_uncached"] == 200
    assert (by_run["r1"]["cost_usd"], by_run["r1"]["unpriced_calls"]) == ("0.000123", 1)
    assert by_run["r2"]["usage"]["output"] is None and by_run["r2"]["not_reported"]["output"] == 1
    assert [g["model"] for g in store.usage("model")] == ["claude-sonnet-4-5", "mystery"]
    assert [(g["day"], g["calls"]) for g in store.usage("day")] == [("2025-12-01", 2), ("2025-12-02", 1)]


def test_big_figures_and_unstorable_text_are_kept(backend: str) -> None:  # noqa: F811
    store = open_store(backend)
    big = CallUsage(input_uncached=3_000_000_000, cache_read=0, cache_write=0, output=2**40, reasoning=0)
    store.add([call(1, usage=big, model_requested="evil\x00model\ud800", path="/v1/messages\x00")])
    [found] = store.calls()
    assert found["usage"]["input_uncached"] == 3_000_000_000 and found["usage"]["output"] == 2**40
    assert found["model_requested"] == "evil\ufffdmodel\ufffd" and found["path"] == "/v1/messages\ufffd"


def test_a_batch_is_stored_whole_or_not_at_all(backend: str) -> None:  # noqa: F811
    store = open_store(backend)
    store.add([call(1)])
    with pytest.raises(TackroomError):
        store.add([call(2), call(3), call(1)])  # call-1 again: the batch is refused
    assert [c["call_id"] for c in store.calls()] == ["call-1"]
    store.add([call(2)])  # and the store still works
    assert len(store.calls()) == 2


def test_the_schema_is_the_same_and_migrated_once(backend: str) -> None:  # noqa: F811
    # Gateways on several hosts opening one new database at once.
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            open_store(backend).calls()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    assert sql(backend, "SELECT name FROM _tackroom_migrations WHERE name = 'm005_gateway'") == [
        ("m005_gateway",)
    ]
    if backend.startswith("postgresql://"):
        names = sql(
            backend,
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_name = 'gateway_calls' ORDER BY ordinal_position",
        )
        blob_names = sql(
            backend,
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_name = 'gateway_blobs' ORDER BY ordinal_position",
        )
    else:
        names = [(row[1],) for row in sql(backend, "PRAGMA table_info(gateway_calls)")]
        blob_names = [(row[1],) for row in sql(backend, "PRAGMA table_info(gateway_blobs)")]
    assert [n for (n,) in names] == ["id", *_COLUMNS[:16], *USAGE_FIGURES, *_COLUMNS[21:]]
    assert [n for (n,) in blob_names] == ["hash", "size", "data"]


def test_hosts_writing_the_same_history_at_once_lose_nothing(backend: str) -> None:  # noqa: F811
    # Four gateways on one database store batches whose conversations share items, each in its own
    # order: no batch may fail (a deadlock, a duplicate blob), and each item is stored once.
    items = [{"role": "user", "content": f"shared item {n} " + "y" * 500} for n in range(40)]
    errors: list[BaseException] = []

    def host(h: int) -> None:
        store = open_store(backend)
        rng = random.Random(h)
        try:
            for b in range(10):
                batch = []
                for n in range(20):
                    chosen = rng.sample(items, 10)
                    body = json.dumps({"model": "m", "messages": chosen}).encode()
                    batch.append(call(n, call_id=f"h{h}-b{b}-c{n}", request_body=body))
                store.add(batch)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=host, args=(h,)) for h in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert errors == []
    store = open_store(backend)
    assert len(store.calls()) == 4 * 10 * 20
    shared = sql(backend, "SELECT count(*) FROM gateway_blobs WHERE size BETWEEN 500 AND 600")
    assert shared == [(40,)]


def test_a_newer_tackroom_s_database_is_refused(backend: str) -> None:  # noqa: F811
    open_store(backend).add([call(1)])
    if backend.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(backend) as db:
            db.execute("INSERT INTO _tackroom_migrations VALUES ('m999_future', '2030-01-01')")
    else:
        with sqlite3.connect(backend) as db:
            db.execute("INSERT INTO _tackroom_migrations VALUES ('m999_future', '2030-01-01')")
    with pytest.raises(TackroomError, match=r"newer tackroom.*m999_future"):
        open_store(backend).calls()


def test_the_checks_hold_on_both(backend: str) -> None:  # noqa: F811
    store = open_store(backend)
    with pytest.raises(TackroomError):
        store.add([call(1, usage_raw=None, reason=None, status=None), _lying(call(2))])
    assert store.calls() == []


def _lying(made: Call) -> Call:
    """A call whose outcome says complete while it has a reason: the schema's CHECK refuses it."""

    class Lying(Call):
        @property
        def outcome(self) -> str:
            return "complete"

    made.__class__ = Lying
    made.reason = "cut"
    return made


# --- PostgreSQL only: URLs and errors --------------------------------------------------------------


KILL_OTHERS = (
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
    "WHERE datname = current_database() AND pid <> pg_backend_pid()"
)


def test_a_lost_connection_loses_no_batch(postgres_server: PostgresServer) -> None:  # noqa: F811
    url = postgres_server.new_database()
    store = open_store(url)
    store.add([call(1)])
    # The server ends every connection to the database (as at a restart); the next batch still lands.
    killed = sql(url, KILL_OTHERS)
    assert killed == [(True,)]
    store.add([call(2)])
    assert [c["call_id"] for c in store.calls()] == ["call-1", "call-2"]
    # A link lost after a commit, before its answer: the batch written again stores each call once.
    sql(url, KILL_OTHERS)
    store.add([call(2), call(3)])
    assert [c["call_id"] for c in store.calls()] == ["call-1", "call-2", "call-3"]
    postgres_server.drop_database(url)


def test_a_database_with_other_tables_of_the_same_name_is_refused(
    postgres_server: PostgresServer,  # noqa: F811
) -> None:
    url = postgres_server.new_database()
    sql_commit(url, "CREATE TABLE gateway_calls (something TEXT)")
    with pytest.raises(GatewayError, match="already exists") as caught:
        open_store(url)
    assert str(caught.value).startswith(url.split("?")[0])
    postgres_server.drop_database(url)


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("postgresql://bob:s3cret@db.example:5432/cap", "postgresql://bob:***@db.example:5432/cap"),
        (
            "postgresql://bob:a%40b@db.example/cap?sslmode=require",
            "postgresql://bob:***@db.example/cap?sslmode=require",
        ),
        (
            "postgres://bob@db.example/cap?password=s3cret&port=5",
            "postgres://bob@db.example/cap?password=<redacted>&port=5",
        ),
        ("postgresql:///cap?host=/run/pg", "postgresql:///cap?host=/run/pg"),
        ("postgresql://bob:s3c@ret@[::1]:5/cap", "postgresql://bob:***@[::1]:5/cap"),
    ],
)
def test_a_url_is_shown_without_its_password(url: str, said: str) -> None:
    from tackroom.gateway.pgstore import shown

    assert shown(url) == said


def test_an_unreachable_server_is_a_clear_error_without_the_password() -> None:
    from tests.gatewaykit import free_port

    url = f"postgresql://capture:hunter2-PGSECRET@127.0.0.1:{free_port()}/gateway"
    with pytest.raises(GatewayError) as caught:
        open_store(url)
    said = str(caught.value)
    assert "PGSECRET" not in said
    assert f"postgresql://capture:***@127.0.0.1:{url.split(':')[3].split('/')[0]}/gateway" in said
    assert "cannot reach the PostgreSQL server" in said


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://capture:PGSECRET@db.example:notaport/gateway",
        "postgresql://capture:PGSECRET@db.example/gateway#part",
        "postgresql://capture:PGSECRET@db.example/gateway?bogus_option=1",
    ],
)
def test_a_malformed_url_is_a_clear_error_without_the_password(url: str) -> None:
    with pytest.raises(GatewayError) as caught:
        open_store(url)
    said = str(caught.value)
    assert "PGSECRET" not in said and "capture:***@" in said
    assert "PostgreSQL URL" in said
