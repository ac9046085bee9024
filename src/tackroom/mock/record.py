"""What the mock saw: every request, credentials redacted, kept in memory and optionally as JSON lines.

Credentials never reach a record: secret headers are replaced by
:data:`REDACTED`, and so are credentials in the request path (``?key=``,
``user:pass@``) and in any other header value, before the record is kept or
logged.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

from tackroom.redact import REDACTED as REDACTED
from tackroom.redact import is_secret_header, redact_text

# Keys holding what reached the model, per wire: Anthropic system/messages, Chat
# messages, Responses instructions/input, Gemini contents/systemInstruction.
_CONVERSATION_KEYS = ("system", "instructions", "systemInstruction", "messages", "input", "contents")
# Structural strings inside the conversation that are not text the model reads.
_STRUCTURAL_KEYS = frozenset(
    {
        *("role", "type", "id", "call_id", "tool_use_id", "status", "namespace"),
        *("signature", "thoughtSignature", "encrypted_content", "cache_control"),
        *("mimeType", "mime_type", "media_type"),
    }
)


def redact(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Headers by lower-case name, secret-looking values replaced by :data:`REDACTED`."""
    out: dict[str, str] = {}
    for name, value in headers:
        key = name.lower()
        shown = REDACTED if is_secret_header(key) else redact_text(value)
        out[key] = f"{out[key]}, {shown}" if key in out else shown
    return out


@dataclass
class RecordedRequest:
    """One request the mock received and what it answered."""

    seq: int
    method: str
    path: str
    """Path with query string, as sent."""
    headers: dict[str, str]
    body: Any
    """Parsed JSON body; the raw text when it was not JSON; None when empty."""
    wire: str | None
    turn: int | None
    """Script turn index answered; None for side calls outside the conversation."""
    answer: dict[str, Any]
    streamed: bool
    received_at: float
    """Wall-clock time (``time.time()``) the request line arrived."""
    latency_s: float | None = field(default=None)
    """Seconds from request received to last byte written; set when the answer is done."""
    auth: str | None = field(default=None)
    """The form of the credential a model call carried (``api-key``, ``bearer``, ``oauth``; None:
    none, or no model call): the form only, never the value."""

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)


def conversation_texts(body: Any) -> Iterator[str]:
    """Every text string in the conversation fields of a request body."""
    if isinstance(body, dict):
        for key in _CONVERSATION_KEYS:
            yield from _strings(body.get(key), skip=_STRUCTURAL_KEYS)


def all_strings(value: Any) -> Iterator[str]:
    """Every string anywhere in a JSON value, tool descriptions included."""
    yield from _strings(value, skip=frozenset())


def _strings(value: Any, skip: frozenset[str]) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item, skip)
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in skip:
                yield from _strings(item, skip)


class Recorder:
    """Thread-safe list of requests, mirrored to a JSON-lines file as each one arrives."""

    def __init__(self, log_path: Path | None) -> None:
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._log_path = log_path
        self._log: IO[str] | None = None

    def open(self) -> None:
        """Open the log file for appending, if one was asked for."""
        if self._log_path is not None and self._log is None:
            self._log = self._log_path.open("a", encoding="utf-8")

    def close(self) -> None:
        """Close the log file."""
        with self._lock:
            if self._log is not None:
                self._log.close()
                self._log = None

    def add(self, request: RecordedRequest) -> None:
        """Keep a request and append it to the log now, before it is answered (a hang still shows)."""
        request.path = redact_text(request.path)
        with self._lock:
            request.seq = len(self._requests)
            self._requests.append(request)
            if self._log is not None:
                self._log.write(json.dumps(request.to_json(), ensure_ascii=False, default=str) + "\n")
                self._log.flush()

    def snapshot(self) -> list[RecordedRequest]:
        """The requests so far, oldest first."""
        with self._lock:
            return list(self._requests)
