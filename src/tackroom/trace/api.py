"""The traces API: find every harness's session logs, keep the index current, report usage, read a session.

::

    import tackroom

    report = tackroom.usage("daily", harness="claude-code", timezone="UTC")
    for session in tackroom.list_sessions(harness="codex"):
        print(session.session_id, session.started)
    trace = tackroom.read_trace("4f1c...")      # events, subagents, usage per call

Every function scans first (only what changed since the last scan is read),
unless ``scan=False``. Logs are looked for in the user's home (``home``,
default ``$HOME``; the relocation variables of ``env``, default the process
environment) and in every run directory's isolated home.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from tackroom.errors import TraceError
from tackroom.prices import PriceBook
from tackroom.state.db import StateDB
from tackroom.trace.discover import Source, all_roots, transcripts, walk
from tackroom.trace.index import Progress, ScanReport, TraceIndex, merge_meta
from tackroom.trace.model import Cursor, SessionMeta, Trace, TraceEvent, TraceIssue
from tackroom.trace.shortcut import trees
from tackroom.trace.usage import Group, UsageOptions, usage_report

MAX_DEPTH = 8
"""Subagents of subagents are read this deep, no deeper (a log can claim any parent)."""


@dataclass(frozen=True)
class SessionInfo:
    """One session as the index knows it (``tackroom trace list``); :func:`list_sessions` gives them.

    >>> import pathlib, tackroom
    >>> meta = tackroom.SessionMeta("s1", started="2026-12-01T10:00:00Z", models=["claude-sonnet-4-5"])
    >>> info = tackroom.SessionInfo("claude-code", meta, paths=(pathlib.Path("s1.jsonl"),), run_id=None)
    >>> info.session_id, info.to_json()["paths"], info.to_json()["run_id"]
    ('s1', ['s1.jsonl'], None)
    """

    harness: str
    meta: SessionMeta
    paths: tuple[Path, ...]
    """The files holding it (a resumed session may go on in another)."""
    run_id: str | None
    """The run it belongs to: whose isolated home held it, or (see :mod:`~tackroom.trace.attribute`) the
    one run that ran in its directory when it started."""
    candidates: tuple[str, ...] = ()
    """Runs that could each claim it, when more than one could (then ``run_id`` is None)."""

    @property
    def session_id(self) -> str:
        return self.meta.session_id

    def to_json(self) -> dict[str, Any]:
        return {
            "harness": self.harness,
            **self.meta.to_json(),
            "paths": [str(p) for p in self.paths],
            "run_id": self.run_id,
            "run_candidates": list(self.candidates),
        }


@dataclass(frozen=True)
class Where:
    """Where to look: the environment and home to expand roots with, and which roots."""

    env: Mapping[str, str]
    home: Path
    workdir: Path
    runs: bool = True
    real: bool = True

    @classmethod
    def of(
        cls,
        env: Mapping[str, str] | None = None,
        home: Path | None = None,
        workdir: Path | None = None,
        runs: bool = True,
        real: bool = True,
    ) -> Where:
        env = dict(os.environ if env is None else env)
        home = home or Path(env.get("HOME") or Path.home())
        return cls(env, home, workdir or Path.cwd(), runs, real)


def _index(env: Mapping[str, str], db: StateDB | None) -> TraceIndex:
    return TraceIndex(db or StateDB.default(env))


def scan(
    *,
    harness: str | None = None,
    where: Where | None = None,
    db: StateDB | None = None,
    jobs: int | None = None,
    progress: Progress | None = None,
    released: Callable[[], None] | None = None,
) -> ScanReport:
    """Bring the index up to date with the logs on disk; return what was read (``released``: see
    :meth:`TraceIndex.scan <tackroom.trace.index.TraceIndex.scan>`).

    >>> import json, pathlib, tackroom
    >>> log = pathlib.Path.home() / ".claude/projects/-work/s1.jsonl"  # a Claude Code session's log
    >>> log.parent.mkdir(parents=True)
    >>> call = {"id": "m1", "model": "claude-sonnet-4-5", "usage": {"input_tokens": 10, "output_tokens": 2}}
    >>> line = {"type": "assistant", "sessionId": "s1", "timestamp": "2026-12-01T10:00:00Z", "message": call}
    >>> _ = log.write_text(json.dumps(line) + "\\n")
    >>> first = tackroom.scan_traces(harness="claude-code")
    >>> again = tackroom.scan_traces(harness="claude-code")  # nothing changed: nothing read again
    >>> (first.files, first.read), (again.files, again.read)
    ((1, 1), (1, 0))
    """
    from tackroom.adapters.resolve import load_adapters

    where = where or Where.of()
    adapters = load_adapters(env=where.env)
    if harness is not None and harness not in adapters:
        raise TraceError(f"no adapter named {harness!r}: see `tackroom adapters list`")
    roots = all_roots(
        adapters,
        env=where.env,
        home=where.home,
        workdir=where.workdir,
        harness=harness,
        runs=where.runs,
        real=where.real,
    )
    issues: list[TraceIssue] = []
    sources: list[Source] = []
    walked_at = time.time_ns()
    found: list[tuple[list[list[Any]], list[Source]]] = []
    for root in roots:
        dirs: list[list[Any]] = []
        here = list(walk(root, issues, dirs))
        found.append((dirs, here))
        sources.extend(here)
    families = {root.harness: adapters[root.harness].family for root in roots}
    if harness is not None:
        families.setdefault(harness, adapters[harness].family)
    report = _index(where.env, db).scan(
        sources, families=families, jobs=jobs, progress=progress, released=released
    )
    report.issues = issues
    report.roots = [[str(root.path), root.glob, *root.sidecars] for root in roots]
    report.harnesses = sorted(families)
    report.listing, report.trees = trees(
        [(dirs, [(s.location, s.size, s.mtime_ns, s.inode) for s in here]) for dirs, here in found]
    )
    report.walked_at = walked_at
    for name in report.harnesses:
        report.templates += transcripts(adapters[name])[0]
        report.templates += [str(v) for v in adapters[name].effective.get("home", {}).values()]
    return report


def usage(
    group: Group = "daily",
    *,
    harness: str | None = None,
    since: str | None = None,
    until: str | None = None,
    timezone: str | None = None,
    cost: bool = True,
    where: Where | None = None,
    db: StateDB | None = None,
    refresh: bool = True,
    jobs: int | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """A usage report (see :mod:`tackroom.trace.usage` for its shape and rules), after a scan.

    >>> import json, pathlib, tackroom
    >>> log = pathlib.Path.home() / ".claude/projects/-work/s1.jsonl"  # a Claude Code session's log
    >>> log.parent.mkdir(parents=True)
    >>> call = {"id": "m1", "model": "claude-sonnet-4-5", "usage": {"input_tokens": 10, "output_tokens": 2}}
    >>> line = {"type": "assistant", "sessionId": "s1", "timestamp": "2026-12-01T10:00:00Z", "message": call}
    >>> _ = log.write_text(json.dumps(line) + "\\n")
    >>> report = tackroom.usage("daily", harness="claude-code", timezone="UTC", cost=False)
    >>> [(row["key"], row["input"], row["output"], row["calls"]) for row in report["rows"]]
    [('2026-12-01', 10, 2, 1)]
    >>> report["totals"]["cache_read"]  # the log said nothing of it: not counted as 0
    'not_reported'
    """
    where = where or Where.of()
    scanned = scan(harness=harness, where=where, db=db, jobs=jobs, progress=progress) if refresh else None
    options = UsageOptions(group, harness, since, until, timezone, cost)
    report = usage_report(_index(where.env, db), options)
    return with_skipped(report, scanned.issues) if scanned is not None else report


def with_skipped(report: dict[str, Any], issues: Sequence[TraceIssue]) -> dict[str, Any]:
    """``report`` with ``skipped``: the files its scan found and could not read (a FIFO, a name that is
    not UTF-8, a directory it may not list), each with its path and why, so none is left out unsaid."""
    return {**report, "skipped": skipped(issues)}


def skipped(issues: Sequence[TraceIssue]) -> list[dict[str, str]]:
    """A scan's issues (files found and not read) as JSON: each one's path and why."""
    return [{"path": str(issue.path), "why": issue.message} for issue in issues]


def list_sessions(
    *,
    harness: str | None = None,
    since: str | None = None,
    where: Where | None = None,
    db: StateDB | None = None,
    refresh: bool = True,
    progress: Progress | None = None,
) -> list[SessionInfo]:
    """Every session the index knows, oldest first (``since``: started on or after that ISO date).

    >>> import json, pathlib, tackroom
    >>> log = pathlib.Path.home() / ".claude/projects/-work/s1.jsonl"  # a Claude Code session's log
    >>> log.parent.mkdir(parents=True)
    >>> call = {"id": "m1", "model": "claude-sonnet-4-5", "usage": {"input_tokens": 10, "output_tokens": 2}}
    >>> line = {"type": "assistant", "sessionId": "s1", "timestamp": "2026-12-01T10:00:00Z", "message": call}
    >>> _ = log.write_text(json.dumps(line) + "\\n")
    >>> sessions = tackroom.list_sessions(harness="claude-code")
    >>> [(s.session_id, s.meta.started, s.meta.models, s.run_id) for s in sessions]
    [('s1', '2026-12-01T10:00:00Z', ['claude-sonnet-4-5'], None)]
    """
    where = where or Where.of()
    if refresh:
        scan(harness=harness, where=where, db=db, progress=progress)
    query = (
        "SELECT s.harness, s.session_id, s.parent_id, s.cwd, s.started, s.ended, s.models, s.title, s.agent, "
        "f.path, f.run_id FROM trace_sessions s JOIN trace_files f ON f.id = s.file_id"
    )
    args: list[Any] = []
    if harness is not None:
        query += " WHERE s.harness = ?"
        args.append(harness)
    found: dict[tuple[str, str], SessionInfo] = {}
    with _index(where.env, db).db.connect() as conn:
        for row in conn.execute(query, args):
            meta = SessionMeta(
                row[1], row[2], row[3], row[4], row[5], list(orjson.loads(row[6])), row[7], row[8]
            )
            key = (row[0], row[1])
            known = found.get(key)
            paths: tuple[Path, ...] = (Path(row[9]),)
            if known is not None:
                meta = merge_meta(known.meta, meta)
                paths = (*known.paths, *paths)
            found[key] = SessionInfo(
                row[0], meta, paths, row[10] if known is None else known.run_id or row[10]
            )
    sessions = [s for s in found.values() if since is None or (s.meta.started or "") >= since]
    sessions = _claimed(sessions, where.env)
    return sorted(sessions, key=lambda s: (s.meta.started or "", s.harness, s.session_id))


def _claimed(sessions: list[SessionInfo], env: Mapping[str, str]) -> list[SessionInfo]:
    """Sessions of the real home given to the run that ran in their directory then (when only one did)."""
    from dataclasses import replace

    from tackroom.run.store import list_runs, runs_root
    from tackroom.trace.attribute import attribute, windows

    if all(s.run_id is not None for s in sessions):
        return sessions
    runs = windows(list_runs(runs_root(env)))
    if not runs:
        return sessions
    out = []
    for info in sessions:
        if info.run_id is None:
            claim = attribute(info.harness, info.meta, None, runs)
            info = replace(info, run_id=claim.run_id, candidates=claim.candidates if claim.ambiguous else ())
        out.append(info)
    return out


def read_trace(
    session: str,
    *,
    harness: str | None = None,
    where: Where | None = None,
    db: StateDB | None = None,
    refresh: bool = True,
) -> Trace:
    """Session ``session`` (an id, or a prefix of exactly one) read whole, with its subagents' sessions.

    >>> import json, pathlib, tackroom
    >>> log = pathlib.Path.home() / ".claude/projects/-work/s1.jsonl"  # a Claude Code session's log
    >>> log.parent.mkdir(parents=True)
    >>> call = {"id": "m1", "model": "claude-sonnet-4-5", "usage": {"input_tokens": 10, "output_tokens": 2}}
    >>> line = {"type": "assistant", "sessionId": "s1", "timestamp": "2026-12-01T10:00:00Z", "message": call}
    >>> _ = log.write_text(json.dumps(line) + "\\n")
    >>> trace = tackroom.read_trace("s1")
    >>> [event.event.kind for event in trace.events], trace.events[-1].event.usage.input
    (['session_started', 'usage'], 10)
    >>> tackroom.read_trace("s2")
    Traceback (most recent call last):
    ...
    tackroom.errors.TraceError: no session 's2' in the logs tackroom can read: see `tackroom trace list`
    """
    where = where or Where.of()
    sessions = list_sessions(harness=harness, where=where, db=db, refresh=refresh)
    exact = [s for s in sessions if s.session_id == session]
    matches = exact or [s for s in sessions if s.session_id.startswith(session)]
    if not matches:
        raise TraceError(f"no session {session!r} in the logs tackroom can read: see `tackroom trace list`")
    if len(matches) > 1:
        shown = ", ".join(f"{s.harness}:{s.session_id}" for s in matches[:5])
        raise TraceError(
            f"{session!r} names more than one session ({shown}): give more of the id, or --harness"
        )
    return _read(matches[0], sessions, depth=0)


def _read(info: SessionInfo, sessions: list[SessionInfo], depth: int) -> Trace:
    from tackroom.adapters.resolve import load_adapters
    from tackroom.families import get_family

    adapter = load_adapters()[info.harness]
    reader = get_family(adapter.family).transcripts()
    if reader is None:
        raise TraceError(f"{info.harness}: its family has no transcript reader")
    trace = Trace(info.harness, info.meta, sources=sorted(info.paths))
    for path in trace.sources:
        for item in reader.read(path, Cursor()):
            if isinstance(item, TraceEvent):
                if item.session_id == info.session_id or not item.session_id:
                    trace.events.append(item)
            elif isinstance(item, TraceIssue):
                trace.issues.append(item)
            elif item.session_id == info.session_id:
                trace.meta = merge_meta(trace.meta, item)
    if depth < MAX_DEPTH:
        for child in sessions:
            if child.meta.parent_id == info.session_id and child.harness == info.harness:
                trace.children.append(_read(child, sessions, depth + 1))
    return trace


scan_traces = scan
"""``tackroom.scan_traces``: :func:`scan` under the name the package exports."""


def usage_text(
    group: Group,
    *,
    harness: str | None = None,
    since: str | None = None,
    until: str | None = None,
    timezone: str | None = None,
    cost: bool = True,
    jobs: int | None = None,
) -> str:
    """A usage report as the CLI prints it (``--json``), answered from the index when nothing changed.

    The full path (scan, report) leaves the plan it followed in the index, so the
    next identical request over unchanged logs is answered by
    :func:`tackroom.trace.shortcut.answer` without loading adapters or families.
    """
    from tackroom._files import config_dir, data_dir
    from tackroom.cli._output import dumps_report_json
    from tackroom.trace.shortcut import remember, report_key, signature

    where = Where.of()
    prices = PriceBook.default() if cost else None
    if prices is not None:
        prices.warm()
    try:
        scanned = scan(harness=harness, where=where, jobs=jobs, released=prices.go if prices else None)
        index = _index(where.env, None)
        generation = index.generation()
        options = UsageOptions(group, harness, since, until, timezone, cost)
        text = dumps_report_json(with_skipped(usage_report(index, options, prices), scanned.issues))
    finally:
        if prices is not None:
            prices.close()
    runs_dir = data_dir(where.env) / "runs"
    plan = {
        "generation": generation,
        "templates": scanned.templates,
        "signature": signature(
            where.env,
            scanned.templates,
            cwd=str(where.workdir),
            runs_dir=runs_dir,
            config=config_dir(where.env),
        ),
        "roots": scanned.roots,
        "harnesses": scanned.harnesses,
        "listing": scanned.listing,
        "trees": scanned.trees,
        "walked_at": scanned.walked_at,
        "text": text,
    }
    with index.db.transaction() as db:
        # Keyed on the options as given (no zone stays no zone): the plan's signature holds TZ.
        remember(db, report_key(group, harness, since, until, timezone, cost), plan)
    return text
