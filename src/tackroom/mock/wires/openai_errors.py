"""The error body both OpenAI wires share."""

from __future__ import annotations

from typing import Any

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_exceeded",
}


def openai_error(status: int, message: str) -> dict[str, Any]:
    """OpenAI's ``{"error": {...}}`` body for an HTTP status."""
    kind = _ERROR_TYPES.get(status, "server_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": kind}}
