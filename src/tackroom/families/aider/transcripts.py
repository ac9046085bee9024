"""Aider's chat history: ``.aider.chat.history.md`` in the working directory, markdown.

Verified on 0.86.2 (``aider/io.py``). Each run appends a session that starts
with ``# aider chat started at YYYY-MM-DD HH:MM:SS`` (local time, no zone).
Then, line by line:

* ``#### text`` (ending in two spaces): the user's input, one line each;
* ``> text`` (ending in two spaces): aider's own notices, among them the
  command line, ``Model: <name> with <format> edit format`` (``Main model:``
  with a weak model) and, after each answer,
  ``Tokens: 1.2k sent, 300 cache hit, 56 received. Cost: ...``;
* anything else: the model's answer, written whole after a blank line.

A ``Tokens:`` notice is one exchange's usage (aider adds up the calls of one
message, continuations included): it becomes one usage report, keyed by the
session and its line. Aider rounds a count of 1000 or more (``1.2k``): such a
figure is unknown, never a guess. ``sent`` is the prompt with its cached part
(and, on Anthropic, the cache write aider adds to it), so the uncached input
is ``sent`` less ``cache hit`` and ``cache write``. Aider prints a cache
figure only when it is not zero, and only for providers that name their cache
figures their own way (Anthropic, DeepSeek): with one of them printed the
other is zero; with neither, the prompt may hold cached tokens aider did not
print (OpenAI's wire), so the uncached input is unknown and the cache figures
are not reported (as the family's stream parser has it). With streaming
(aider's default; ``tackroom run`` passes ``--no-stream``) the counts are
aider's own estimate, and the log does not say which it was. The weak model's
calls (commit messages, summaries) are not in the log.

The log has no time but the session's start: every event of a session
carries it. A session's id is its start time and the byte offset of its
header (the log names none). The log's directory is the session's working
directory, which the log itself does not name: ``cwd`` is left to whoever
found the file. An answer is only known to be whole once a
notice, an input or a new session follows it, or the file ends in a blank
line: until then the read stops before it and takes it up next time.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tackroom.families.base import MAX_TEXT
from tackroom.paths import open_regular
from tackroom.trace import jsonl
from tackroom.trace.events import (
    AssistantText,
    ErrorEvent,
    Event,
    Record,
    SessionStarted,
    Usage,
    UsageReport,
    UserText,
)
from tackroom.trace.model import Cursor, SessionMeta, TraceEvent, TraceIssue, TraceItem, TranscriptReader

HEADER = re.compile(r"# aider chat started at (\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})")
_MODEL = re.compile(r"(?:Main model|Model): (\S+) with ")
_COUNT = r"(\d+(?:\.\d)?k|\d+)"
_TOKENS = re.compile(
    rf"Tokens: {_COUNT} sent(?:, {_COUNT} cache write)?(?:, {_COUNT} cache hit)?, {_COUNT} received\."
)
_ERROR = re.compile(r"(?:litellm\.)?\w*(?:Error|Exception)\b")
_USAGE_NEEDLES = (b"# aider chat started at ", b"> Tokens: ", b"odel: ")
_MAX_BLANK = 100
"""Blank lines kept between two lines of an answer; more are one paragraph break as good as any."""


def _count(text: str | None) -> int | str | None:
    """A printed count: an int, ``"rounded"`` for aider's ``1.2k``/``12k``, None when not printed."""
    if text is None:
        return None
    return "rounded" if text.endswith("k") else int(text)


def tokens_usage(notice: str) -> Usage | None:
    """A ``Tokens: ...`` notice's figures, or None when the notice is not one."""
    found = _TOKENS.match(notice)
    if found is None:
        return None
    sent, write, hit, received = (_count(found.group(n)) for n in range(1, 5))
    # Aider prints a cache figure only when it is not zero, and only for a provider that names its
    # cache figures its own way: with one printed, the other is a zero; with none, the prompt may
    # hold cached tokens no one printed (OpenAI's wire), so its uncached part is unknown.
    cached = write is not None or hit is not None
    if cached:
        write, hit = write or 0, hit or 0
    unknown = {
        name
        for name, value in (("cache_write", write), ("cache_read", hit), ("output", received))
        if value == "rounded"
    }
    fresh: int | None = None
    if not cached or "rounded" in (sent, write, hit):
        unknown.add("input")
    else:
        fresh = int(sent or 0) - int(write or 0) - int(hit or 0)
    return Usage(
        input=fresh,
        output=received if isinstance(received, int) else None,
        cache_read=hit if isinstance(hit, int) else None,
        cache_write=write if isinstance(write, int) else None,
        unknown=frozenset(unknown),
    )


@dataclass
class _Block:
    """Lines of one input or one answer, not yet known to be whole."""

    kind: str
    line: int
    start: tuple[int, int]
    """The cursor before it: where the next read starts when it is not whole yet."""
    lines: list[str] = field(default_factory=list)
    count: int = 0
    """The log lines it spans so far (blank ones included)."""
    size: int = 0
    """Characters held, bounded by ``MAX_TEXT``: a longer answer is read as several."""


