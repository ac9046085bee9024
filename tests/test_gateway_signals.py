"""``tackroom gateway serve`` stopped by a signal to its whole process group, as a terminal (Ctrl-C),
``timeout`` or systemd sends it: under load, it stops in time, stores every call it answered (or names
the ones it could not), and leaves no process behind."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import aiohttp
import pytest

from tackroom.gateway.stores import open_store
from tackroom.mock import MockServer, Script, Turn

PROMPT = "x" * 20_000
"""A prompt large enough that a few dozen queued calls fill a pipe (the hang this guards against)."""
BODY = {"model": "claude-sonnet-4-5", "max_tokens": 5, "messages": [{"role": "user", "content": PROMPT}]}
HEADERS = {"x-api-key": "sk-ant-SIGNALS-0001", "anthropic-version": "2023-06-01"}
HANG_GUARD_S = 30.0


class Served:
    """One ``tackroom gateway serve`` process, leader of its own process group."""

    def __init__(self, upstream: str, db: Path, *extra: str) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tackroom",
                "gateway",
                "serve",
                "--upstream",
                upstream,
                "--db",
                str(db),
                *extra,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        assert self.process.stdout is not None
        self.url = self.process.stdout.readline().strip()
        assert self.url.startswith("http://127.0.0.1:"), self.url
        self.signalled = 0.0
        self.stderr = ""

    def signal_group(self, number: int) -> None:
        self.signalled = time.monotonic()
        os.killpg(self.process.pid, number)

    def wait(self) -> float:
        """The seconds from the signal to the gateway's exit (its stderr kept)."""
        _, self.stderr = self.process.communicate(timeout=HANG_GUARD_S)
        return time.monotonic() - self.signalled

    def group(self) -> list[int]:
        """The processes still in the gateway's group (zombies aside)."""
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                with contextlib.suppress(OSError, IndexError):
                    fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                    if fields[0] != "Z" and int(fields[2]) == self.process.pid:
                        found.append(int(entry.name))
        return found

    def writer_pid(self) -> int:
        """The capture writer process (the gateway's other child is multiprocessing's resource tracker)."""
        for pid in self.group():
            with contextlib.suppress(OSError):
                command = Path(f"/proc/{pid}/cmdline").read_bytes()
                if pid != self.process.pid and b"spawn_main" in command:
                    return pid
        raise AssertionError("no capture writer process")

    def close(self) -> None:
        """Nothing of the gateway outlives its test."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.communicate(timeout=HANG_GUARD_S)
        deadline = time.monotonic() + 10
        while self.group() and time.monotonic() < deadline:
            time.sleep(0.05)
        for pid in self.group():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Callable[..., Served]]:
    started: list[Served] = []
    mock = MockServer(Script([Turn.reply("hi")])).start()

    def start(*extra: str) -> Served:
        started.append(Served(mock.base_url, tmp_path / "capture.db", *extra))
        return started[-1]

    try:
        yield start
    finally:
        for one in started:
            one.close()
        mock.stop()


async def _load(
    url: str,
    clients: int,
    answered: list[str],
    then: Callable[[int], None],
    traced: Callable[[int, int], str] = lambda number, call: f"c{number}-{call}",
) -> None:
    """``clients`` clients calling in a loop until the gateway stops answering; each call's trace (by
    default one of its own) is put in ``answered`` once its whole answer is read; ``then(count)`` after."""
    timeout = aiohttp.ClientTimeout(total=HANG_GUARD_S)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0), timeout=timeout) as session:

        async def client(number: int) -> None:
            for call in range(10_000):
                trace = traced(number, call)
                try:
                    async with session.post(
                        f"{url}/t/{trace}/v1/messages", json=BODY, headers=HEADERS
                    ) as answer:
                        await answer.read()
                        if answer.status != 200:
                            return
                except (aiohttp.ClientError, TimeoutError):
                    return
                answered.append(trace)
                then(len(answered))

        await asyncio.gather(*(client(number) for number in range(clients)))


def _load_then_signal(gateway: Served, number: int, after: int, clients: int = 64) -> list[str]:
    """Load the gateway, send ``number`` to its group once ``after`` calls are answered; the traces
    of every call answered (whole, 200)."""
    answered: list[str] = []

    def then(count: int) -> None:
        if count == after:
            gateway.signal_group(number)

    asyncio.run(_load(gateway.url, clients, answered, then))
    assert len(answered) >= after
    return answered


def _stored(db: Path) -> dict[str, str]:
    return {call["trace_id"]: call["outcome"] for call in open_store(db).calls()}


@pytest.mark.parametrize(
    ("number", "engine"),
    [
        (signal.SIGINT, "raw"),
        (signal.SIGTERM, "raw"),
        (signal.SIGHUP, "raw"),
        (signal.SIGTERM, "aiohttp"),
    ],
    ids=["sigint", "sigterm", "sighup", "sigterm-aiohttp"],
)
def test_a_signal_to_the_group_stops_serve_with_every_answered_call_stored(
    served: Callable[..., Served], tmp_path: Path, number: int, engine: str
) -> None:
    gateway = served("--engine", engine)
    answered = _load_then_signal(gateway, number, after=300)
    gateway.wait()  # (bounded by the hang guard; the timing test holds it to seconds)
    assert gateway.process.returncode == 0, gateway.stderr
    assert "Traceback" not in gateway.stderr and "warning" not in gateway.stderr, gateway.stderr
    stored = _stored(tmp_path / "capture.db")
    missing = [trace for trace in answered if trace not in stored]
    assert not missing, f"{len(missing)} of {len(answered)} answered calls not stored"
    assert all(stored[trace] == "complete" for trace in answered)
    deadline = time.monotonic() + 10
    while gateway.group() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not gateway.group(), "a process of the gateway outlived it"


@pytest.mark.timing
@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM], ids=["sigint", "sigterm"])
def test_a_signal_to_the_group_stops_serve_within_five_seconds(
    served: Callable[..., Served], number: int
) -> None:
    gateway = served()
    _load_then_signal(gateway, number, after=300)
    assert gateway.wait() < 5.0
    assert gateway.process.returncode == 0, gateway.stderr


def test_a_writer_process_killed_under_load_is_named_and_not_waited_for(
    served: Callable[..., Served], tmp_path: Path
) -> None:
    """A writer killed alone (the OOM killer, a stray kill): serve still stops, and says on stderr
    which calls it could not store, trace by trace."""
    gateway = served()
    clients = 8
    writer = gateway.writer_pid()
    answered: list[str] = []

    def then(count: int) -> None:
        if count == 100:
            os.kill(writer, signal.SIGKILL)
        elif count == 1500:  # dozens of calls queued for a writer that is gone: more than a pipe holds
            gateway.signal_group(signal.SIGTERM)

    asyncio.run(_load(gateway.url, clients, answered, then, traced=lambda number, call: f"run-{number}"))
    gateway.wait()
    assert gateway.process.returncode == 0, gateway.stderr
    assert "writer process ended" in gateway.stderr, gateway.stderr
    named = Counter(
        {trace: int(count) for count, trace in re.findall(r"(\d+) of trace ([\w-]+)", gateway.stderr)}
    )
    stored = Counter(call["trace_id"] for call in open_store(tmp_path / "capture.db").calls())
    missing = Counter(answered) - stored
    assert missing, "the writer was killed, yet every call is stored"
    # Every answered call that is not stored is counted in its trace's line.
    assert not missing - named, gateway.stderr[-3000:]
