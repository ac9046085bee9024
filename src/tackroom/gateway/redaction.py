"""Credentials out of captured bodies: the call's own keys, any key known by its shape (typed into a
message, echoed by the upstream), and any value under a secret-named JSON key."""

from __future__ import annotations

from typing import Any

import orjson

from tackroom.redact import REDACTED, is_secret_name, redact_key_shapes, redact_text

# A JSON key that is_secret_name would catch ends its name with one of these ("max_tokens" does not).
_SECRET_WORDS = (b'key"', b'token"', b"secret", b"password", b"passwd", b"auth", b"credential", b"cookie")


def redact_body(data: bytes, secrets: frozenset[str]) -> bytes:
    """``data`` with the call's credentials, keys by their shape and values under secret-named keys hidden."""
    for secret in sorted(secrets, key=len, reverse=True):
        data = data.replace(secret.encode(), REDACTED.encode())
    data = redact_key_shapes(data)
    lowered = data.lower()
    if not any(word in lowered for word in _SECRET_WORDS):
        return data
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return redact_text(data.decode("utf-8", "replace")).encode()
    cleaned = _redact_value(value)
    return data if cleaned == value else orjson.dumps(cleaned)


def _redact_value(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: REDACTED if isinstance(v, str) and is_secret_name(str(k)) else _redact_value(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_redact_value(v) for v in value]
    return value
