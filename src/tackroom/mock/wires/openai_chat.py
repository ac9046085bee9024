"""OpenAI Chat Completions: ``POST /v1/chat/completions``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tackroom.mock.answer import Content, TextAnswer, ToolCall
from tackroom.mock.script import Usage
from tackroom.mock.wires.base import (
    CREATED,
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
    schema_of,
    sse,
)
from tackroom.mock.wires.openai_errors import openai_error


class OpenAIChat(Wire):
    """The OpenAI Chat Completions API."""

    name = "openai-chat"

    def past_turns(self, body: Mapping[str, Any]) -> list[PastTurn]:
        return group_turns(
            Item(m.get("role") == "assistant", joined_text(m.get("content")), bool(m.get("tool_calls")))
            for m in dicts(body.get("messages"))
        )

    def offered_tools(self, body: Mapping[str, Any]) -> list[OfferedTool]:
        offered = []
        for tool in dicts(body.get("tools")):
            function = tool.get("function")
            if isinstance(function, dict) and isinstance(function.get("name"), str):
                name = function["name"]
                offered.append(OfferedTool(name, name, schema=schema_of(function.get("parameters"))))
        return offered

    def complete(self, content: Content, usage: Usage, ex: Exchange) -> JsonObject:
        message: JsonObject = {"role": "assistant", "content": None}
        if isinstance(content, TextAnswer):
            message["content"] = content.text
        else:
            message["tool_calls"] = [_call(content, ex)]
        choice = {"index": 0, "message": message, "finish_reason": _finish(content), "logprobs": None}
        return {**self._head(ex, "chat.completion"), "choices": [choice], "usage": _usage(usage)}

    def events(self, content: Content, usage: Usage, ex: Exchange) -> list[bytes]:
        head = self._head(ex, "chat.completion.chunk")
        stream = [sse({**head, "choices": [_choice(delta)]}) for delta in _deltas(content, ex)]
        stream.append(sse({**head, "choices": [_choice({}, _finish(content))]}))
        # Token counts only arrive in this trailing chunk, and only when the client
        # asks (facts: opencode, pi, qwen, omp, copilot send stream_options).
        options = ex.body.get("stream_options")
        if isinstance(options, dict) and options.get("include_usage") is True:
            stream.append(sse({**head, "choices": [], "usage": _usage(usage)}))
        stream.append(b"data: [DONE]\n\n")
        return stream

    def error_body(self, status: int, message: str) -> JsonObject:
        return openai_error(status, message)

    def _head(self, ex: Exchange, kind: str) -> JsonObject:
        return {
            "id": f"chatcmpl-mock-{ex.ident}",
            "object": kind,
            "created": CREATED,
            "model": self.model(ex),
        }


def _finish(content: Content) -> str:
    return "stop" if isinstance(content, TextAnswer) else "tool_calls"


def _call(content: ToolCall, ex: Exchange) -> JsonObject:
    function = {"name": content.name, "arguments": content.arguments_json}
    return {"id": f"call_mock_{ex.ident}", "type": "function", "function": function}


def _deltas(content: Content, ex: Exchange) -> list[JsonObject]:
    if isinstance(content, TextAnswer):
        texts = pieces(content.text)
        return [{"role": "assistant", "content": texts[0]}, *({"content": t} for t in texts[1:])]
    return [{"role": "assistant", "content": None, "tool_calls": [{"index": 0, **_call(content, ex)}]}]


def _choice(delta: JsonObject, finish: str | None = None) -> JsonObject:
    return {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}


def _usage(usage: Usage) -> JsonObject:
    return {
        "prompt_tokens": usage.input,
        "completion_tokens": usage.output,
        "total_tokens": usage.input + usage.output,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read},
        "completion_tokens_details": {"reasoning_tokens": usage.reasoning},
    }
