"""The aider family: aider's plain-text stdout under ``--message`` (it has no JSON mode).

Verified on aider 0.86.2, run with ``--no-stream --no-pretty`` and a wide
``COLUMNS`` (see the adapter). The output is the startup notes, the
announcements (``Aider v0.86.2``, ``Model: <name> with <format> edit format``,
...) and a blank line; then per model call the reply as aider displays it, a
blank line and ``Tokens: N sent, M received.`` (with ``, K cache write`` /
``, H cache hit`` and ``Cost: ...`` where known). Nothing marks where a reply
starts except the line ending the one before, so a later call's text may carry
aider's own notes about the previous one ("Applied edit to ...").

A failed call prints ``litellm.<Error>: ...`` (and a description line);
``Retrying in N seconds...`` follows when aider will try again. Aider exits 0
either way, so the output is parsed whole, in :meth:`close`: a failure no later
reply recovered from fails the run.

Usage: only ``received`` (the provider's ``completion_tokens`` under
``--no-stream``; streaming, aider counts tokens itself). ``sent`` is the whole
prompt with cached tokens in it, and aider shows the cached figure only for
providers whose usage names it its own way (not OpenAI's ``cached_tokens``), so
the uncached input is unknown. A figure of 1000 or more is printed rounded
(``1.2k``): it is ``unknown``, and so is a total with a rounded part.

The output is held bounded (:class:`~tackroom.families.base.Lines`); of a
flood, lines in the middle are left out, and then the total is unknown too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tackroom.families.base import Family, Lines, StreamParser
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
    from tackroom.trace.model import TranscriptReader

_BANNER = re.compile(r"Aider v\d")
_MODEL = re.compile(r"(?:Main model|Model): (?P<model>\S+) with (?P<format>\S+) edit format")
_TOKENS = re.compile(
    r"Tokens: [\d.]+k? sent(?:, [\d.]+k? cache write)?(?:, [\d.]+k? cache hit)?,"
    r" (?P<received>[\d.]+k?) received\."
)
_LITELLM_ERROR = re.compile(r"litellm\.\w+: ")
_RETRYING = re.compile(r"Retrying in [\d.]+ seconds\.\.\.")
_TRACEBACK = "Traceback (most recent call last):"
_EMPTY = "Empty response received from LLM. Check your provider account?"


def exact(figure: str) -> int | None:
    """A token figure aider printed in full, or None for a rounded one (``1.2k``)."""
    return int(figure) if figure.isdigit() else None


def undouble(text: str) -> str:
    """Undo the whole edit format's display, which joins the reply's lines, newlines kept, with newlines."""
    return text.replace("\n\n", "\n")


@dataclass
class _Output:
    """What the walk over aider's output found so far."""

    whole: bool
    complete: bool = True
    """Every line was seen (none left out of a flood)."""
    events: list[Event] = field(default_factory=list)
    received: list[int | None] = field(default_factory=list)
    reply: str | None = None
    error: tuple[str, str] | None = None
    """The latest failure (raw lines, message) no later reply has recovered from."""


class AiderTextParser(StreamParser):
    """Collects aider's stdout and turns it into events once the process has ended."""

    def __init__(self) -> None:
        self._lines = Lines()

    def feed(self, line: str) -> list[Event]:
        self._lines.append(line)
        return []

    def close(self, exit_code: int | None) -> list[Event]:
        events = parse_output(list(self._lines), complete=not self._lines.left_out)
        if not self._lines.left_out:
            return events
        left_out = f"{self._lines.left_out} lines in the middle of aider's output were not parsed (too long)"
        return [ErrorEvent(message=left_out, fatal=False), *events]


def parse_output(lines: list[str], *, complete: bool = True) -> list[Event]:
    """The events of one run's stdout; none when aider never got to its announcements.

    ``complete`` False: lines were left out, so no total can be known.
    """
    start = next((i for i, line in enumerate(lines) if _BANNER.match(line)), None)
    if start is None:
        return []
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    model = next((m for line in lines[start:end] if (m := _MODEL.match(line))), None)
    found = _Output(whole=model is not None and model["format"] == "whole", complete=complete)
    found.events.append(SessionStarted(lines[start], model=model["model"] if model else None))
    _walk(lines[end + 1 :], found)
    return found.events + _ending(found)


def _walk(body: list[str], found: _Output) -> None:
    segment: list[str] = []
    rest = iter(body)
    for line in rest:
        if tokens := _TOKENS.match(line):
            _reply(segment, line, tokens["received"], found)
            segment = []
        elif _LITELLM_ERROR.match(line) or line == _TRACEBACK:
            _failure(line, rest, found)
            segment = []
        else:
            segment.append(line)


def _reply(segment: list[str], line: str, received: str, found: _Output) -> None:
    raw = "\n".join(segment)
    shown = [text for text in segment if text != _EMPTY]
    text = "\n".join(shown).strip("\n")
    text = undouble(text) if found.whole else text
    if len(shown) < len(segment):
        found.events.append(ErrorEvent(raw, message=_EMPTY, fatal=False))
    if text:
        found.events.append(AssistantText(raw, text=text))
    figure = exact(received)
    # A rounded figure was reported, but not exactly: unknown.
    usage = Usage(output=figure) if figure is not None else Usage(unknown=frozenset({"output"}))
    found.events.append(UsageReport(line, usage=usage, scope="turn"))
    found.received.append(figure)
    found.reply = text or None
    found.error = None


def _failure(first: str, rest: Iterator[str], found: _Output) -> None:
    """A failed call: the error lines up to a blank line, or up to aider's note that it retries."""
    lines = [first]
    for line in rest:
        if _RETRYING.fullmatch(line):
            raw = "\n".join(lines)
            found.events.append(ErrorEvent(raw, message=f"{_message(lines)} ({line})", fatal=False))
            break
        if not line.strip():
            break
        lines.append(line)
    found.error = ("\n".join(lines), _message(lines))


def _message(lines: list[str]) -> str:
    if lines[0] != _TRACEBACK:
        return " ".join(line.strip() for line in lines)
    # The exception's own line is the first one the traceback does not indent.
    return next((line for line in lines[1:] if not line.startswith(" ")), lines[0])


def _ending(found: _Output) -> list[Event]:
    events: list[Event] = []
    if found.received:
        # A total with a rounded part, or of output partly left out, is unknown, not the sum of what was seen.
        if None in found.received or not found.complete:
            total = Usage(unknown=frozenset({"output"}))
        else:
            total = Usage(output=sum(r for r in found.received if r is not None))
        events.append(UsageReport("", usage=total, scope="total"))
    if found.error is not None:
        raw, message = found.error
        events.append(ErrorEvent(raw, message=message, fatal=True))
    events.append(Finished("", final_text=found.reply, ok=found.error is None))
    return events


class Aider(Family):
    name = "aider"
    stream = "aider text"
    verified = True
    reports_usage = frozenset({"output"})
    engines_module = "tackroom.families.aider.engines"

    def parser(self) -> StreamParser:
        return AiderTextParser()

    def transcripts(self) -> TranscriptReader:
        from tackroom.families.aider.transcripts import AiderTranscripts

        return AiderTranscripts()


FAMILY = Aider()
