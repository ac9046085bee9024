"""Subscription sign-ins through the gateway: the bearer goes upstream as sent, is never stored.

Claude Code with an OAuth token sends ``Authorization: Bearer sk-ant-oat...`` and an ``oauth-`` beta
flag; Codex signed in with ChatGPT sends its access token as a bearer to the ChatGPT backend
(``/backend-api/codex/responses``), which the gateway routes to ``chatgpt.com``, never
``api.openai.com``. The mock requires a credential here (``auth="required"``), so a call it answers
is one whose bearer reached it.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tackroom.gateway import Gateway
from tackroom.gateway.routes import DEFAULT_UPSTREAMS, place
from tackroom.gateway.server import upstream_map
from tackroom.mock import MockServer, Script, Turn, Usage

pytestmark = pytest.mark.timeout(60)

OAT = "sk-ant-oat01-GATEWAYOAUTHSECRET-0001"
CHATGPT = "eyJhbGciOiJub25lIn0.eyJDSEFUR1BUU0VDUkVUIjoxfQ.c2ln"
USAGE = Usage(input=1000, output=50, cache_read=200, cache_write=30, reasoning=10)


@pytest.fixture
def mock() -> Iterator[MockServer]:
    with MockServer(Script([Turn.reply("signed in", usage=USAGE)] * 4), auth="required") as server:
        yield server


@pytest.fixture(params=["raw", "aiohttp"])
def gw(mock: MockServer, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Gateway]:
    with Gateway(upstream=mock.base_url, db=tmp_path / "state.db", engine=request.param) as gateway:
        yield gateway


def post(url: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, bytes]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json", **headers}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, exc.read()


def _nowhere(token: str, directory: Path) -> None:
    """``token`` is in no file under ``directory`` (the store, its WAL and journal included)."""
    for path in directory.rglob("*"):
        if path.is_file():
            assert token.encode() not in path.read_bytes(), path


def test_an_anthropic_oauth_bearer_is_forwarded_and_never_stored(
    gw: Gateway, mock: MockServer, tmp_path: Path
) -> None:
    status, _ = post(
        gw.trace_url("tr-oauth") + "/v1/messages?beta=true",
        {"model": "claude-sonnet-4-5", "max_tokens": 20, "messages": [{"role": "user", "content": OAT}]},
        {"Authorization": f"Bearer {OAT}", "anthropic-beta": "claude-code-20250219,oauth-2025-04-20"},
    )
    assert status == 200
    assert [r.auth for r in mock.requests] == ["oauth"]
    gw.flush()
    [call] = gw.store.calls(trace="tr-oauth")
    assert (call["provider"], call["wire_api"], call["status"]) == ("anthropic", "anthropic-messages", 200)
    assert call["usage"]["output"] == 50
    _nowhere(OAT, tmp_path)


def test_the_chatgpt_backend_route_is_captured_with_its_bearer_forwarded(
    gw: Gateway, mock: MockServer, tmp_path: Path
) -> None:
    status, body = post(
        gw.trace_url("tr-chatgpt") + "/backend-api/codex/responses",
        {"model": "gpt-5.5", "input": [{"role": "user", "content": CHATGPT}], "stream": False},
        {"Authorization": f"Bearer {CHATGPT}", "chatgpt-account-id": "acct-test"},
    )
    assert status == 200, body
    [seen] = mock.requests
    assert (seen.path, seen.auth) == ("/backend-api/codex/responses", "bearer")
    gw.flush()
    [call] = gw.store.calls(trace="tr-chatgpt")
    assert (call["provider"], call["wire_api"], call["path"]) == (
        "chatgpt",
        "openai-responses",
        "/backend-api/codex/responses",
    )
    assert call["usage"]["output"] == 50 and call["usage"]["reasoning"] == 10
    _nowhere(CHATGPT, tmp_path)


def test_a_call_with_no_credential_gets_the_upstreams_401_through_the_gateway(
    gw: Gateway, mock: MockServer
) -> None:
    status, body = post(
        gw.trace_url("tr-none") + "/v1/messages",
        {"model": "claude-sonnet-4-5", "max_tokens": 20, "messages": [{"role": "user", "content": "hi"}]},
        {},
    )
    assert status == 401
    assert json.loads(body)["error"]["type"] == "authentication_error"


def test_the_chatgpt_backend_goes_to_chatgpt_com_not_the_openai_api() -> None:
    target = place("POST", "/t/run-1/backend-api/codex/responses", None)
    assert (target.trace_id, target.provider, target.wire) == ("run-1", "chatgpt", "openai-responses")
    assert upstream_map(None)[target.provider] == DEFAULT_UPSTREAMS["chatgpt"] == "https://chatgpt.com"
    assert place("POST", "/t/run-1/v1/responses", None).provider == "openai"
    assert place("GET", "/backend-api/codex/models", None).provider == "chatgpt"
