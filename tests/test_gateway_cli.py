"""``tackroom gateway serve | calls | usage`` as a user runs them: real processes, real clients."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from decimal import Decimal
from pathlib import Path

import pytest
from tests.clikit import run_cli
from tests.gatewaykit import (
    _close_clients,  # noqa: F401  (the fixture closes SDK clients)
    claude,
    gpt,
)

from tackroom.mock import MockServer, Script, Turn, Usage

USAGE = Usage(input=1000, output=50, cache_read=200, cache_write=30, reasoning=10)


def serve(*args: str) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "tackroom", "gateway", "serve", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    assert url.startswith("http://127.0.0.1:"), process.stderr.read() if process.stderr else url
    return process, url


def test_serve_then_list_calls_and_usage(tmp_path: Path) -> None:
    db = tmp_path / "capture.db"
    with MockServer(Script([Turn.reply("hi", usage=USAGE)] * 3)) as mock:
        process, url = serve("--upstream", mock.base_url, "--db", str(db))
        try:
            anthropic_client = claude(base_url=f"{url}/t/run-one", api_key="sk-ant-CLI-000001", max_retries=0)
            anthropic_client.messages.create(
                model="claude-sonnet-4-5", max_tokens=5, messages=[{"role": "user", "content": "x"}]
            )
            openai_client = gpt(base_url=f"{url}/t/run-two/v1", api_key="sk-CLI-000002", max_retries=0)
            openai_client.chat.completions.create(
                model="mystery-model", messages=[{"role": "user", "content": "x"}]
            )
        finally:
            process.send_signal(signal.SIGTERM)
            _, err = process.communicate(timeout=30)
        assert process.returncode == 0, err
    listed = run_cli("gateway", "calls", "--db", str(db), "--json")
    assert listed.returncode == 0, listed.stderr
    calls = json.loads(listed.stdout)
    assert [(c["trace_id"], c["wire_api"], c["outcome"]) for c in calls] == [
        ("run-one", "anthropic-messages", "complete"),
        ("run-two", "openai-chat", "complete"),
    ]
    one = run_cli("gateway", "calls", "--db", str(db), "--run", "run-one", "--json")
    assert [c["trace_id"] for c in json.loads(one.stdout)] == ["run-one"]

    by_model = json.loads(run_cli("gateway", "usage", "--by", "model", "--db", str(db), "--json").stdout)
    assert [g["model"] for g in by_model] == ["claude-sonnet-4-5", "mystery-model"]
    claude_row, mystery = by_model
    assert claude_row["usage"] == {
        "input_uncached": 1000,
        "cache_read": 200,
        "cache_write": 30,
        "output": 50,
        "reasoning": None,
    }
    assert claude_row["not_reported"]["reasoning"] == 1 and Decimal(claude_row["cost_usd"]) > 0
    assert mystery["cost_usd"] is None and mystery["unpriced_calls"] == 1  # unknown, never 0

    table = run_cli("gateway", "calls", "--db", str(db), env={"COLUMNS": "200"})
    assert table.returncode == 0 and "run-one" in table.stdout and "unknown" in table.stdout
    days = run_cli("gateway", "usage", "--by", "day", "--db", str(db), env={"COLUMNS": "200"})
    assert days.returncode == 0 and "calls" in days.stdout


def test_serve_runs_on_either_engine(tmp_path: Path) -> None:
    with MockServer(Script([Turn.reply("hi", usage=USAGE)] * 2)) as mock:
        for engine in ("aiohttp", "raw"):
            db = str(tmp_path / "c.db")
            process, url = serve("--upstream", mock.base_url, "--db", db, "--engine", engine)
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=30) as answer:
                    server = answer.headers.get("Server") or ""
                client = claude(base_url=f"{url}/t/{engine}", api_key="sk-ant-CLI-000003", max_retries=0)
                client.messages.create(
                    model="claude-sonnet-4-5", max_tokens=5, messages=[{"role": "user", "content": "x"}]
                )
            finally:
                process.send_signal(signal.SIGTERM)
                _, err = process.communicate(timeout=30)
            assert process.returncode == 0, err
            assert ("aiohttp" in server) == (engine == "aiohttp"), server
            listed = run_cli("gateway", "calls", "--db", db, "--run", engine, "--json")
            assert [c["outcome"] for c in json.loads(listed.stdout)] == ["complete"]
    wrong = run_cli("gateway", "serve", "--engine", "nginx", "--db", str(tmp_path / "c.db"))
    assert wrong.returncode == 2 and "nginx" in wrong.stderr


def test_serve_refuses_a_bad_upstream_and_a_taken_port(tmp_path: Path) -> None:
    bad = run_cli("gateway", "serve", "--upstream", "ftp://example.com", "--db", str(tmp_path / "c.db"))
    assert bad.returncode == 1 and "http(s) base URL" in bad.stderr and "Traceback" not in bad.stderr
    with MockServer() as mock:
        taken = run_cli("gateway", "serve", "--port", str(mock.port), "--db", str(tmp_path / "c.db"))
    assert taken.returncode == 1 and "cannot listen" in taken.stderr and "Traceback" not in taken.stderr


def test_calls_refuses_run_and_trace_together(tmp_path: Path) -> None:
    both = run_cli("gateway", "calls", "--run", "a", "--trace", "b", "--db", str(tmp_path / "c.db"))
    assert both.returncode == 2 and "not both" in both.stderr


def test_run_refuses_a_gateway_with_its_own_endpoint_or_capture(tmp_path: Path) -> None:
    mocked = run_cli("run", "claude-code", "hi", "--gateway", "http://127.0.0.1:9", "--mock-text", "x")
    assert mocked.returncode == 1 and "forwards to its own upstream" in mocked.stderr
    both = run_cli("run", "claude-code", "hi", "--gateway", "http://127.0.0.1:9", "--capture")
    assert both.returncode == 1 and "choose one" in both.stderr
    bad = run_cli("run", "claude-code", "hi", "--gateway", "ftp://x")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def _fetched(url: str) -> dict[str, object]:
    """What ``run --gateway URL`` puts in ``Result.capture`` for run ``run-fetch`` (nothing self-reported)."""
    from tackroom.run.services import fetched as fetch
    from tackroom.trace.events import Usage as Reported

    return fetch(url, "run-fetch", Reported())


def test_a_run_through_a_running_gateway_gets_its_calls_from_it(tmp_path: Path) -> None:
    from tackroom.gateway import Gateway

    with (
        MockServer(Script([Turn.reply("hi", usage=USAGE)] * 3)) as mock,
        Gateway(mock.base_url, db=tmp_path / "gw.db") as gw,
    ):
        for trace in ("run-fetch", "run-fetch", "someone-else"):
            client = claude(base_url=gw.trace_url(trace), api_key="sk-ant-FETCH-000001", max_retries=0)
            client.messages.create(
                model="claude-sonnet-4-5", max_tokens=5, messages=[{"role": "user", "content": "x"}]
            )
        capture = _fetched(gw.url)
        stored = gw.store.calls(run="run-fetch")
    assert capture["failures"] == []
    calls = capture["calls"]
    assert isinstance(calls, list) and [c["trace_id"] for c in calls] == ["run-fetch", "run-fetch"]
    assert calls == json.loads(json.dumps(stored, default=str))  # the gateway's own rows, as stored
    assert calls[0]["usage"] == {
        "input_uncached": 1000,
        "cache_read": 200,
        "cache_write": 30,
        "output": 50,
        "reasoning": None,
    }
    usage = capture["usage"]
    assert isinstance(usage, dict) and usage["calls"] == 2 and usage["usage"]["output"] == 100
    assert "sk-ant-FETCH" not in json.dumps(capture)


def test_a_gateway_that_cannot_give_the_calls_leaves_them_unknown(tmp_path: Path) -> None:
    from tests.gatewaykit import free_port

    dead = _fetched(f"http://127.0.0.1:{free_port()}")
    assert dead["calls"] is None and dead["usage"] is None  # unknown, never an empty list
    assert "did not give the run's calls" in str(dead["failures"])
    # Something else than a gateway on that port: its answer is outside input.
    with MockServer() as not_a_gateway:
        other = _fetched(not_a_gateway.base_url)
    assert other["calls"] is None and "gateway at" in str(other["failures"])


def test_the_calls_endpoint_refuses_a_bad_run_id(tmp_path: Path) -> None:
    import urllib.error
    import urllib.request

    from tackroom.gateway import Gateway

    with Gateway("http://127.0.0.1:9", db=tmp_path / "gw.db") as gw:
        try:
            urllib.request.urlopen(f"{gw.url}/_tackroom/calls?run=../../etc", timeout=10)
        except urllib.error.HTTPError as exc:
            assert exc.code == 400 and b"must match" in exc.read()
        else:
            raise AssertionError("a bad run id was accepted")


@pytest.mark.parametrize("command", ["calls", "usage"])
def test_a_mistyped_db_path_is_an_error_not_a_new_database(tmp_path: Path, command: str) -> None:
    typo = tmp_path / "captuers" / "gateway.db"
    done = run_cli("gateway", command, "--db", str(typo))
    assert done.returncode == 1 and "no capture database there" in done.stderr, done.stderr
    assert not typo.parent.exists()
