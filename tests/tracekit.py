"""What the transcript readers' tests ask of a read: its usage events, its one session."""

from __future__ import annotations

from tackroom.trace.events import UsageReport
from tackroom.trace.model import SessionMeta, TraceEvent, TraceItem


def usage_reports(items: list[TraceItem]) -> list[TraceEvent]:
    """The usage reports among a read's items."""
    return [i for i in items if isinstance(i, TraceEvent) and isinstance(i.event, UsageReport)]


def the_session(items: list[TraceItem]) -> SessionMeta:
    """The one session a read found (an error if it found none or several)."""
    (meta,) = [i for i in items if isinstance(i, SessionMeta)]
    return meta
