"""Which run a session belongs to, and the sessions a run produced.

A session belongs to a run when it came from that run's isolated home (its
log is under ``runs/<id>/home``): that is certain. A session in the user's
real home belongs to a run of the same harness when its working directory is
the run's and it started inside the run's window (from start to end, with
:data:`SLACK_S` either side for clocks and flushes). A session two runs could
both claim is *ambiguous* and names both; it is never given to one of them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tackroom.trace.discover import Root, home_roots, run_roots, walk
from tackroom.trace.model import Cursor, SessionMeta, Trace, TraceEvent, TraceIssue

if TYPE_CHECKING:
    from tackroom.adapters.adapter import Adapter

SLACK_S = 2.0
"""Seconds either side of a run's window in which its harness may have stamped its session."""
MAX_SESSIONS = 64
"""The most sessions one run's result carries (a run's home is small; a hostile one is not)."""


@dataclass(frozen=True)
class RunWindow:
    """When and where one run ran, as its ``result.json`` says."""

    run_id: str
    adapter: str
    workdir: str
    start: datetime
    end: datetime
    isolated: bool


@dataclass(frozen=True)
class Attribution:
    """Whose a session is: one run, none, or several that could claim it."""

    run_id: str | None
    candidates: tuple[str, ...] = ()
    """Every run that could claim it; more than one means ambiguous (``run_id`` is then None)."""
    reason: str = ""

    @property
    def ambiguous(self) -> bool:
        return len(self.candidates) > 1

    def to_json(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "candidates": list(self.candidates), "reason": self.reason}


def moment(text: str | None) -> datetime | None:
    """An ISO 8601 instant (``Z`` or an offset); None for anything else (a naive time is not an instant)."""
    if not text:
        return None
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        return None
    return value if value.tzinfo is not None else None


def windows(records: Iterable[Any]) -> list[RunWindow]:
    """The windows of runs whose ``result.json`` records where and when they ran."""
    found = []
    for record in records:
        result = record.result or {}
        start = moment(result.get("started_at"))
        workdir = result.get("workdir")
        duration = result.get("duration_s")
        if start is None or not isinstance(workdir, str) or not isinstance(duration, int | float):
            continue
        found.append(
            RunWindow(
                record.id,
                str(result.get("adapter")),
                workdir,
                start,
                start + timedelta(seconds=float(duration)),
                result.get("home") != "real",
            )
        )
    return found


def attribute(harness: str, meta: SessionMeta, run_id: str | None, runs: Iterable[RunWindow]) -> Attribution:
    """Whose session ``meta`` (of ``harness``; found in run ``run_id``'s home, if it was) is."""
    if run_id is not None:
        return Attribution(run_id, (run_id,), "found in the run's isolated home")
    started = moment(meta.started)
    if started is None or meta.cwd is None:
        return Attribution(None, (), "the log says no start time or working directory")
    slack = timedelta(seconds=SLACK_S)
    candidates = tuple(
        sorted(
            w.run_id
            for w in runs
            if w.adapter == harness
            and not w.isolated
            and _same_dir(w.workdir, meta.cwd)
            and w.start - slack <= started <= w.end + slack
        )
    )
    if len(candidates) == 1:
        return Attribution(candidates[0], candidates, "same working directory, started inside the run")
    if candidates:
        return Attribution(None, candidates, f"{len(candidates)} runs in that directory overlap its start")
    return Attribution(None, (), "no run of this harness ran in that directory then")


def _same_dir(a: str, b: str) -> bool:
    return a == b or os.path.realpath(a) == os.path.realpath(b)


@dataclass
class RunTraces:
    """The sessions one run produced, read from its harness's logs."""

    traces: list[Trace] = field(default_factory=list)
    ambiguous: list[Attribution] = field(default_factory=list)
    """Sessions in the real home that this run and another could both claim (not included)."""
    issues: list[TraceIssue] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "sessions": [_summary(trace) for trace in self.traces],
            "ambiguous": [a.to_json() for a in self.ambiguous],
            "issues": [str(issue) for issue in self.issues[:20]],
        }


def _summary(trace: Trace) -> dict[str, Any]:
    from tackroom.trace.events import Usage, UsageReport

    calls: dict[str, Usage] = {}
    unkeyed = Usage()
    for item in trace.events:
        if isinstance(item.event, UsageReport):
            if item.key is None:
                unkeyed = unkeyed + item.event.usage
            else:
                calls[item.key] = item.event.usage
    total = sum(calls.values(), unkeyed)
    return {
        **trace.meta.to_json(),
        "sources": [str(p) for p in trace.sources],
        "events": len(trace.events),
        "model_calls": len(calls) + (1 if unkeyed.reported else 0),
        "usage": total.to_json(),
    }


def run_traces(
    adapter: Adapter,
    run_dir: Path,
    *,
    workdir: Path,
    isolated: bool,
    started: datetime,
    ended: datetime,
    env: Mapping[str, str],
    home: Path,
    others: Iterable[RunWindow] = (),
) -> RunTraces:
    """Read the sessions a run produced: all of its isolated home's, or the real home's it can claim."""
    from tackroom.families import get_family

    found = RunTraces()
    if not adapter.effective.get("transcripts"):
        return found
    roots: list[Root] = (
        run_roots(adapter, run_dir, workdir) if isolated else home_roots(adapter, env, home, workdir)
    )
    window = RunWindow(run_dir.name, adapter.name, str(workdir), started, ended, isolated=False)
    since_ns = int((started - timedelta(seconds=SLACK_S)).timestamp() * 1e9)
    issues: list[TraceIssue] = []
    # Untouched since before the run started: none of its sessions.
    sources = [s for root in roots for s in walk(root, issues) if isolated or s.mtime_ns >= since_ns]
    if not sources and not issues:
        return found  # nothing to read: the family's reader (and what it imports) is not even loaded
    reader = get_family(adapter.family).transcripts()
    if reader is None:
        return found
    found.issues += issues
    sessions: dict[str, Trace] = {}
    for source in sources:
        for item in reader.read(source.path, Cursor()):
            if isinstance(item, TraceIssue):
                found.issues.append(item)
                continue
            session = item.session_id
            trace = sessions.get(session)
            if trace is None:
                if len(sessions) >= MAX_SESSIONS:
                    continue
                trace = sessions[session] = Trace(adapter.name, SessionMeta(session))
            if source.path not in trace.sources:
                trace.sources.append(source.path)
            if isinstance(item, TraceEvent):
                trace.events.append(item)
            else:
                from tackroom.trace.index import merge_meta

                trace.meta = merge_meta(trace.meta, item)
    for trace in sessions.values():
        if not isolated:
            claim = attribute(adapter.name, trace.meta, None, [window, *others])
            if claim.ambiguous:
                found.ambiguous.append(
                    Attribution(None, claim.candidates, f"{trace.session_id}: {claim.reason}")
                )
                continue
            if claim.run_id != window.run_id:
                continue
        found.traces.append(trace)
    found.traces.sort(key=lambda t: (t.meta.parent_id is not None, t.meta.started or "", t.session_id))
    return found
