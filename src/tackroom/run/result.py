"""The result of one run: what happened, in numbers that were observed, never invented."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tackroom.redact import redact_text
from tackroom.run.process import Escaped
from tackroom.trace.events import (
    AssistantText,
    ErrorEvent,
    Event,
    Finished,
    SessionStarted,
    Usage,
    UsageReport,
)

if TYPE_CHECKING:
    from tackroom.trace.attribute import RunTraces


@dataclass(frozen=True)
class Result:
    """One run of a harness: exit, timing, session, final text, usage and failure.

    :func:`tackroom.run` returns one (and writes it to the run directory's ``result.json``); it is
    ``ok`` only when everything that makes a run complete was observed:

    >>> import dataclasses, pathlib, tackroom
    >>> result = tackroom.Result(
    ...     adapter="codex", harness="codex", adapter_hash="0" * 64, argv=("codex", "exec", "fix it"),
    ...     exit_code=0, timed_out=False, duration_s=4.2, session_id="s1", final_text="Fixed.",
    ...     usage=tackroom.Usage(input=120, output=8), model_failed=False, error=None,
    ...     run_dir=pathlib.Path("runs/1"), harness_version="0.171.0",
    ... )
    >>> result.ok, result.to_json()["usage"]["cache_read"]
    (True, 'not_reported')
    >>> dataclasses.replace(result, finished=False).ok  # exited 0, but its stream never finished
    False
    """

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
    """The run's events; of a flood, the first and the last of them (see ``truncated``)."""
    stderr_tail: str = field(default="", repr=False)
    dropped: tuple[str, ...] = ()
    """Profile items the harness cannot express, by name and reason."""
    withheld: tuple[str, ...] = ()
    """What tackroom kept from the harness and why: an untrusted project's hooks, MCP servers and
    trust flags, variables outside the allowlist, credentials a mock run does not get."""
    finished: bool = True
    """The stream reached its terminal event; a run that ends without one did not complete."""
    truncated: tuple[str, ...] = ()
    """What was cut to keep memory and disk bounded, one line each (empty: nothing was)."""
    escaped: tuple[Escaped, ...] = ()
    """Processes that left the harness's process group, found after the run and stopped."""
    released: bool = False
    """The harness served a protocol (ACP) and did not exit once its client was done: tackroom stopped
    it, so its exit code is that signal's, and not a failure."""
    started_at: str | None = None
    """When the harness was started (ISO 8601, UTC)."""
    workdir: str | None = None
    home: str = "isolated"
    auth: str | None = None
    """How the harness signed in to its endpoint: ``api-key`` (a key, or the mock's dummy one),
    ``oauth`` (a subscription token or its own copied sign-in; the token itself is never kept), or
    None (no endpoint set: the harness's own defaults)."""
    """``isolated`` (the run's own home) or ``real``."""
    trace: RunTraces | None = field(default=None, repr=False)
    """The sessions the run produced, read back from the harness's own logs (None: not read)."""
    capture: Mapping[str, Any] | None = field(default=None, repr=False)
    """With ``capture=True`` or ``gateway=URL``: ``calls`` (each model call the run's gateway saw),
    their summed ``usage``, the ``reconciliation`` with the harness's own report, and ``failures``
    (None: the run was not captured; ``calls`` None: a running gateway could not give them, and
    ``failures`` says why)."""

    @property
    def ok(self) -> bool:
        """Exited 0 (or was released), in time, with its terminal event and no model failure."""
        return (
            (self.exit_code == 0 or self.released)
            and not self.timed_out
            and not self.model_failed
            and self.finished
        )

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
            "finished": self.finished,
            "error": self.error,
            "run_dir": str(self.run_dir),
            "harness_version": self.harness_version,
            "argv": [redact_text(element) for element in self.argv],
            "dropped": list(self.dropped),
            "withheld": list(self.withheld),
            "truncated": list(self.truncated),
            "escaped": [e.to_json() for e in self.escaped],
            "released": self.released,
            "started_at": self.started_at,
            "workdir": self.workdir,
            "home": self.home,
            "auth": self.auth,
            "trace": self.trace.to_json() if self.trace is not None else None,
            "capture": None if self.capture is None else dict(self.capture),
        }


def save(result: Result) -> Path:
    """Write ``result.json`` into the run directory (ASCII JSON: nothing a harness printed can break it)."""
    path = result.run_dir / "result.json"
    path.write_text(json.dumps(result.to_json(), indent=2), encoding="utf-8")
    return path


@dataclass(frozen=True)
class Summary:
    """What the event stream says, folded: the parts of a Result that come from events."""

    session_id: str | None
    final_text: str | None
    usage: Usage
    model_failed: bool
    error: str | None
    finished: bool = True
    """A :class:`Finished` event was among them."""


class Summarizer:
    """Folds events one at a time, so a run need not keep every event to know its result.

    The harness's total usage wins if it reported one, else the sum of its
    per-call usage; the final text is the last Finished's, else the last
    assistant text; the last fatal error is the run's error.
    """

    def __init__(self) -> None:
        self._session_id: str | None = None
        self._total: Usage | None = None
        self._turns = Usage()
        self._finished: Finished | None = None
        self._failed = False
        self._text: str | None = None
        self._error: str | None = None

    def add(self, event: Event) -> None:
        if isinstance(event, SessionStarted) and event.session_id and self._session_id is None:
            self._session_id = event.session_id
        elif isinstance(event, UsageReport):
            if event.scope == "total":
                self._total = event.usage
            elif event.scope == "turn":
                self._turns = self._turns + event.usage
        elif isinstance(event, Finished):
            self._finished = event
            self._failed = self._failed or not event.ok
        elif isinstance(event, AssistantText):
            self._text = event.text
        elif isinstance(event, ErrorEvent) and event.fatal:
            self._failed = True
            self._error = event.message

    def summary(self) -> Summary:
        final = self._finished.final_text if self._finished is not None else None
        return Summary(
            session_id=self._session_id,
            final_text=final if final is not None else self._text,
            usage=self._total if self._total is not None else self._turns,
            model_failed=self._failed,
            error=self._error,
            finished=self._finished is not None,
        )


def summarize(events: Iterable[Event]) -> Summary:
    """Fold events (see :class:`Summarizer`)."""
    folder = Summarizer()
    for event in events:
        folder.add(event)
    return folder.summary()
