"""What one model call said about itself: the model that served it, its usage, whether it finished.

The proxy hands every chunk of the upstream answer to a :class:`Capture` as it
passes it on to the client; the capture keeps a copy and reads it when the
answer is over, in the capture writer, so it never holds up the stream. A kept
stream is read in one pass: a few byte searches find the events that can say
something (usage, the model, an ending, an error), and only those are parsed.
An answer past the kept size is read event by event as it passes from there on.

Usage is normalized to tackroom's convention (Anthropic's): ``input_uncached``
excludes cached tokens, ``cache_read`` and ``cache_write`` are additive to it,
and ``reasoning`` is part of ``output``. Each provider's own semantics are
converted here, once:

* Anthropic Messages: ``input_tokens`` is already uncached; the cache figures
  are additive; no reasoning figure is sent (NULL).
* OpenAI Responses and Chat Completions: ``input_tokens``/``prompt_tokens``
  include the cached tokens (``cached_tokens``), so ``input_uncached`` is the
  difference; ``reasoning_tokens`` is part of the output already. OpenAI sends
  no cache-write figure (NULL) unless the answer has one.
* Gemini: ``promptTokenCount`` includes ``cachedContentTokenCount``;
  ``thoughtsTokenCount`` is *not* part of ``candidatesTokenCount``, so output
  is their sum. Gemini's JSON is proto3, which omits a zero field: inside a
  ``usageMetadata`` a missing count is 0, not unreported. No cache write (NULL).

A figure the provider did not send is ``None`` (not reported), never 0; a
contradiction (cached tokens above the prompt) makes the figures it touches
``None`` too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from typing import Any

import orjson

from tackroom.redact import redact_text

MAX_EVENT_BYTES = 16 * 1024 * 1024
"""An SSE event longer than this is not parsed (the stream still passes through whole)."""

TERMINAL = {
    "anthropic-messages": {"message_stop"},
    "openai-responses": {"response.completed", "response.incomplete"},
}
FAILED = {"error", "response.failed"}
_MARKS: tuple[bytes, ...] = (b"usage", b"message_stop", b"error", b"finishReason")
_MARKS += (b"response.completed", b"response.incomplete", b"response.failed")
_MARKERS = re.compile(b"|".join(re.escape(mark) for mark in _MARKS))
"""Bytes without which an SSE event cannot carry usage, an ending or an error."""
_MODEL_MARKS = (b'"model', b"modelVersion")
"""Bytes without which an SSE event cannot name its model."""
_WELL_SHAPED = re.compile(rb"data:[ \t\x0b\x0c\r]*\{[^\n]*\}[ \t\x0b\x0c\r]*\n")
"""One data field on one line holding ``{...}``: a payload whose shape needs no closer look."""


@dataclass(frozen=True)
class CallUsage:
    """Token figures of one call in tackroom's convention; ``None`` is not reported (or contradictory)."""

    input_uncached: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None
    output: int | None = None
    reasoning: int | None = None

    def as_dict(self) -> dict[str, int | None]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


USAGE_FIGURES = tuple(f.name for f in fields(CallUsage))


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _sub(total: int | None, *parts: int | None) -> int | None:
    if total is None or any(p is None for p in parts):
        return None
    left = total - sum(p for p in parts if p is not None)
    return left if left >= 0 else None


def anthropic_usage(raw: dict[str, Any]) -> CallUsage:
    return CallUsage(
        input_uncached=_count(raw.get("input_tokens")),
        cache_read=_count(raw.get("cache_read_input_tokens")),
        cache_write=_count(raw.get("cache_creation_input_tokens")),
        output=_count(raw.get("output_tokens")),
    )


def openai_usage(raw: dict[str, Any]) -> CallUsage:
    """Responses (``input_tokens``) or Chat Completions (``prompt_tokens``) usage."""
    chat = "prompt_tokens" in raw
    total = _count(raw.get("prompt_tokens" if chat else "input_tokens"))
    details = raw.get("prompt_tokens_details" if chat else "input_tokens_details")
    details = details if isinstance(details, dict) else {}
    out_details = raw.get("completion_tokens_details" if chat else "output_tokens_details")
    out_details = out_details if isinstance(out_details, dict) else {}
    cached = _count(details.get("cached_tokens"))
    written = _count(details.get("cache_write_tokens")) if "cache_write_tokens" in details else None
    uncached = _sub(total, cached, written) if "cache_write_tokens" in details else _sub(total, cached)
    contradicted = uncached is None and total is not None and cached is not None
    return CallUsage(
        input_uncached=uncached,
        cache_read=None if contradicted else cached,
        cache_write=None if contradicted else written,
        output=_count(raw.get("completion_tokens" if chat else "output_tokens")),
        reasoning=_count(out_details.get("reasoning_tokens")),
    )


