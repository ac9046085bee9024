"""Captures through a real gateway over real sockets, on both capture backends (SQLite, PostgreSQL).

The official SDKs call the gateway, the gateway calls tackroom's mock, and
the calls land in the store ``--db`` names; then nothing secret may be found
anywhere in that database (the SQLite files' bytes, or a pg_dump of all of it).
"""

from __future__ import annotations

import asyncio
import json
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from tests.clikit import run_cli
from tests.gatewaykit import (
    FakeUpstream,
    _close_clients,  # noqa: F401  (the fixture closes SDK clients)
    claude,
    gpt,
)
from tests.pgkit import PostgresServer, backend, postgres_server  # noqa: F401  (fixtures)

from tackroom.gateway import Gateway
from tackroom.mock import MockServer, Script, Turn, Usage

ANTHROPIC_KEY = "sk-ant-test-PGSTORESECRET-0001"
OPENAI_KEY = "sk-test-PGSTORESECRET-0002"
INJECTED = "sk-ant-INJECTED-PGSTORESECRET-0003"
USAGE = Usage(input=1000, output=50, cache_read=200, cache_write=30, reasoning=10)
HI = [{"role": "user", "content": "hi"}]


@pytest.fixture
def mock() -> Iterator[MockServer]:
    with MockServer(Script([Turn.reply("hello from the mock", usage=USAGE)] * 20)) as server:
        yield server


def everything(db: str, request: pytest.FixtureRequest, tmp_path: Path) -> bytes:
    """All the database holds, as bytes: the SQLite files, or a pg_dump of the whole database."""
    if db.startswith("postgresql://"):
        server: PostgresServer = request.getfixturevalue("postgres_server")
        return server.dump(db).encode()
    return b"".join(path.read_bytes() for path in sorted(tmp_path.glob("capture.db*")))


@pytest.mark.parametrize("stream", [False, True])
def test_sdk_calls_are_captured_and_no_key_is_stored(
    backend: str,  # noqa: F811
    mock: MockServer,
    stream: bool,
    request: pytest.FixtureRequest,
    tmp_path: Path,
) -> None:
    with Gateway(upstream=mock.base_url, db=backend) as gw:
        client = claude(base_url=gw.trace_url("tr-a"), api_key=ANTHROPIC_KEY, max_retries=0)
        messages = [{"role": "user", "content": f"my key is {ANTHROPIC_KEY}"}]
        if stream:
            with client.messages.stream(
                model="claude-sonnet-4-5", max_tokens=20, messages=messages
            ) as answer:
                text = answer.get_final_message().content[0].text  # type: ignore[union-attr]
        else:
            message = client.messages.create(model="claude-sonnet-4-5", max_tokens=20, messages=messages)
            text = message.content[0].text  # type: ignore[union-attr]
        assert text == "hello from the mock"
        oai = gpt(base_url=gw.trace_url("tr-o") + "/v1", api_key=OPENAI_KEY, max_retries=0)
        oai.chat.completions.create(model="gpt-4o", messages=HI, extra_body={"api_key": OPENAI_KEY})
        gw.flush()
        [anthropic_call] = gw.store.calls(trace="tr-a")
        [openai_call] = gw.store.calls(trace="tr-o")
        assert gw.failures == []
    assert (anthropic_call["outcome"], anthropic_call["streamed"], anthropic_call["status"]) == (
        "complete",
        stream,
        200,
    )
    assert anthropic_call["usage"] == {
        "input_uncached": 1000,
        "cache_read": 200,
        "cache_write": 30,
        "output": 50,
        "reasoning": None,
    }
    assert Decimal(anthropic_call["cost_usd"]) > 0
    assert openai_call["usage"]["input_uncached"] == 800 and openai_call["usage"]["cache_read"] == 200
    with Gateway(upstream=mock.base_url, db=backend, keys={"anthropic": INJECTED}) as gw:
        client = claude(base_url=gw.trace_url("tr-i"), api_key="placeholder", max_retries=0)
        client.messages.create(model="m", max_tokens=5, messages=HI)
        gw.flush()
        assert len(gw.store.calls()) == 3
    assert mock.requests[-1].headers.get("x-api-key") not in (None, "placeholder")  # the injected one went
    stored = everything(backend, request, tmp_path)
    assert b"tr-a" in stored  # the dump does hold the calls
    for secret in (ANTHROPIC_KEY, OPENAI_KEY, INJECTED, "PGSTORESECRET"):
        assert secret.encode() not in stored, secret


