"""Read one HTTP request body from a client nobody vouched for, with bounded memory.

Everything a client sends is hostile until parsed: the framing (Content-Length,
chunked transfer coding), the content coding (gzip, deflate) and the JSON. A
request the mock cannot read becomes a :class:`Rejected` with the 4xx status
that says why (400 bad framing or JSON, 408 too slow, 411 no length, 413 too
large, 415 unknown coding), so the server can always answer and record it.
"""

from __future__ import annotations

import json
import re
import zlib
from email.message import Message
from typing import Any, Protocol

MAX_BODY_BYTES = 32 * 1024 * 1024
"""The largest body read, before and after decompression (a real harness sends a few MB at most)."""
MAX_JSON_DEPTH = 128
"""The deepest JSON nesting accepted (real requests, tool schemas included, stay far below)."""

_MAX_LINE = 1024
"""Longest chunk-size or trailer line."""
_MAX_TRAILERS = 64
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
_DIGITS = re.compile(r"[0-9]+")
_HEX = re.compile(rb"[0-9A-Fa-f]{1,16}")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class Readable(Protocol):
    """The part of a buffered socket file the reader uses."""

    def read(self, size: int = -1, /) -> bytes: ...

    def readline(self, size: int | None = -1, /) -> bytes: ...


class Rejected(Exception):
    """A request the mock will not serve: its HTTP status and the reason, for the answer and the log."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def read_body(rfile: Readable, headers: Message, method: str) -> bytes:
    """The decoded body of one request, read exactly as its framing says (or :class:`Rejected`)."""
    codings = [c.strip().lower() for c in ",".join(headers.get_all("Transfer-Encoding") or []).split(",")]
    codings = [c for c in codings if c]
    lengths = headers.get_all("Content-Length") or []
    if codings:
        if codings != ["chunked"]:
            raise Rejected(400, f"unsupported Transfer-Encoding {', '.join(codings)!r}; only chunked")
        raw = _read_chunked(rfile)
    elif lengths:
        raw = _read_exactly(rfile, content_length(lengths))
    elif method in _BODY_METHODS:
        raise Rejected(411, f"a {method} needs Content-Length or Transfer-Encoding: chunked")
    else:
        return b""
    return decode(raw, headers.get("Content-Encoding", ""))


def content_length(values: list[str]) -> int:
    """The one length all Content-Length headers agree on (RFC 9112 6.3), bounded."""
    found = {part.strip() for value in values for part in value.split(",")}
    if len(found) != 1 or not _DIGITS.fullmatch(next(iter(found))):
        shown = ", ".join(values)[:60]
        raise Rejected(400, f"bad Content-Length {shown!r}: one non-negative integer")
    digits = found.pop()
    # Compared as text first: int() of thousands of digits is slow (and refused past 4,300).
    length = int(digits) if len(digits) <= 20 else MAX_BODY_BYTES + 1
    if length > MAX_BODY_BYTES:
        raise Rejected(413, f"body of {length} bytes is larger than the mock's {MAX_BODY_BYTES}")
    return length


def _read_exactly(rfile: Readable, length: int) -> bytes:
    data = rfile.read(length)
    if len(data) < length:
        raise Rejected(400, f"body ended after {len(data)} of the {length} bytes announced")
    return data


def _read_chunked(rfile: Readable) -> bytes:
    parts: list[bytes] = []
    total = 0
    while size := _chunk_size(_line(rfile, "chunk size")):
        total += size
        if total > MAX_BODY_BYTES:
            raise Rejected(413, f"chunked body is larger than the mock's {MAX_BODY_BYTES} bytes")
        parts.append(_read_exactly(rfile, size))
        if _line(rfile, "chunk end") not in (b"\r\n", b"\n"):
            raise Rejected(400, "a chunk is longer than its size line says")
    for _ in range(_MAX_TRAILERS):
        if _line(rfile, "trailer") in (b"\r\n", b"\n"):
            return b"".join(parts)
    raise Rejected(400, f"more than {_MAX_TRAILERS} trailer lines")


def _line(rfile: Readable, what: str) -> bytes:
    line = rfile.readline(_MAX_LINE + 1)
    if not line.endswith(b"\n"):
        problem = "is longer than 1024 bytes" if len(line) > _MAX_LINE else "is missing (body cut short)"
        raise Rejected(400, f"{what} line {problem}")
    return line


def _chunk_size(line: bytes) -> int:
    digits = line.split(b";", 1)[0].strip()
    if not _HEX.fullmatch(digits):
        raise Rejected(400, f"bad chunk size {digits[:40]!r}: hexadecimal digits")
    return int(digits, 16)


def decode(raw: bytes, encoding: str) -> bytes:
    """Undo the Content-Encoding, never inflating past :data:`MAX_BODY_BYTES` (a gzip bomb is a 413)."""
    coding = encoding.strip().lower()
    if coding in ("", "identity"):
        return raw
    if coding not in ("gzip", "x-gzip", "deflate"):
        raise Rejected(415, f"unsupported Content-Encoding {encoding[:40]!r}; gzip, deflate or none")
    inflater = zlib.decompressobj(31 if "gzip" in coding else 15)
    try:
        data = inflater.decompress(raw, MAX_BODY_BYTES + 1)
    except zlib.error as exc:
        raise Rejected(400, f"body is not valid {coding}: {exc}") from exc
    if len(data) > MAX_BODY_BYTES:
        raise Rejected(413, f"{coding} body inflates past the mock's {MAX_BODY_BYTES} bytes")
    if not inflater.eof or inflater.unused_data:
        raise Rejected(400, f"{coding} body is cut short or has trailing bytes")
    return data


def parse_json(raw: bytes) -> Any:
    """The body as JSON (text when it is not JSON, None when empty), safe to record and to answer.

    An escaped lone surrogate (``"\\ud83d"``) parses into a str that no UTF-8
    encoder can write, so the log line and the answer would crash: each one
    becomes U+FFFD. Nesting past :data:`MAX_JSON_DEPTH` is a 400.
    """
    if not raw:
        return None
    text = raw.decode("utf-8", errors="replace")
    try:
        data = json.loads(text)
    except RecursionError as exc:
        raise Rejected(400, f"JSON nested more than {MAX_JSON_DEPTH} levels") from exc
    except ValueError:
        return text
    return _cleaned(data)


def _cleaned(data: Any) -> Any:
    """``data`` with lone surrogates replaced, walked with a stack (never recursion) and depth-checked."""
    root = [data]
    stack: list[tuple[list[Any] | dict[str, Any], int]] = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            raise Rejected(400, f"JSON nested more than {MAX_JSON_DEPTH} levels")
        children = _clean_list(node) if isinstance(node, list) else _clean_dict(node)
        stack.extend((child, depth + 1) for child in children)
    return root[0]


def _clean_list(node: list[Any]) -> list[Any]:
    children = []
    for index, value in enumerate(node):
        if isinstance(value, str):
            node[index] = _LONE_SURROGATE.sub("\ufffd", value)
        elif isinstance(value, list | dict):
            children.append(value)
    return children


def _clean_dict(node: dict[str, Any]) -> list[Any]:
    items = list(node.items())
    node.clear()
    children = []
    for key, value in items:
        if isinstance(value, str):
            value = _LONE_SURROGATE.sub("\ufffd", value)
        elif isinstance(value, list | dict):
            children.append(value)
        node[_LONE_SURROGATE.sub("\ufffd", key)] = value
    return children
