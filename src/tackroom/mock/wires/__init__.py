"""The wire APIs the mock speaks, and which request path goes to which.

Paths match on their suffix, so any base URL prefix works (``/v1/responses``,
``/responses``, ``/openai/v1/chat/completions``); query strings are ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from tackroom.mock.wires.anthropic import AnthropicMessages
from tackroom.mock.wires.base import MOCK_MODEL, Exchange, OfferedTool, Wire
from tackroom.mock.wires.gemini import Gemini
from tackroom.mock.wires.openai_chat import OpenAIChat
from tackroom.mock.wires.openai_responses import OpenAIResponses

__all__ = [
    "MOCK_MODEL",
    "WIRES",
    "AnthropicMessages",
    "Exchange",
    "Gemini",
    "OfferedTool",
    "OpenAIChat",
    "OpenAIResponses",
    "Route",
    "Wire",
    "route",
]

ANTHROPIC = AnthropicMessages()
CHAT = OpenAIChat()
RESPONSES = OpenAIResponses()
GEMINI = Gemini()
WIRES: tuple[Wire, ...] = (ANTHROPIC, RESPONSES, CHAT, GEMINI)

RouteKind = Literal["generate", "count_tokens", "openai_models", "gemini_models", "health"]


@dataclass(frozen=True)
class Route:
    """Where one request goes: what to do, and in which wire when it is a model call."""

    kind: RouteKind
    wire: Wire | None = None


def route(method: str, target: str) -> Route | None:
    """The route for a request line, or None for a path the mock does not serve."""
    path = urlsplit(target).path.rstrip("/")
    if method == "POST":
        return _post_route(path)
    if method == "GET":
        return _get_route(path)
    return None


def _post_route(path: str) -> Route | None:
    last = path.rsplit("/", 1)[-1]
    if path.endswith("/messages/count_tokens"):
        return Route("count_tokens", ANTHROPIC)
    if path.endswith("/messages"):
        return Route("generate", ANTHROPIC)
    if path.endswith("/chat/completions"):
        return Route("generate", CHAT)
    if path.endswith("/responses"):
        return Route("generate", RESPONSES)
    if "/models/" in path and last.endswith((":generateContent", ":streamGenerateContent")):
        return Route("generate", GEMINI)
    return None


def _get_route(path: str) -> Route | None:
    if path.endswith("/v1beta/models"):
        return Route("gemini_models")
    if path.endswith("/models"):
        return Route("openai_models")
    if path in ("", "/health"):
        return Route("health")
    return None