def test_repeated_history_through_the_gateway_is_stored_once(backend: str, mock: MockServer) -> None:  # noqa: F811
    with Gateway(upstream=mock.base_url, db=backend) as gw:
        store: Any = gw.store
        history: list[dict[str, Any]] = [{"role": "user", "content": "x" * 5000}]
        client = claude(base_url=gw.trace_url("tr-d"), api_key=ANTHROPIC_KEY, max_retries=0)
        client.messages.create(model="m", max_tokens=5, messages=history)
        gw.flush()
        before = store.blob_count()
        for turn in range(4):
            history += [
                {"role": "assistant", "content": f"answer {turn}"},
                {"role": "user", "content": f"more {turn}"},
            ]
            client.messages.create(model="m", max_tokens=5, messages=history)
        gw.flush()
        found = store.calls(trace="tr-d")
        assert store.blob_count() - before == 4 * 4  # skeleton, answer, two new messages: never the 5 kB
        assert json.loads(store.body(found[-1]["request_body"]))["messages"] == history


def test_the_cli_serves_lists_and_sums_on_each_backend(backend: str, mock: MockServer) -> None:  # noqa: F811
    process = subprocess.Popen(
        [sys.executable, "-m", "tackroom", "gateway", "serve", "--upstream", mock.base_url, "--db", backend],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), process.stderr.read() if process.stderr else url
        client = claude(base_url=f"{url}/t/run-one", api_key=ANTHROPIC_KEY, max_retries=0)
        for _ in range(2):
            client.messages.create(model="claude-sonnet-4-5", max_tokens=5, messages=HI)
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    listed = run_cli("gateway", "calls", "--db", backend, "--run", "run-one", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [(c["trace_id"], c["outcome"], c["usage"]["output"]) for c in json.loads(listed.stdout)] == [
        ("run-one", "complete", 50)
    ] * 2
    summed = run_cli("gateway", "usage", "--db", backend, "--by", "model", "--json")
    assert summed.returncode == 0, summed.stderr
    [group] = json.loads(summed.stdout)
    assert (group["model"], group["calls"], group["usage"]["input_uncached"]) == (
        "claude-sonnet-4-5",
        2,
        2000,
    )


@pytest.mark.parametrize("command", ["calls", "usage", "serve"])
def test_the_cli_says_which_server_it_cannot_reach(command: str) -> None:
    from tests.gatewaykit import free_port

    url = f"postgresql://capture:PGSTORESECRET@127.0.0.1:{free_port()}/gateway"
    started = time.monotonic()
    done = run_cli("gateway", command, "--db", url)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and "PGSTORESECRET" not in done.stderr + done.stdout
    # The URL is named (the CLI's edge hides its whole user part, the store's message the password).
    assert "postgresql://<redacted>@127.0.0.1:" in done.stderr and "cannot reach" in done.stderr
    assert time.monotonic() - started < 60


# --- load with faults ------------------------------------------------------------------------------

LOAD = 1_000
FAULTS = ("reset", "slow", "malformed", "429", "500")


async def _load(url: str, plan: list[str]) -> int:
    answered = 0
    queue = list(enumerate(plan))
    async with aiohttp.ClientSession(
        timeout=aiohttp.ClientTimeout(total=30), connector=aiohttp.TCPConnector(limit=50)
    ) as http:

        async def worker() -> None:
            nonlocal answered
            while queue:
                n, fault = queue.pop()
                streamed = fault in ("reset", "malformed") or n % 2 == 0
                body = {"model": "claude-sonnet-4-5", "max_tokens": 5, "messages": HI, "stream": streamed}
                headers = {"x-fault": fault, "x-delay": "0.02", "x-api-key": ANTHROPIC_KEY}
                try:
                    async with http.post(
                        f"{url}/t/load-{n}/v1/messages", json=body, headers=headers
                    ) as answer:
                        await answer.read()
                except aiohttp.ClientError:
                    pass
                answered += 1

        await asyncio.gather(*(worker() for _ in range(50)))
    return answered


def test_a_thousand_calls_with_faults_one_row_each(
    backend: str,  # noqa: F811
    request: pytest.FixtureRequest,
    tmp_path: Path,
) -> None:
    plan = [fault for fault in FAULTS for _ in range(LOAD // 20)]
    plan += ["ok"] * (LOAD - len(plan))
    random.Random(7).shuffle(plan)
    with FakeUpstream() as upstream, Gateway(upstream=upstream.base_url, db=backend, read_timeout_s=5) as gw:
        assert asyncio.run(_load(gw.url, plan)) == LOAD
        gw.flush()
        calls = gw.store.calls()
        assert gw.failures == []
    assert len(calls) == len({c["trace_id"] for c in calls}) == LOAD  # exactly one row per request
    outcomes = Counter((plan[int(c["trace_id"][5:])], c["outcome"]) for c in calls)
    assert outcomes[("reset", "incomplete")] == outcomes[("malformed", "incomplete")] == LOAD // 20
    assert outcomes[("ok", "complete")] == LOAD - 5 * LOAD // 20
    assert ANTHROPIC_KEY.encode() not in everything(backend, request, tmp_path)
