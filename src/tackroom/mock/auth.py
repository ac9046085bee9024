"""The credential a model call carries, read in its wire's form, and the provider's refusal of none.

The mock needs no real key, but a mock started with ``auth="required"`` holds every model call to
the form its provider takes, so a test proves a harness sent one and which: an API key
(Anthropic's ``x-api-key``, Gemini's ``x-goog-api-key`` or ``?key=``), a bearer token
(``Authorization: Bearer``: OpenAI's keys, the ChatGPT backend's sign-in, Anthropic's
``ANTHROPIC_AUTH_TOKEN``), or Anthropic's OAuth: a bearer ``sk-ant-oat...`` token, which the API
takes only beside an ``anthropic-beta: oauth-...`` flag (Claude Code 2.1.332 sends
``oauth-2025-04-20`` with one). A call with none, or an OAuth token without its flag, is answered
401 in the wire's own error shape. Only the form is kept: never the value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal
from urllib.parse import parse_qsl, urlsplit

AuthMode = Literal["any", "required"]
"""``any``: every call is answered, with a credential or without (the keyless mock); ``required``:
a model call without one in its wire's form gets the provider's 401."""

Form = Literal["api-key", "bearer", "oauth"]

OAUTH_TOKEN_PREFIX = "sk-ant-oat"
"""How an Anthropic OAuth access token starts (``claude setup-token`` prints ``sk-ant-oat01-...``)."""

_MISSING = {
    "anthropic-messages": "x-api-key header is required",
    "openai-responses": (
        "You didn't provide an API key. You need to provide your API key in an Authorization header "
        "using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
    ),
    "gemini": "Method doesn't allow unregistered callers (callers without established identity).",
}
_MISSING["openai-chat"] = _MISSING["openai-responses"]


@dataclass(frozen=True)
class Credential:
    """The form of the credential a request carries (None: none), and why its provider would refuse it."""

    form: Form | None
    problem: str | None = None


def credential(wire: str, headers: Mapping[str, str], target: str) -> Credential:
    """What ``headers`` (lower-case names) and the query of ``target`` carry for a call in ``wire``."""
    bearer = _bearer(headers.get("authorization", ""))
    if wire == "anthropic-messages":
        if headers.get("x-api-key", "").strip():
            return Credential("api-key")
        if bearer is not None and bearer.startswith(OAUTH_TOKEN_PREFIX):
            flags = [flag.strip() for flag in headers.get("anthropic-beta", "").split(",")]
            if any(flag.startswith("oauth-") for flag in flags):
                return Credential("oauth")
            return Credential("oauth", "OAuth authentication is currently not supported.")
    elif wire == "gemini":
        query = dict(parse_qsl(urlsplit(target).query))
        if headers.get("x-goog-api-key", "").strip() or query.get("key", "").strip():
            return Credential("api-key")
    if bearer:
        return Credential("bearer")
    return Credential(None, _MISSING.get(wire, _MISSING["openai-chat"]))


def _bearer(value: str) -> str | None:
    """The token of ``Bearer <token>`` (None when the header is no bearer)."""
    scheme, _, token = value.strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None
