"""The capture writer in its own process (``gateway serve``): same rows, flush and stop, and no orphan."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.gatewaykit import (
    _close_clients,  # noqa: F401  (the fixture closes SDK clients)
    claude,
)

from tackroom.errors import GatewayError
from tackroom.gateway import Gateway
from tackroom.mock import MockServer, Script, Turn, Usage
from tackroom.prices import PriceBook

USAGE = Usage(input=1000, output=50, cache_read=200, cache_write=30)
KEY = "sk-ant-PROCWRITER-0001"


def _ask(gw: Gateway, trace: str, stream: bool) -> None:
    client = claude(base_url=gw.trace_url(trace), api_key=KEY, max_retries=0)
    messages = [{"role": "user", "content": "x"}]
    if stream:
        with client.messages.stream(model="claude-sonnet-4-5", max_tokens=5, messages=messages) as events:
            events.get_final_message()
    else:
        client.messages.create(model="claude-sonnet-4-5", max_tokens=5, messages=messages)


def test_a_writer_process_stores_what_the_thread_would(tmp_path: Path) -> None:
    rows = {}
    for writer in ("thread", "process"):
        with (
            MockServer(Script([Turn.reply("hi", usage=USAGE)] * 4)) as mock,
            Gateway(mock.base_url, db=tmp_path / f"{writer}.db", writer=writer) as gw,
        ):
            for stream in (False, True, False, True):
                _ask(gw, "run-a", stream)
            gw.flush()
            assert len(gw.store.calls(run="run-a")) == 4  # flushed: stored before the gateway stops
            assert not gw.failures
        rows[writer] = gw.store.calls(run="run-a")
    ignored = {"id", "call_id", "started_at", "duration_ms", "first_byte_ms"}
    thread, process = ([{k: v for k, v in row.items() if k not in ignored} for row in rows[w]] for w in rows)
    assert process == thread
    assert all(row["usage"]["output"] == 50 and row["outcome"] == "complete" for row in rows["process"])
    assert KEY.encode() not in (tmp_path / "process.db").read_bytes()


def test_a_dead_writer_process_is_reported_not_waited_for(tmp_path: Path) -> None:
    with (
        MockServer(Script([Turn.reply("hi")] * 2)) as mock,
        Gateway(mock.base_url, db=tmp_path / "c.db", writer="process") as gw,
    ):
        process = gw._writer._process  # type: ignore[attr-defined]
        process.kill()
        process.join(10)
        _ask(gw, "run-b", False)  # the client still gets its answer
        started = time.monotonic()
        gw.flush()
        assert time.monotonic() - started < 10
        assert any("writer process ended" in failure for failure in gw.failures)


def test_a_writer_process_outlives_no_gateway(tmp_path: Path) -> None:
    """A gateway process killed outright leaves no writer process behind."""
    code = (
        "import os, sys\n"
        "from tackroom.gateway import Gateway\n"
        f"gw = Gateway('http://127.0.0.1:9', db={str(tmp_path / 'c.db')!r}, writer='process').start()\n"
        "print(gw._writer._process.pid, flush=True)\n"
        "os._exit(9)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    child = int(done.stdout.strip())
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and _alive(child):
        time.sleep(0.1)
    assert not _alive(child), "the writer process outlived its gateway"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_writer_process_needs_a_path_or_url(tmp_path: Path) -> None:
    with pytest.raises(GatewayError, match="path or URL"):
        Gateway("http://127.0.0.1:9", db=tmp_path / "c.db", prices=PriceBook.default(), writer="process")


def test_calls_put_from_a_loop_are_stored_whatever_comes_first(tmp_path: Path) -> None:
    """Calls put in one turn of an event loop go to the child together; a flush or a stop in that same
    turn, before they are sent, loses none, and the order holds."""
    from tackroom.gateway.procwriter import ProcessWriter
    from tackroom.gateway.store import Call
    from tackroom.gateway.stores import open_store

    def calls(first: int, count: int) -> list[Call]:
        return [
            Call(call_id=f"c-{n}", method="POST", path="/", started_at=1.0, duration_ms=1.0, trace_id="t")
            for n in range(first, first + count)
        ]

    db = tmp_path / "c.db"
    writer = ProcessWriter(str(db), open_store(db))
    writer.start()

    async def put(batch: list[Call], then: Callable[[], None] | None = None) -> None:
        for call in batch:
            writer.put(call)
        if then is None:
            await asyncio.sleep(0.05)  # sent by the loop in its next turn
        else:
            then()  # in the same turn: what the outbox holds must go first

    asyncio.run(put(calls(0, 50)))
    asyncio.run(put(calls(50, 50), writer.flush))
    assert [row["call_id"] for row in writer.store.calls(trace="t")] == [f"c-{n}" for n in range(100)]
    asyncio.run(put(calls(100, 7), writer.stop))
    assert len(open_store(db).calls(trace="t")) == 107
    assert not writer.failures
