"""The read loop of the transcripts written as JSON lines, one object a line, shared by their readers.

Codex, Gemini CLI, Qwen Code, pi and Copilot CLI each append their session
log one JSON object a line. What differs between them is what a line means;
how a file is read does not: on from the cursor, in bounded memory
(:func:`~tackroom.trace.jsonl.records`), every line that is not a usable
object passed on as an issue, and on the usage fast path the lines holding
none of the reader's needles passed over unparsed. :class:`JsonLinesReader`
owns that loop and the sessions a read learns about (yielded once, after the
last line, with all the read learned); a reader says in :meth:`~JsonLinesReader.line`
what one line maps to.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tackroom.trace import jsonl
from tackroom.trace.model import Cursor, SessionMeta, TraceItem, TranscriptReader


@dataclass(slots=True)
class Reading:
    """One read of one file: what handling a line needs beside the line itself."""

    path: Path
    state: dict[str, Any]
    """The cursor's carry-over (:attr:`~tackroom.trace.model.Cursor.state`), kept for the next read."""
    meta: dict[str, SessionMeta]
    """The sessions this read has seen, by id, filled in as lines tell more: yielded after the last line."""
    usage_only: bool
    """The usage fast path: only usage events and session facts are wanted."""


class JsonLinesReader(TranscriptReader):
    """A reader of JSON-lines session logs: the loop is here, what a line means is the subclass's."""

    needles: tuple[bytes, ...] = ()
    """On the usage fast path, a line holding none of these (after the first :attr:`head` lines) is passed
    over unparsed: most lines of a transcript carry no usage, and parsing them is most of a read's cost."""
    head: int = 1
    """The file's first lines, always parsed: the header that names the session."""

    def read(self, path: Path, cursor: Cursor, *, usage_only: bool = False) -> Iterator[TraceItem]:
        reading = Reading(path, cursor.state, {}, usage_only)
        self.begin(reading)
        line = self.line
        for item in jsonl.records(path, cursor, self.needles if usage_only else (), self.head):
            if isinstance(item, tuple):
                yield from line(reading, item[0], item[1])
            else:
                yield item
        self.end(reading)
        yield from reading.meta.values()

    def line(self, reading: Reading, number: int, data: dict[str, Any]) -> Iterator[TraceItem]:
        """The events of line ``number`` (from 1), whose object is ``data``; what it says of its
        session goes into ``reading.meta``, what later lines or reads need into ``reading.state``."""
        raise NotImplementedError

    def begin(self, reading: Reading) -> None:
        """Before the first line (nothing by default): what the file says outside its new lines."""

    def end(self, reading: Reading) -> None:
        """After the last line, before the sessions are yielded (nothing by default): what completes them."""
