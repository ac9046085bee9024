"""The mock holds model calls to their provider's credential form when asked to (``auth="required"``).

An API key, a bearer token, Anthropic's OAuth (a ``sk-ant-oat`` bearer beside an ``oauth-`` beta
flag) are each answered; a call with none gets the provider's 401 in its wire's shape; the record
keeps the form, never the value.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from tackroom.errors import MockError
from tackroom.mock import MockServer, Script

pytestmark = pytest.mark.timeout(30)

OAT = "sk-ant-oat01-mock-auth-test-token-0001"
OAUTH_BETA = "claude-code-20250219,oauth-2025-04-20,interleaved-thinking-2025-05-14"
ANTHROPIC = ("/v1/messages?beta=true", {"model": "m", "messages": [{"role": "user", "content": "hi"}]})
RESPONSES = ("/backend-api/codex/responses", {"model": "gpt-5.5", "input": "hi"})
CHAT = ("/v1/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "hi"}]})
GEMINI = ("/v1beta/models/m:generateContent", {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})


def post(base_url: str, call: tuple[str, dict[str, Any]], **headers: str) -> tuple[int, dict[str, Any]]:
    path, body = call
    request = urllib.request.Request(
        base_url + path, json.dumps(body).encode(), {"Content-Type": "application/json", **headers}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        with error:
            return error.code, json.loads(error.read())


@pytest.mark.parametrize(
    ("call", "headers", "form"),
    [
        (ANTHROPIC, {"x-api-key": "sk-ant-api03-key"}, "api-key"),
        (ANTHROPIC, {"Authorization": f"Bearer {OAT}", "anthropic-beta": OAUTH_BETA}, "oauth"),
        (ANTHROPIC, {"Authorization": "Bearer a-gateway-token"}, "bearer"),
        (RESPONSES, {"Authorization": "Bearer eyJ.chatgpt.access", "chatgpt-account-id": "acct-1"}, "bearer"),
        (CHAT, {"Authorization": "Bearer sk-openai"}, "bearer"),
        (GEMINI, {"x-goog-api-key": "AIza-key"}, "api-key"),
    ],
)
def test_a_call_in_its_providers_form_is_answered_and_its_form_recorded(
    call: tuple[str, dict[str, Any]], headers: dict[str, str], form: str
) -> None:
    with MockServer(Script.text("hello"), auth="required") as mock:
        status, _ = post(mock.base_url, call, **headers)
        [request] = mock.requests
    assert status == 200
    assert request.auth == form
    recorded = json.dumps(request.to_json())
    credentials = [
        v for k, v in headers.items() if k.lower() in ("authorization", "x-api-key", "x-goog-api-key")
    ]
    assert credentials and not any(value in recorded for value in credentials)


@pytest.mark.parametrize(
    ("call", "shape"),
    [
        (ANTHROPIC, {"type": "error", "error": {"type": "authentication_error"}}),
        (RESPONSES, {"error": {"type": "authentication_error"}}),
        (CHAT, {"error": {"type": "authentication_error"}}),
        (GEMINI, {"error": {"code": 401, "status": "UNAUTHENTICATED"}}),
    ],
)
def test_a_call_with_no_credential_gets_the_providers_401(
    call: tuple[str, dict[str, Any]], shape: dict[str, Any]
) -> None:
    with MockServer(Script.text("hello"), auth="required") as mock:
        status, body = post(mock.base_url, call)
        [request] = mock.requests
    assert status == 401
    assert _contains(body, shape), body
    assert request.auth is None and request.answer["status"] == 401


def test_an_anthropic_oauth_token_without_the_oauth_beta_flag_is_refused() -> None:
    with MockServer(Script.text("hello"), auth="required") as mock:
        status, body = post(mock.base_url, ANTHROPIC, Authorization=f"Bearer {OAT}")
    assert status == 401
    assert body["error"]["message"] == "MOCK: OAuth authentication is currently not supported."


def test_the_keyless_mock_still_answers_a_call_with_no_credential() -> None:
    with MockServer(Script.text("hello")) as mock:
        status, _ = post(mock.base_url, ANTHROPIC)
        [request] = mock.requests
    assert status == 200 and request.auth is None


def test_an_unknown_auth_mode_is_refused() -> None:
    with pytest.raises(MockError, match="auth must be 'any' or 'required'"):
        MockServer(auth="sometimes")  # type: ignore[arg-type]


def _contains(value: Any, shape: Any) -> bool:
    if isinstance(shape, dict):
        return isinstance(value, dict) and all(
            k in value and _contains(value[k], v) for k, v in shape.items()
        )
    return bool(value == shape)
