"""Anthropic Messages: ``POST /v1/messages`` (Claude Code adds ``?beta=true``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tackroom.mock.answer import Content, TextAnswer, ToolCall
from tackroom.mock.script import Usage
from tackroom.mock.wires.base import (
    Exchange,
    Item,
    JsonObject,
    OfferedTool,
    PastTurn,
    Wire,
    dicts,
    group_turns,
    joined_text,
    pieces,
    sse,
)
from tackroom.mock.wires.base import schema_of as _schema

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


class AnthropicMessages(Wire):
    """The Anthropic Messages API."""

    name = "anthropic-messages"

    def past_turns(self, body: Mapping[str, Any]) -> list[PastTurn]:
        return group_turns(
            Item(
                m.get("role") == "assistant",
                joined_text(m.get("content")),
                any(b.get("type") == "tool_use" for b in dicts(m.get("content"))),
            )
            for m in dicts(body.get("messages"))
        )

    def offered_tools(self, body: Mapping[str, Any]) -> list[OfferedTool]:
        tools = dicts(body.get("tools"))
        return [
            OfferedTool(t["name"], t["name"], schema=_schema(t.get("input_schema")))
            for t in tools
            if isinstance(t.get("name"), str)
        ]

    def complete(self, content: Content, usage: Usage, ex: Exchange) -> JsonObject:
        message = self._message(content, usage, ex)
        message["content"] = [_block(content, ex)]
        message["stop_reason"] = _stop_reason(content)
        return message

    def events(self, content: Content, usage: Usage, ex: Exchange) -> list[bytes]:
        start = self._message(content, usage, ex)
        # message_start carries the input side; output_tokens arrives in message_delta.
        start["usage"] = {**start["usage"], "output_tokens": 1}
        stream = [_event("message_start", message=start)]
        stream += _block_events(content, ex)
        stream.append(
            _event(
                "message_delta",
                delta={"stop_reason": _stop_reason(content), "stop_sequence": None},
                usage={"output_tokens": usage.output},
            )
        )
        stream.append(_event("message_stop"))
        return stream

    def error_body(self, status: int, message: str) -> JsonObject:
        kind = _ERROR_TYPES.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}

    def count_tokens(self, usage: Usage) -> JsonObject:
        """The ``/v1/messages/count_tokens`` answer."""
        return {"input_tokens": usage.input}

    def _message(self, content: Content, usage: Usage, ex: Exchange) -> JsonObject:
        return {
            "id": f"msg_mock_{ex.ident}",
            "type": "message",
            "role": "assistant",
            "model": self.model(ex),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": usage.input,
                "output_tokens": usage.output,
                "cache_read_input_tokens": usage.cache_read,
                "cache_creation_input_tokens": usage.cache_write,
            },
        }


def _stop_reason(content: Content) -> str:
    return "tool_use" if isinstance(content, ToolCall) else "end_turn"


def _block(content: Content, ex: Exchange) -> JsonObject:
    if isinstance(content, TextAnswer):
        return {"type": "text", "text": content.text}
    return {
        "type": "tool_use",
        "id": f"toolu_mock_{ex.ident}",
        "name": content.name,
        "input": dict(content.arguments),
    }


def _block_events(content: Content, ex: Exchange) -> list[bytes]:
    # content_block_stop is required: without it Claude Code showed empty text and
    # could not parse the tool input (facts: Claude Code 2.1.197, min1/min2).
    if isinstance(content, TextAnswer):
        start: JsonObject = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": p} for p in pieces(content.text)]
    else:
        start = {**_block(content, ex), "input": {}}
        deltas = [{"type": "input_json_delta", "partial_json": content.arguments_json}]
    return [
        _event("content_block_start", index=0, content_block=start),
        *(_event("content_block_delta", index=0, delta=d) for d in deltas),
        _event("content_block_stop", index=0),
    ]


def _event(kind: str, **fields: Any) -> bytes:
    return sse({"type": kind, **fields}, event=kind)
