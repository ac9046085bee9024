"""What a transcript reader yields: events with their session and time, sessions, and problems.

A harness's own session log is read into the same :mod:`~tackroom.trace.events`
the live stream produces, each wrapped in a :class:`TraceEvent` that says which
session it belongs to, when it happened and where in the file it was. A reader
also yields what it learns about each session (:class:`SessionMeta`: its
working directory, its parent when it is a subagent's, its models) and every
line it could not use (:class:`TraceIssue`, naming file and line): a bad line
is reported and the rest of the file is still read.

Usage is per model call. A call's usage may be written more than once (Claude
Code writes one line per content block of a streamed message, each with the
usage so far); :attr:`TraceEvent.key` names the call, so a report counts each
key once, its last figures winning. A call with no key is counted as written.

Cache semantics are explicit and the same for every harness: ``input`` is the
input that was neither read from nor written to a cache; ``cache_read`` and
``cache_write`` are additive to it (Anthropic's convention). A reader of an
OpenAI-style log, whose input count includes its cached part, subtracts it
(:func:`~tackroom.families.base.fresh_input`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tackroom.trace.events import FIGURES, Event, Usage, UsageReport


@dataclass(frozen=True)
class TraceEvent:
    """One event of a session, as its transcript recorded it.

    >>> import tackroom
    >>> report = tackroom.UsageReport(usage=tackroom.Usage(input=10, output=2))
    >>> event = tackroom.TraceEvent("s1", report, model="claude-sonnet-4-5", line=3, key="msg_1")
    >>> event.event.kind, event.to_json()["usage"]["input"], event.to_json()["line"]
    ('usage', 10, 3)
    """

    session_id: str
    event: Event
    timestamp: str | None = None
    """When the harness wrote it: ISO 8601 as the transcript has it (``None`` when it says nothing)."""
    model: str | None = None
    """The model that produced it, where the transcript says (usage and assistant text)."""
    line: int = 0
    """Its line (or row) in the source, from 1; 0 when not known."""
    key: str | None = None
    """For usage: the model call it belongs to (message and request id), so duplicates count once."""

    def to_json(self) -> dict[str, Any]:
        data = self.event.to_json()
        data.pop("raw", None)
        data.update(session_id=self.session_id, timestamp=self.timestamp, line=self.line)
        if self.model is not None or "model" not in data:  # SessionStarted carries its own
            data["model"] = self.model
        if self.key is not None:
            data["key"] = self.key
        return data


@dataclass
class SessionMeta:
    """What a transcript says about one session; a reader yields it as it learns more.

    >>> import tackroom
    >>> meta = tackroom.SessionMeta("s1")
    >>> meta.saw("2026-12-01T10:05:00Z", "claude-sonnet-4-5")
    >>> meta.saw("2026-12-01T10:00:00Z")  # an earlier line widens the window back
    >>> meta.started, meta.ended, meta.models
    ('2026-12-01T10:00:00Z', '2026-12-01T10:05:00Z', ['claude-sonnet-4-5'])
    """

    session_id: str
    parent_id: str | None = None
    """The session that started this one (a subagent's parent), where the transcript links them."""
    cwd: str | None = None
    started: str | None = None
    ended: str | None = None
    models: list[str] = field(default_factory=list)
    title: str | None = None
    agent: str | None = None
    """The subagent's name or type, for a subagent session."""

    def saw(self, timestamp: str | None, model: str | None = None) -> None:
        """Widen the session's time window to ``timestamp``, and note ``model``."""
        if timestamp:
            if self.started is None or timestamp < self.started:
                self.started = timestamp
            if self.ended is None or timestamp > self.ended:
                self.ended = timestamp
        if model and model not in self.models:
            self.models.append(model)

    def to_json(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "parent_id": self.parent_id,
            "cwd": self.cwd,
            "started": self.started,
            "ended": self.ended,
            "models": list(self.models),
            "title": self.title,
            "agent": self.agent,
        }


@dataclass(frozen=True)
class TraceIssue:
    """A part of a transcript that could not be used: the rest was read.

    A :class:`Trace` lists its own (``trace.issues``); each names its file and line:

    >>> import pathlib, tackroom
    >>> issue = tackroom.TraceIssue(pathlib.Path("s1.jsonl"), 2, "not JSON")
    >>> str(issue), issue.to_json()
    ('s1.jsonl:2: not JSON', {'path': 's1.jsonl', 'line': 2, 'message': 'not JSON'})
    """

    path: Path
    line: int
    """From 1; 0 for the file as a whole."""
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        return f"{where}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        return {"path": str(self.path), "line": self.line, "message": self.message}


TraceItem = TraceEvent | SessionMeta | TraceIssue
"""What :meth:`TranscriptReader.read` yields."""

UsageRow = list[Any]
"""One model call as the index stores it: ``[line, timestamp, model, key, session, input, output,
cache_read, cache_write, reasoning, unknown]`` (``unknown``: a bit mask over
:data:`~tackroom.trace.events.FIGURES`)."""
R_LINE, R_TS, R_MODEL, R_KEY, R_SESSION, R_INPUT, R_UNKNOWN = 0, 1, 2, 3, 4, 5, 10
FIGURE_BITS = (1 << len(FIGURES)) - 1
"""The bits of a row's last field that say which figures are unknown."""
SIDECHAIN = 1 << 8
"""Set in a row's last field when the call was logged as a copy in a side chain (a subagent's line): of
two rows of one call, the other one wins."""


def row_usage(row: UsageRow) -> Usage:
    """The :class:`~tackroom.trace.events.Usage` a row holds (the inverse of :func:`usage_row`)."""
    mask = row[R_UNKNOWN] & FIGURE_BITS
    unknown = frozenset(name for n, name in enumerate(FIGURES) if mask & (1 << n))
    i, o, cr, cw, r = row[R_INPUT : R_INPUT + len(FIGURES)]
    return Usage(i, o, cr, cw, r, unknown=unknown)


def usage_row(item: TraceEvent) -> UsageRow:
    """``item`` (a usage event) as a row."""
    usage = item.event.usage  # type: ignore[attr-defined]
    mask = sum(1 << n for n, name in enumerate(FIGURES) if name in usage.unknown)
    return [
        item.line,
        item.timestamp,
        item.model,
        item.key,
        item.session_id,
        usage.input,
        usage.output,
        usage.cache_read,
        usage.cache_write,
        usage.reasoning,
        mask,
    ]


@dataclass
class Cursor:
    """Where the last read of one file stopped, and what the reader carries over to the next read.

    ``offset`` is a byte offset for line-oriented files (the end of the last
    complete line: a line still being written is read next time) and is left
    at 0 by readers that read their source whole. ``state`` is the reader's
    own JSON-ready carry-over (the session id from the first line, the last
    cumulative counter), stored in the index between runs.
    """

    offset: int = 0
    line: int = 0
    """Lines consumed so far (the next line is ``line + 1``)."""
    state: dict[str, Any] = field(default_factory=dict)
    first: bytes | None = None
    """The file's first bytes (up to :data:`FIRST_BYTES`) as a read that began at its start found them,
    or None: what identifies the file in the index, which need not open it again. Not stored."""


FIRST_BYTES = 1024


class TranscriptReader:
    """Reads one harness's session files. A family's :meth:`~tackroom.families.base.Family.transcripts`
    returns one.

    ``read`` takes any bytes without raising: what it cannot use becomes a
    :class:`TraceIssue`. It reads in bounded memory whatever the file's size
    (one line at a time, a line longer than the limit skipped and reported).
    """

    incremental: bool = True
    """Whether a grown file can be read on from ``cursor.offset`` (append-only logs); otherwise it is
    read again whole when it changes (a database)."""
    suffixes: tuple[str, ...] = (".jsonl",)
    """File endings this reader takes (discovery's glob comes from the adapter)."""

    def read(self, path: Path, cursor: Cursor, *, usage_only: bool = False) -> Iterator[TraceItem]:
        """The items of ``path`` from ``cursor`` on, advancing it.

        With ``usage_only`` a reader may yield only usage events and session
        facts (the fast path of usage reports); the full read yields every event.
        """
        raise NotImplementedError

    def usage(self, path: Path, cursor: Cursor) -> Iterator[UsageRow | SessionMeta | TraceIssue]:
        """The fast path of usage reports: each model call as a row, with the sessions and issues.

        By default this is :meth:`read` with ``usage_only``; a reader of large logs
        overrides it to skip building events. It must yield the same rows.
        """
        for item in self.read(path, cursor, usage_only=True):
            if isinstance(item, TraceEvent):
                if isinstance(item.event, UsageReport):
                    yield usage_row(item)
            else:
                yield item


def usage_events(items: Iterator[TraceItem]) -> Iterator[TraceEvent]:
    """The usage events among ``items``."""
    for item in items:
        if isinstance(item, TraceEvent) and isinstance(item.event, UsageReport):
            yield item


@dataclass
class Trace:
    """One session read back whole: what :func:`tackroom.read_trace` returns and the exports take.

    A line the reader cannot use is an issue of the trace; the rest of the log is still read:

    >>> import json, pathlib, tackroom
    >>> log = pathlib.Path.home() / ".claude/projects/-work/s1.jsonl"  # a Claude Code session's log
    >>> log.parent.mkdir(parents=True)
    >>> call = {"id": "m1", "model": "claude-sonnet-4-5", "usage": {"input_tokens": 10, "output_tokens": 2}}
    >>> line = {"type": "assistant", "sessionId": "s1", "timestamp": "2026-12-01T10:00:00Z", "message": call}
    >>> _ = log.write_text(json.dumps(line) + "\\n{cut off\\n")
    >>> trace = tackroom.read_trace("s1")
    >>> trace.harness, trace.session_id, len(trace.events), [str(issue) for issue in trace.issues]
    ('claude-code', 's1', 2, ['.../s1.jsonl:2: not JSON (...)'])
    """

    harness: str
    """The adapter whose logs these are."""
    meta: SessionMeta
    events: list[TraceEvent] = field(default_factory=list)
    issues: list[TraceIssue] = field(default_factory=list)
    sources: list[Path] = field(default_factory=list)
    """The files it was read from."""
    children: list[Trace] = field(default_factory=list)
    """Sessions it started (subagents), each read whole as well."""

    @property
    def session_id(self) -> str:
        return self.meta.session_id

    def to_json(self) -> dict[str, Any]:
        return {
            "harness": self.harness,
            "session": self.meta.to_json(),
            "sources": [str(p) for p in self.sources],
            "events": [event.to_json() for event in self.events],
            "issues": [issue.to_json() for issue in self.issues],
            "children": [child.to_json() for child in self.children],
        }