class AiderTranscripts(TranscriptReader):
    """Reads ``.aider.chat.history.md``: one session per ``# aider chat started at`` header."""

    suffixes = (".md",)

    def read(self, path: Path, cursor: Cursor, *, usage_only: bool = False) -> Iterator[TraceItem]:
        state = cursor.state
        meta: dict[str, SessionMeta] = {}
        block: _Block | None = None
        mark = (cursor.offset, cursor.line)
        needles = _USAGE_NEEDLES if usage_only else ()
        for number, raw in jsonl.lines(path, cursor, needles):
            if isinstance(raw, TraceIssue):
                yield raw
                mark = (cursor.offset, cursor.line)
                continue
            text = raw.decode("utf-8", "replace").rstrip("\r")
            kind = _kind(text)
            # An input is one run of "####" lines; an answer runs on over blank lines (its paragraphs).
            gap = block is not None and block.kind == "user" and number > block.line + block.count
            if block is not None and (kind != block.kind or gap):
                yield from self._flush(block, state, usage_only)
                block = None
            if kind in ("user", "answer") and not usage_only:
                if block is not None and block.size > MAX_TEXT:
                    yield from self._flush(block, state, usage_only)  # memory stays bounded
                    block = None
                if block is None:
                    block = _Block(kind, number, mark)
                # lines() passes blank lines over: an answer's paragraph breaks come back from the numbers.
                blank = number - block.line - block.count
                block.lines.extend([""] * min(blank, _MAX_BLANK))
                block.lines.append(text[5:-2] if kind == "user" else text)
                block.count += blank + 1
                block.size += len(text) + min(blank, _MAX_BLANK) + 1
            elif kind == "header":
                yield from self._header(path, number, text, cursor, raw, state, meta)
            elif kind == "notice":
                yield from self._notice(number, text, state, meta, usage_only)
            mark = (cursor.offset, cursor.line)
        if block is not None:
            if block.kind == "answer" and not self._ends_blank(path, cursor):
                cursor.offset, cursor.line = block.start  # an answer perhaps still being written
            else:
                yield from self._flush(block, state, usage_only)
        yield from meta.values()

    @staticmethod
    def _ends_blank(path: Path, cursor: Cursor) -> bool:
        try:
            with open_regular(path) as handle:
                handle.seek(max(cursor.offset - 2, 0))
                return handle.read(3) == b"\n\n"
        except OSError:
            return False

    @staticmethod
    def _meta(session: str, state: dict[str, Any]) -> SessionMeta:
        info = SessionMeta(session)
        info.saw(state.get("started"), state.get("model"))
        return info

    def _header(
        self,
        path: Path,
        number: int,
        text: str,
        cursor: Cursor,
        raw: bytes,
        state: dict[str, Any],
        meta: dict[str, SessionMeta],
    ) -> Iterator[TraceItem]:
        found = HEADER.match(text)
        assert found is not None
        year, month, day, hour, minute, second = found.groups()
        started = f"{year}-{month}-{day}T{hour}:{minute}:{second}"
        offset = cursor.offset - len(raw) - 1
        session = f"aider-{year}{month}{day}-{hour}{minute}{second}-{offset}"
        state.update(session=session, started=started, model=None)
        meta[session] = self._meta(session, state)
        yield TraceEvent(session, SessionStarted(text, session_id=session), started, line=number)

    def _notice(
        self, number: int, text: str, state: dict[str, Any], meta: dict[str, SessionMeta], usage_only: bool
    ) -> Iterator[TraceItem]:
        notice = text.rstrip(" ")
        notice = notice[2:] if notice.startswith("> ") else notice[1:] if notice.startswith(">") else notice
        session = _session(state)
        info = meta.get(session) or meta.setdefault(session, self._meta(session, state))
        if model := _MODEL.match(notice):
            state["model"] = model.group(1)
            info.saw(None, model.group(1))
        started, current = state.get("started"), state.get("model")
        usage = tokens_usage(notice)
        if usage is not None:
            report = UsageReport(text, usage=usage)
            yield TraceEvent(session, report, started, current, number, f"{session}:{number}")
            return
        if usage_only:
            return
        event: Event = (
            ErrorEvent(text, message=notice, fatal=False)
            if _ERROR.match(notice)
            else Record(text, record_type="notice")
        )
        yield TraceEvent(session, event, started, line=number)

    def _flush(self, block: _Block, state: dict[str, Any], usage_only: bool) -> Iterator[TraceEvent]:
        if usage_only:
            return
        session, started = _session(state), state.get("started")
        if block.kind == "user":
            text = "\n".join("" if line == "<blank>" else line for line in block.lines)
            yield TraceEvent(session, UserText(text=text), started, line=block.line)
        else:
            text = "\n".join(block.lines).strip("\n")
            yield TraceEvent(session, AssistantText(text=text), started, state.get("model"), block.line)


_HEADLESS = "aider-headless"
"""The session of lines before any header (a log whose start was cut off)."""


def _session(state: dict[str, Any]) -> str:
    session = state.get("session")
    return session if isinstance(session, str) else _HEADLESS


def _kind(text: str) -> str:
    if text.startswith("# aider chat started at ") and HEADER.match(text):
        return "header"
    if text.startswith("> Tokens: "):
        return "notice"  # with both cache figures the cost follows on a line of its own: no "  " here
    if text.endswith("  "):
        if text.startswith("#### "):
            return "user"
        if text.startswith((">", "Cost: $")):
            return "notice"
    return "answer"
