"""The result of one run: what happened, in numbers that were observed, never invented."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tackroom.redact import redact_text
from tackroom.trace.events import (
    AssistantText,
    ErrorEvent,
    Event,
    Finished,
    SessionStarted,
    Usage,
    UsageReport,
)


@dataclass(frozen=True)
class Result:
    """One run of a harness: exit, timing, session, final text, usage and failure."""

    adapter: str
    harness: str
    adapter_hash: str
    argv: tuple[str, ...]
    exit_code: int | None
    timed_out: bool
    duration_s: float
    session_id: str | None
    final_text: str | None
    usage: Usage
    model_failed: bool
    """The model call failed, whatever the exit code (aider, qwen and pi exit 0 on failures)."""
    error: str | None
    run_dir: Path
    harness_version: str | None
    events: tuple[Event, ...] = field(default=(), repr=False)
    stderr_tail: str = field(default="", repr=False)
    dropped: tuple[str, ...] = ()
    """Profile items the harness cannot express, by name and reason."""
    withheld: tuple[str, ...] = ()
    """What tackroom kept from the harness and why: an untrusted project's hooks, MCP servers and
    trust flags, variables outside the allowlist, credentials a mock run does not get."""

    @property
    def ok(self) -> bool:
        """Exited 0, in time, with no model failure."""
        return self.exit_code == 0 and not self.timed_out and not self.model_failed

    def to_json(self) -> dict[str, Any]:
        return {
            "adapter": self.adapter,
            "harness": self.harness,
            "adapter_hash": self.adapter_hash,
            "ok": self.ok,
            "exit_code": self.exit_code,
            "timed_out": self.timed_out,
            "duration_s": round(self.duration_s, 3),
            "session_id": self.session_id,
            "final_text": self.final_text,
            "usage": self.usage.to_json(),
            "model_failed": self.model_failed,
            "error": self.error,
            "run_dir": str(self.run_dir),
            "harness_version": self.harness_version,
            "argv": [redact_text(element) for element in self.argv],
            "dropped": list(self.dropped),
            "withheld": list(self.withheld),
        }


@dataclass(frozen=True)
class Summary:
    """What the event stream says, folded: the parts of a Result that come from events."""

    session_id: str | None
    final_text: str | None
    usage: Usage
    model_failed: bool
    error: str | None


def summarize(events: Sequence[Event]) -> Summary:
    """Fold events: the harness's total usage if it reported one, else the sum of its per-call usage."""
    session_id = next((e.session_id for e in events if isinstance(e, SessionStarted) and e.session_id), None)
    totals = [e.usage for e in events if isinstance(e, UsageReport) and e.scope == "total"]
    turns = [e.usage for e in events if isinstance(e, UsageReport) and e.scope == "turn"]
    usage = totals[-1] if totals else sum(turns, Usage())
    finished = [e for e in events if isinstance(e, Finished)]
    final_text = finished[-1].final_text if finished and finished[-1].final_text is not None else None
    if final_text is None:
        texts = [e.text for e in events if isinstance(e, AssistantText)]
        final_text = texts[-1] if texts else None
    fatal = [e for e in events if isinstance(e, ErrorEvent) and e.fatal]
    failed = bool(fatal) or any(not e.ok for e in finished)
    error = fatal[-1].message if fatal else None
    return Summary(session_id, final_text, usage, failed, error)
