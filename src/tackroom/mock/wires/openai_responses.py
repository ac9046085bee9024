"""OpenAI Responses: ``POST /v1/responses`` (or ``/responses`` under any base URL)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tackroom.mock.answer import Content, TextAnswer
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

_DONE = {"status": "completed"}
# Output items the model produced; consecutive ones form a single assistant turn.
_MODEL_ITEMS = frozenset(
    {
        *("function_call", "custom_tool_call", "reasoning", "local_shell_call", "tool_search_call"),
        *("web_search_call", "file_search_call", "computer_call", "code_interpreter_call", "mcp_call"),
    }
)


class OpenAIResponses(Wire):
    """The OpenAI Responses API."""

    name = "openai-responses"

    def past_turns(self, body: Mapping[str, Any]) -> list[PastTurn]:
        return group_turns(_item_of(item) for item in dicts(body.get("input")))

    def offered_tools(self, body: Mapping[str, Any]) -> list[OfferedTool]:
        offered: list[OfferedTool] = []
        for tool in dicts(body.get("tools")):
            if tool.get("type") == "namespace" and isinstance(tool.get("name"), str):
                # Codex groups MCP and subagent tools as {"type":"namespace",...}; a call
                # must name the namespace and the bare child (facts: Codex 0.171.0, f3).
                offered += [_tool(child, tool["name"]) for child in dicts(tool.get("tools")) if _named(child)]
            elif _named(tool):
                offered.append(_tool(tool, None))
        return offered

    def complete(self, content: Content, usage: Usage, ex: Exchange) -> JsonObject:
        return self._response(ex, "completed", [_item(content, ex)], usage)

    def events(self, content: Content, usage: Usage, ex: Exchange) -> list[bytes]:
        item = _item(content, ex)
        pending = self._response(ex, "in_progress", [], None)
        body: list[JsonObject] = [
            {"type": "response.created", "response": pending},
            {"type": "response.in_progress", "response": pending},
            {"type": "response.output_item.added", "output_index": 0, "item": _in_progress(item)},
            *_item_body_events(item, content),
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed", "response": self._response(ex, "completed", [item], usage)},
        ]
        return [sse({**event, "sequence_number": n}, event=event["type"]) for n, event in enumerate(body)]

    def error_body(self, status: int, message: str) -> JsonObject:
        return openai_error(status, message)

    def _response(
        self, ex: Exchange, status: str, output: list[JsonObject], usage: Usage | None
    ) -> JsonObject:
        return {
            "id": f"resp_mock_{ex.ident}",
            "object": "response",
            "created_at": CREATED,
            "status": status,
            "model": self.model(ex),
            "output": output,
            "error": None,
            "incomplete_details": None,
            "usage": None if usage is None else _usage(usage),
        }


def _item_of(item: Mapping[str, Any]) -> Item:
    if item.get("type") in _MODEL_ITEMS:
        return Item(True, called=item.get("type") != "reasoning")
    return Item(item.get("role") == "assistant", joined_text(item.get("content")))


def _named(tool: Mapping[str, Any]) -> bool:
    return isinstance(tool.get("name"), str)


def _tool(tool: Mapping[str, Any], namespace: str | None) -> OfferedTool:
    child = tool["name"]
    flat = f"{namespace}__{child}" if namespace else child
    custom = tool.get("type") == "custom"
    return OfferedTool(flat, child, namespace, custom, schema_of(tool.get("parameters")))


def _item(content: Content, ex: Exchange) -> JsonObject:
    if isinstance(content, TextAnswer):
        part = {"type": "output_text", "text": content.text, "annotations": []}
        return {
            "id": f"msg_mock_{ex.ident}",
            "type": "message",
            "role": "assistant",
            **_DONE,
            "content": [part],
        }
    call = {"call_id": f"call_mock_{ex.ident}", "name": content.name}
    if content.custom:
        return {
            "id": f"ctc_mock_{ex.ident}",
            "type": "custom_tool_call",
            **_DONE,
            **call,
            "input": content.input_text,
        }
    item = {
        "id": f"fc_mock_{ex.ident}",
        "type": "function_call",
        **_DONE,
        **call,
        "arguments": content.arguments_json,
    }
    return item if content.namespace is None else {**item, "namespace": content.namespace}


def _in_progress(item: JsonObject) -> JsonObject:
    empty = {
        "message": ("content", []),
        "function_call": ("arguments", ""),
        "custom_tool_call": ("input", ""),
    }
    key, value = empty[item["type"]]
    return {**item, "status": "in_progress", key: value}


def _item_body_events(item: JsonObject, content: Content) -> list[JsonObject]:
    at = {"item_id": item["id"], "output_index": 0}
    if isinstance(content, TextAnswer):
        return _text_events(at, content.text)
    if content.custom:
        kind, full = "response.custom_tool_call_input", content.input_text
        return [{"type": f"{kind}.delta", **at, "delta": full}, {"type": f"{kind}.done", **at, "input": full}]
    kind, full = "response.function_call_arguments", content.arguments_json
    return [{"type": f"{kind}.delta", **at, "delta": full}, {"type": f"{kind}.done", **at, "arguments": full}]


def _text_events(at: JsonObject, text: str) -> list[JsonObject]:
    at = {**at, "content_index": 0}
    part = {"type": "output_text", "text": text, "annotations": []}
    return [
        {"type": "response.content_part.added", **at, "part": {**part, "text": ""}},
        *({"type": "response.output_text.delta", **at, "delta": p, "logprobs": []} for p in pieces(text)),
        {"type": "response.output_text.done", **at, "text": text, "logprobs": []},
        {"type": "response.content_part.done", **at, "part": part},
    ]


def _usage(usage: Usage) -> JsonObject:
    return {
        "input_tokens": usage.input,
        # Codex 0.171 reads cache writes from input_tokens_details.cache_write_tokens.
        "input_tokens_details": {"cached_tokens": usage.cache_read, "cache_write_tokens": usage.cache_write},
        "output_tokens": usage.output,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning},
        "total_tokens": usage.input + usage.output,
    }