def gemini_usage(raw: dict[str, Any]) -> CallUsage:
    def count(name: str) -> int | None:
        return _count(raw.get(name, 0))  # proto3 JSON omits a zero count

    prompt, cached = count("promptTokenCount"), count("cachedContentTokenCount")
    candidates, thoughts = count("candidatesTokenCount"), count("thoughtsTokenCount")
    uncached = _sub(prompt, cached)
    return CallUsage(
        input_uncached=uncached,
        cache_read=cached if uncached is not None else None,
        cache_write=None,
        output=None if candidates is None or thoughts is None else candidates + thoughts,
        reasoning=thoughts,
    )


@dataclass(frozen=True)
class Captured:
    """What a finished call's answer said."""

    model_served: str | None
    usage: CallUsage
    usage_raw: dict[str, Any] | None
    complete: bool
    reason: str | None


class Capture:
    """Reads a copy of one answer as it passes: SSE event by event, or JSON whole at the end."""

    def __init__(self, wire: str | None, *, keep_bytes: int) -> None:
        self.wire = wire
        self.keep_bytes = keep_bytes
        self.sse = False
        self.kept = bytearray()
        self.total = 0
        self.truncated = False
        self.model: str | None = None
        self._raw: dict[str, Any] = {}
        self._pending = b""
        self._terminal = False
        self._problem: str | None = None
        self._skipping = False

    def start(self, content_type: str) -> None:
        self.sse = content_type.split(";")[0].strip().lower() == "text/event-stream"

    def feed(self, chunk: bytes) -> None:
        """Keep a copy of ``chunk``; an answer is parsed from its copy at :meth:`finish` (off the stream's
        path), or, past ``keep_bytes``, chunk by chunk from there on."""
        self.total += len(chunk)
        room = self.keep_bytes - len(self.kept)
        if len(chunk) <= room:
            self.kept += chunk
            return
        if not self.truncated:
            self.truncated = True
            self.kept += chunk[: max(room, 0)]
            if self.sse and self.wire is not None:
                self._feed_sse(bytes(self.kept))  # what was kept so far; the rest is read as it comes
            chunk = chunk[max(room, 0) :]
        if self.sse and self.wire is not None:
            self._feed_sse(chunk)

    def finish(self, status: int, clean: bool, failure: str | None = None) -> Captured:
        """The call's record: ``clean`` says the upstream answer arrived to its end."""
        if self.sse and self.wire is not None and not self.truncated and self.kept:
            self._scan(bytes(self.kept))
        if self.sse and self._pending.strip() and clean:
            self._event(self._pending)  # a last event without its blank line
            self._pending = b""
        if not self.sse and self.wire is not None and 200 <= status < 300 and clean:
            self._whole()
        reason = failure
        if self._problem and status < 300:
            # What was wrong with the answer came first: a client meeting a malformed event hangs up.
            reason = self._problem if failure is None else f"{self._problem}; then {failure}"
        elif reason is None and self.sse and status < 300 and not self._terminal:
            reason = "the stream ended before its final event"
        return Captured(self.model, self._usage(), self._raw or None, reason is None, reason)

    def _usage(self) -> CallUsage:
        if not self._raw:
            return CallUsage()
        if self.wire == "anthropic-messages":
            return anthropic_usage(self._raw)
        if self.wire == "gemini":
            return gemini_usage(self._raw)
        return openai_usage(self._raw)

    # --- SSE ------------------------------------------------------------------------------

    def _feed_sse(self, chunk: bytes) -> None:
        data = self._pending + chunk if self._pending else chunk
        data = data.replace(b"\r\n", b"\n") if b"\r" in data else data
        *events, rest = data.split(b"\n\n")
        for event in events:
            if self._skipping:
                self._skipping = False  # the end of an oversized event
                continue
            self._event(event)
        if len(rest) > MAX_EVENT_BYTES:
            self._problem = self._problem or f"an SSE event over {MAX_EVENT_BYTES} bytes was not read"
            self._skipping, rest = True, b""
        self._pending = rest

    def _scan(self, data: bytes) -> None:
        """A whole kept stream at once: found by a few byte searches, only the events :meth:`_event`
        would not pass over are read (usage, the model while unknown, an ending, an error). Reading
        every event in turn finds the same (a test holds the two to each other); it is what is done
        when a data field is not one line holding ``{...}``, whose payload's shape must be checked."""
        data = data.replace(b"\r\n", b"\n") if b"\r" in data else data
        last = data.rfind(b"\n\n")
        cut = last + 2 if last >= 0 else 0  # the events end there; what follows is the last, unfinished one
        if len(data) > MAX_EVENT_BYTES or data.count(b"data:", 0, cut) != len(
            _WELL_SHAPED.findall(data, 0, cut)
        ):
            self._feed_sse(data)
            return
        marks = {mark: data.find(mark, 0, cut) for mark in (*_MARKS, b"[DONE]", *_MODEL_MARKS)}
        at = 0
        while True:
            first = -1
            for mark, found in marks.items():
                if 0 <= found < at:
                    found = marks[mark] = data.find(mark, at, cut)
                wanted = self.model is None or mark not in _MODEL_MARKS
                if wanted and found >= 0 and (first < 0 or found < first):
                    first = found
            if first < 0:
                break
            before = data.rfind(b"\n\n", 0, first)
            end = data.find(b"\n\n", first)
            self._event(data[before + 2 if before >= 0 else 0 : end])
            at = end + 2
        self._pending = data[cut:]

    def _event(self, event: bytes) -> None:
        start = event.find(b"data:")
        if start < 0:
            return  # a comment or a keep-alive
        if event.find(b"\ndata:", start) < 0:  # one data line: the usual case
            end = event.find(b"\n", start)
            payload = event[start + 5 : end if end >= 0 else len(event)].strip()
        else:
            lines = [line[5:].lstrip(b" ") for line in event.split(b"\n") if line.startswith(b"data:")]
            payload = b"\n".join(lines).strip()
        if payload == b"[DONE]":
            self._terminal = True
            return
        if not self._telling(payload):
            # A delta that carries no usage, model or ending: only its shape is checked (parsing every
            # delta would cost the stream more than the rest of the proxy).
            if not (payload.startswith(b"{") and payload.endswith(b"}")):
                self._problem = self._problem or f"malformed SSE event (not JSON): {_excerpt(payload)}"
            return
        try:
            value = orjson.loads(payload)
        except orjson.JSONDecodeError:
            self._problem = self._problem or f"malformed SSE event (not JSON): {_excerpt(payload)}"
            return
        if isinstance(value, dict):
            self._read(value)
        else:
            self._problem = self._problem or f"malformed SSE event (not an object): {_excerpt(payload)}"

    def _telling(self, payload: bytes) -> bool:
        """Whether an event may say something the capture needs (cheap: a substring test)."""
        if self.model is None and any(mark in payload for mark in _MODEL_MARKS):
            return True
        return _MARKERS.search(payload) is not None

    def _read(self, value: dict[str, Any]) -> None:
        kind = value.get("type")
        if self.wire == "anthropic-messages":
            message = value.get("message")
            if kind == "message_start" and isinstance(message, dict):
                self._model(message.get("model"))
                self._merge(message.get("usage"))
            elif kind == "message_delta":
                self._merge(value.get("usage"))
        elif self.wire == "openai-responses":
            response = value.get("response")
            if isinstance(response, dict):
                self._model(response.get("model"))
                self._merge(response.get("usage"))
        elif self.wire == "openai-chat":
            self._model(value.get("model"))
            self._merge(value.get("usage"))
        elif self.wire == "gemini":
            self._gemini(value)
        if isinstance(kind, str):
            if kind in TERMINAL.get(self.wire or "", ()):
                self._terminal = True
            elif kind in FAILED:
                self._problem = (
                    self._problem or f"the stream reported an error: {_excerpt(orjson.dumps(value))}"
                )
        elif "error" in value and self.wire in ("openai-chat", "gemini"):
            self._problem = self._problem or f"the stream reported an error: {_excerpt(orjson.dumps(value))}"

    def _gemini(self, value: dict[str, Any]) -> None:
        self._model(value.get("modelVersion"))
        if isinstance(value.get("usageMetadata"), dict):
            self._raw = dict(value["usageMetadata"])  # each chunk's counts are the running total
        candidates = value.get("candidates")
        for candidate in candidates if isinstance(candidates, list) else ():
            if isinstance(candidate, dict) and candidate.get("finishReason"):
                self._terminal = True

    def _model(self, value: Any) -> None:
        if isinstance(value, str) and value and self.model is None:
            self.model = value

    def _merge(self, usage: Any) -> None:
        if isinstance(usage, dict):
            self._raw.update(usage)  # a later event's figure (the final output count) wins

    # --- a whole JSON answer ----------------------------------------------------------------

    def _whole(self) -> None:
        if self.truncated:
            self._problem = f"the answer is over {self.keep_bytes} bytes: its usage was not read"
            return
        try:
            value = orjson.loads(bytes(self.kept))
        except orjson.JSONDecodeError:
            self._problem = f"the answer is not JSON: {_excerpt(bytes(self.kept))}"
            return
        if isinstance(value, list):  # Gemini's streamGenerateContent without alt=sse: a JSON array
            for item in value:
                if isinstance(item, dict):
                    self._gemini(item)
            return
        if not isinstance(value, dict):
            self._problem = "the answer is not a JSON object"
            return
        if self.wire == "gemini":
            self._gemini(value)
        elif self.wire == "openai-responses" and isinstance(value.get("response"), dict):
            self._read(value)
        else:
            self._model(value.get("model"))
            self._merge(value.get("usage"))


def _excerpt(data: bytes, limit: int = 120) -> str:
    text = data[:limit].decode("utf-8", "replace")
    return redact_text(text + ("..." if len(data) > limit else ""))
