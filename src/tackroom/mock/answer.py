"""What the mock decided to answer one request with, before any wire renders it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tackroom.mock.script import DEFAULT_USAGE, Usage


@dataclass(frozen=True)
class TextAnswer:
    """Plain assistant text."""

    text: str


@dataclass(frozen=True)
class ToolCall:
    """One tool call, already translated to a tool the request offered."""

    name: str
    """The name to emit: bare child name when the tool sits in a namespace."""
    arguments: Mapping[str, Any] = field(default_factory=dict)
    namespace: str | None = None
    custom: bool = False
    """A Responses ``custom`` tool, called with one ``input`` string instead of JSON arguments."""

    @property
    def arguments_json(self) -> str:
        """The arguments as the JSON string function-calling wires carry."""
        return json.dumps(dict(self.arguments), ensure_ascii=False)

    @property
    def input_text(self) -> str:
        """The free-form input of a custom tool: ``input``, else the only string argument, else JSON."""
        value = self.arguments.get("input")
        if isinstance(value, str):
            return value
        strings = [v for v in self.arguments.values() if isinstance(v, str)]
        if len(strings) == 1 and len(self.arguments) == 1:
            return strings[0]
        return self.arguments_json


@dataclass(frozen=True)
class ErrorAnswer:
    """An HTTP error, rendered in the wire's native error shape."""

    status: int
    message: str


Content = TextAnswer | ToolCall
"""What a successful answer carries."""


@dataclass(frozen=True)
class Reply:
    """The full decision for one request: content, usage, timing faults, and which turn it was."""

    content: Content | ErrorAnswer
    usage: Usage = DEFAULT_USAGE
    turn: int | None = None
    """Script turn index answered; None for requests outside the conversation (router calls)."""
    delay_s: float = 0.0
    disconnect_after: int | None = None

    def summary(self) -> dict[str, Any]:
        """A JSON-ready description of the answer, for the request record."""
        match self.content:
            case TextAnswer(text=text):
                return {"kind": "text", "text": text}
            case ToolCall() as call:
                return {
                    "kind": "tool",
                    "name": call.name,
                    "namespace": call.namespace,
                    "arguments": dict(call.arguments),
                    "custom": call.custom,
                }
            case ErrorAnswer(status=status, message=message):
                return {"kind": "error", "status": status, "message": message}
