"""Which call a request is: its trace, its provider path, its wire API, its provider and credential.

A client reaches the gateway at ``<gateway>/t/<trace-id>/<provider path>``:
clients keep a base URL's path (and drop its query string), so the trace id
rides in the path. A client that cannot change its base URL's path sends the
header ``x-tackroom-trace`` instead. The provider path after the prefix is
the one the provider itself serves (``/v1/messages``, ``/v1beta/models/...``);
which wire it is comes from the mock's routing table, so the gateway and the
mock agree on every path.

Codex signed in with ChatGPT speaks the Responses wire to the ChatGPT backend
(``/backend-api/codex/responses``, with the sign-in's bearer): a path under
``/backend-api/`` is the ``chatgpt`` provider, forwarded to ``chatgpt.com``,
never to ``api.openai.com`` (which would refuse the token, or see it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from tackroom.mock.wires import route

Provider = Literal["anthropic", "openai", "gemini", "chatgpt"]

TRACE_HEADER = "x-tackroom-trace"
RUN_HEADER = "x-tackroom-run"
TRACE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")

DEFAULT_UPSTREAMS: dict[Provider, str] = {
    "anthropic": "https://api.anthropic.com",
    "openai": "https://api.openai.com",
    "gemini": "https://generativelanguage.googleapis.com",
    "chatgpt": "https://chatgpt.com",
}
CHATGPT_PREFIX = "/backend-api/"
"""Where the ChatGPT backend's paths start (Codex signed in with ChatGPT: ``/backend-api/codex/...``)."""
KEY_ENV: dict[Provider, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_API_KEY",),
    "openai": ("OPENAI_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
}
"""Where ``--inject-keys`` finds each provider's key in the gateway's own environment (the ChatGPT
backend takes a sign-in's token only, never a key: the client's own goes through)."""


class BadTarget(ValueError):
    """A trace id that is not one."""


@dataclass(frozen=True)
class Target:
    """One request, placed."""

    trace_id: str | None
    path: str
    """The provider path and query, as forwarded upstream."""
    kind: str | None
    """``generate``, ``count_tokens``, ``openai_models``, ``gemini_models``; None: not a provider path."""
    wire: str | None
    """The wire API of a model call (``anthropic-messages``, ``openai-chat``...)."""
    provider: Provider | None


def place(method: str, path_qs: str, header_trace: str | None) -> Target:
    """Where ``method path_qs`` goes (:class:`BadTarget` for a malformed trace id)."""
    trace = None
    rest = path_qs
    if path_qs.startswith("/t/"):
        trace, slash, tail = path_qs[3:].partition("/")
        trace = trace.split("?", 1)[0]
        if not TRACE_ID.fullmatch(trace):
            raise BadTarget(f"the trace id in /t/<trace-id>/ must match {TRACE_ID.pattern}")
        rest = slash + tail if slash else "/"
    elif header_trace is not None:
        if not TRACE_ID.fullmatch(header_trace):
            raise BadTarget(f"the {TRACE_HEADER} header must match {TRACE_ID.pattern}")
        trace = header_trace
    found = route(method, rest)
    if found is None or found.kind == "health":
        return Target(trace, rest, None, None, None)
    wire = found.wire.name if found.wire is not None else None
    return Target(
        trace, rest, found.kind, wire if found.kind == "generate" else None, _provider(found.kind, rest, wire)
    )


def _provider(kind: str, path: str, wire: str | None) -> Provider:
    if path.startswith(CHATGPT_PREFIX):
        return "chatgpt"
    if kind == "gemini_models" or wire == "gemini":
        return "gemini"
    if wire == "anthropic-messages" or kind == "count_tokens":
        return "anthropic"
    return "openai"


def wire_of_path(path: str) -> str:
    """The wire API whose error shape answers a request the gateway refuses (by the path's look)."""
    bare = urlsplit(path).path.rstrip("/")
    if bare.endswith(("/messages", "/messages/count_tokens")):
        return "anthropic-messages"
    if "/v1beta/" in bare or bare.startswith("/v1beta"):
        return "gemini"
    if bare.endswith("/responses"):
        return "openai-responses"
    return "openai-chat"


def model_in_path(path: str) -> str | None:
    """Gemini names the model in its path: ``/v1beta/models/<model>:generateContent``."""
    found = re.search(r"/models/([^/:?]+):", path)
    return found.group(1) if found else None
