"""The one interface every wire API implements, and helpers they share."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

from tackroom._hash import sha256
from tackroom.mock.answer import Content
from tackroom.mock.script import Usage

MOCK_MODEL = "mock-model"
CREATED = 1_764_000_000
"""Fixed timestamp for ``created`` fields: the same request must get byte-identical answers."""

JsonObject = dict[str, Any]


@dataclass(frozen=True)
class OfferedTool:
    """A tool the request offers the model, with namespace children flattened to ``NS__child``."""

    name: str
    child: str
    namespace: str | None = None
    custom: bool = False
    schema: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Exchange:
    """One request as the wire sees it."""

    path: str
    body: Mapping[str, Any]

    @cached_property
    def ident(self) -> str:
        """A deterministic id suffix: retries get the same ids, other conversations other ids."""
        canonical = json.dumps(self.body, sort_keys=True, ensure_ascii=False, default=str)
        return sha256(canonical.encode()).hexdigest()[:24]


class Wire(ABC):
    """One wire API: how to read a request and how to render an answer in it."""

    name: ClassVar[str]

    @abstractmethod
    def past_turns(self, body: Mapping[str, Any]) -> list[PastTurn]:
        """The assistant turns the request's conversation already holds, oldest first."""

    @abstractmethod
    def offered_tools(self, body: Mapping[str, Any]) -> list[OfferedTool]:
        """The tools the request offers."""

    @abstractmethod
    def complete(self, content: Content, usage: Usage, ex: Exchange) -> JsonObject:
        """The non-streaming response body."""

    @abstractmethod
    def events(self, content: Content, usage: Usage, ex: Exchange) -> list[bytes]:
        """The streaming response, one encoded SSE event per item."""

    @abstractmethod
    def error_body(self, status: int, message: str) -> JsonObject:
        """The wire's native error body."""

    def streaming(self, ex: Exchange) -> bool:
        """Whether the client asked for SSE."""
        return ex.body.get("stream") is True

    def schema_request(self, body: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The JSON schema of a structured-output side call, if this request is one."""
        return None

    def model(self, ex: Exchange) -> str:
        """The model the request names, echoed back."""
        model = ex.body.get("model")
        return model if isinstance(model, str) and model else MOCK_MODEL


def sse(data: Any, event: str | None = None, eol: str = "\n") -> bytes:
    """Encode one server-sent event."""
    head = f"event: {event}{eol}" if event else ""
    return f"{head}data: {json.dumps(data, ensure_ascii=False)}{eol}{eol}".encode()


def pieces(text: str) -> list[str]:
    """Split text in two deltas so clients are seen to concatenate; short text stays whole."""
    if len(text) < 2:
        return [text]
    mid = len(text) // 2
    return [text[:mid], text[mid:]]


@dataclass(frozen=True)
class PastTurn:
    """One assistant turn found in a request's history."""

    text: str
    """Its visible text, parts joined (thinking excluded)."""
    called: bool
    """Whether it made a tool call."""


@dataclass(frozen=True)
class Item:
    """One message or item of a conversation, as a wire reads it."""

    assistant: bool
    text: str = ""
    called: bool = False


def group_turns(items: Iterable[Item]) -> list[PastTurn]:
    """Merge runs of assistant items into turns: parallel calls, or text then a call, are one turn."""
    turns: list[PastTurn] = []
    previous = False
    for item in items:
        if item.assistant and previous:
            last = turns[-1]
            turns[-1] = PastTurn(last.text + item.text, last.called or item.called)
        elif item.assistant:
            turns.append(PastTurn(item.text, item.called))
        previous = item.assistant
    return turns


def joined_text(parts: Any, key: str = "text") -> str:
    """The text of a content field: a string, or the ``key`` strings of its list of parts."""
    if isinstance(parts, str):
        return parts
    return "".join(p[key] for p in dicts(parts) if isinstance(p.get(key), str) and not p.get("thought"))


def dicts(value: Any) -> list[Mapping[str, Any]]:
    """The dict items of a JSON list; anything else is an empty list."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def schema_of(value: Any) -> Mapping[str, Any]:
    """A tool schema, or an empty one when absent or malformed."""
    return value if isinstance(value, dict) else {}
