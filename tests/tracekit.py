"""What the transcript readers' tests ask of a read: its usage events, its one session."""

from __future__ import annotations

from typing import Any

from tackroom.trace.events import UsageReport
from tackroom.trace.model import SessionMeta, TraceEvent, TraceItem


def usage_reports(items: list[TraceItem]) -> list[TraceEvent]:
    """The usage reports among a read's items."""
    return [i for i in items if isinstance(i, TraceEvent) and isinstance(i.event, UsageReport)]


def the_session(items: list[TraceItem]) -> SessionMeta:
    """The one session a read found (an error if it found none or several)."""
    (meta,) = [i for i in items if isinstance(i, SessionMeta)]
    return meta


CLAUDE_LINE: dict[str, Any] = {
    "type": "assistant",
    "sessionId": "s-1",
    "timestamp": "2026-12-01T10:00:00Z",
    "cwd": "/work",
    "message": {
        "id": "m-1",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "hi"}],
        "usage": {"input_tokens": 10, "output_tokens": 2},
    },
}
"""One assistant line of a Claude Code session log: session s-1, 10 tokens in and 2 out."""
