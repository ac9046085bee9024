"""Gemini: ``POST /v1beta/models/<model>:generateContent`` and ``:streamGenerateContent?alt=sse``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from tackroom.mock.answer import Content, TextAnswer
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

_MODEL_IN_PATH = re.compile(r"/models/([^/:?]+):")
_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    501: "UNIMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


class Gemini(Wire):
    """The Gemini generateContent API."""

    name = "gemini"

    def past_turns(self, body: Mapping[str, Any]) -> list[PastTurn]:
        return group_turns(
            Item(
                c.get("role") == "model",
                joined_text(c.get("parts")),
                any("functionCall" in p for p in dicts(c.get("parts"))),
            )
            for c in dicts(body.get("contents"))
        )

    def offered_tools(self, body: Mapping[str, Any]) -> list[OfferedTool]:
        offered = []
        for tool in dicts(body.get("tools")):
            for decl in dicts(tool.get("functionDeclarations")):
                if isinstance(decl.get("name"), str):
                    schema = decl.get("parametersJsonSchema", decl.get("parameters"))
                    offered.append(OfferedTool(decl["name"], decl["name"], schema=_mapping(schema)))
        return offered

    def schema_request(self, body: Mapping[str, Any]) -> Mapping[str, Any] | None:
        # Gemini CLI's model router (and next-speaker check) ask for JSON matching a
        # schema and parse parts[0].text as JSON (facts: Gemini CLI 0.61.0).
        config = _mapping(body.get("generationConfig"))
        schema = config.get("responseJsonSchema", config.get("responseSchema"))
        return schema if isinstance(schema, dict) else None

    def streaming(self, ex: Exchange) -> bool:
        return ":streamGenerateContent" in ex.path

    def model(self, ex: Exchange) -> str:
        found = _MODEL_IN_PATH.search(ex.path)
        return found.group(1) if found else super().model(ex)

    def complete(self, content: Content, usage: Usage, ex: Exchange) -> JsonObject:
        return self._chunk(_parts(content, split=False), ex, usage)

    def events(self, content: Content, usage: Usage, ex: Exchange) -> list[bytes]:
        parts = _parts(content, split=True)
        chunks = [self._chunk([p], ex, None) for p in parts[:-1]]
        chunks.append(self._chunk(parts[-1:], ex, usage))
        # The Google server ends events with CRLF pairs, as the facts' working stream did.
        return [sse(c, eol="\r\n") for c in chunks]

    def error_body(self, status: int, message: str) -> JsonObject:
        return {"error": {"code": status, "message": message, "status": _STATUS.get(status, "INTERNAL")}}

    def _chunk(self, parts: list[JsonObject], ex: Exchange, usage: Usage | None) -> JsonObject:
        candidate: JsonObject = {"content": {"role": "model", "parts": parts}, "index": 0}
        chunk: JsonObject = {
            "candidates": [candidate],
            "modelVersion": self.model(ex),
            "responseId": ex.ident,
        }
        if usage is not None:  # the last chunk finishes the turn and carries the counts
            candidate["finishReason"] = "STOP"
            chunk["usageMetadata"] = _usage(usage)
        return chunk


def _parts(content: Content, *, split: bool) -> list[JsonObject]:
    # A non-streaming answer keeps its text in one part: Gemini CLI's router reads
    # the JSON from parts[0].text (facts: Gemini CLI 0.61.0).
    if isinstance(content, TextAnswer):
        return [{"text": p} for p in (pieces(content.text) if split else [content.text])]
    return [{"functionCall": {"name": content.name, "args": dict(content.arguments)}}]


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _usage(usage: Usage) -> JsonObject:
    return {
        "promptTokenCount": usage.input,
        "candidatesTokenCount": usage.output,
        "cachedContentTokenCount": usage.cache_read,
        "thoughtsTokenCount": usage.reasoning,
        "totalTokenCount": usage.input + usage.output + usage.reasoning,
    }
