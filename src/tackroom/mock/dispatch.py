"""Turn one parsed request into the bytes to send back (and what to record about them)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from tackroom.mock.answer import ErrorAnswer, Reply
from tackroom.mock.auth import AuthMode, Credential
from tackroom.mock.plan import plan
from tackroom.mock.script import DEFAULT_USAGE, Script
from tackroom.mock.vocabulary import ToolVocabulary
from tackroom.mock.wires import MOCK_MODEL, Route, Wire
from tackroom.mock.wires.anthropic import AnthropicMessages
from tackroom.mock.wires.base import CREATED, Exchange

JSON_TYPE = "application/json"
SSE_TYPE = "text/event-stream"


@dataclass(frozen=True)
class Outcome:
    """The HTTP answer to one request, plus the facts the recorder keeps."""

    status: int
    chunks: tuple[bytes, ...]
    """The body; one chunk per SSE event when streamed, so faults can cut between events."""
    content_type: str = JSON_TYPE
    streamed: bool = False
    wire: str | None = None
    turn: int | None = None
    answer: dict[str, Any] = field(default_factory=dict)
    delay_s: float = 0.0
    disconnect_after: int | None = None


@dataclass(frozen=True)
class Setup:
    """What the server was started with."""

    script: Script | None
    vocabulary: ToolVocabulary
    auth: AuthMode = "any"


def dispatch(
    route: Route | None,
    method: str,
    target: str,
    body: Any,
    setup: Setup,
    credential: Credential | None = None,
) -> Outcome:
    """The outcome for a routed request; ``credential`` is what a model call carries (read in its wire's
    form), refused as its provider would when the mock requires one."""
    if route is None:
        message = f"MOCK: no route for {method} {urlsplit(target).path}"
        return _json(404, {"error": {"type": "not_found_error", "message": message}}, _error(404, message))
    fixed = _FIXED.get(route.kind)
    if fixed is not None:
        return _json(200, fixed(), {"kind": route.kind})
    wire = route.wire
    if wire is None:  # every other route kind names its wire; keep mypy and -O honest
        raise LookupError(f"route {route.kind!r} has no wire")
    if setup.auth == "required" and credential is not None and credential.problem is not None:
        message = f"MOCK: {credential.problem}"
        return _json(401, wire.error_body(401, message), _error(401, message), wire.name)
    if not isinstance(body, dict):
        message = "MOCK: request body is not a JSON object"
        return _json(400, wire.error_body(400, message), _error(400, message), wire.name)
    if route.kind == "count_tokens" and isinstance(wire, AnthropicMessages):
        return _json(200, wire.count_tokens(DEFAULT_USAGE), {"kind": "count_tokens"}, wire.name)
    return _generate(wire, target, body, setup)


def _generate(wire: Wire, target: str, body: dict[str, Any], setup: Setup) -> Outcome:
    reply = plan(setup.script, setup.vocabulary, wire, body)
    ex = Exchange(target, body)
    facts: dict[str, Any] = {"wire": wire.name, "turn": reply.turn, "answer": reply.summary()}
    if isinstance(reply.content, ErrorAnswer):
        error = wire.error_body(reply.content.status, reply.content.message)
        return Outcome(reply.content.status, (_encode(error),), delay_s=reply.delay_s, **facts)
    faults: dict[str, Any] = {"delay_s": reply.delay_s, "disconnect_after": reply.disconnect_after}
    if wire.streaming(ex):
        events = tuple(wire.events(reply.content, reply.usage, ex))
        return Outcome(200, events, SSE_TYPE, streamed=True, **facts, **faults)
    return Outcome(200, (_encode(wire.complete(reply.content, reply.usage, ex)),), **facts, **faults)


def rejection(status: int, message: str) -> Outcome:
    """The answer to a request the mock could not read (bad framing, too large, bad JSON)."""
    text = f"MOCK: {message}"
    body = {"error": {"type": "invalid_request_error", "message": text}}
    return _json(status, body, {"kind": "rejected", "status": status, "message": text})


def _json(status: int, body: Any, answer: dict[str, Any], wire: str | None = None) -> Outcome:
    return Outcome(status, (_encode(body),), wire=wire, answer=answer)


def _error(status: int, message: str) -> dict[str, Any]:
    return Reply(ErrorAnswer(status, message)).summary()


def _encode(body: Any) -> bytes:
    return json.dumps(body, ensure_ascii=False).encode()


def _openai_models() -> dict[str, Any]:
    # One list that satisfies both OpenAI (object/owned_by) and Anthropic
    # (type/display_name/has_more) clients, since both GET /v1/models.
    openai = {"id": MOCK_MODEL, "object": "model", "created": CREATED, "owned_by": "tackroom"}
    anthropic = {"type": "model", "display_name": "Mock Model", "created_at": "2025-11-24T00:00:00Z"}
    model = {**openai, **anthropic}
    return {
        "object": "list",
        "data": [model],
        "has_more": False,
        "first_id": MOCK_MODEL,
        "last_id": MOCK_MODEL,
    }


def _health() -> dict[str, Any]:
    return {"ok": True}


def _gemini_models() -> dict[str, Any]:
    model = {
        "name": f"models/{MOCK_MODEL}",
        "displayName": "Mock Model",
        "supportedGenerationMethods": ["generateContent", "streamGenerateContent", "countTokens"],
    }
    return {"models": [model]}


_FIXED: dict[str, Callable[[], dict[str, Any]]] = {
    "health": _health,
    "openai_models": _openai_models,
    "gemini_models": _gemini_models,
}
"""Routes whose answer does not depend on the request."""
