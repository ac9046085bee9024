"""The interface every family implements.

A family turns its harness's structured output into normalized events. The
parser is stateful (one per run) because several harnesses spread one fact
over many lines (a tool call started here and finished there).

Harness output is hostile until parsed: a parser takes any line without
raising (the runner still turns anything a family raises into an error event
that keeps the line), keeps bounded state whatever the harness prints, and
gets strings without lone surrogates from :func:`json_line`.
"""

from __future__ import annotations

import functools
import json
import re
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from tackroom.errors import StreamLineError

if TYPE_CHECKING:
    from tackroom.profile.engines.base import Engine
    from tackroom.trace.events import ErrorEvent, Event
    from tackroom.trace.model import TranscriptReader

# The events are imported where a parser makes them, not here: a render imports the families for
# their engines and never parses a stream, so it does not make the events' classes either.

__all__ = [
    "MAX_DEPTH",
    "MAX_TEXT",
    "ClientParser",
    "Family",
    "Lines",
    "PlainTextParser",
    "StreamLineError",
    "StreamParser",
    "clean",
    "fresh_input",
    "int_or_none",
    "json_line",
    "obj",
    "seq",
    "str_or_none",
    "tolerant",
]


P = TypeVar("P", bound="StreamParser")

MAX_DEPTH = 64
"""JSON nested deeper than this is refused: no harness writes it, and every printer would recurse on it."""
MAX_TEXT = 8 * 1024 * 1024
"""The most text (characters) a parser holds for one purpose, e.g. a streamed message or plain stdout."""

# A \uD800-\uDFFF escape: the half of a pair, or a lone surrogate that no encoder takes.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")


def tolerant(feed: Callable[[P, str], list[Event]]) -> Callable[[P, str], list[Event]]:
    """Decorate a parser's ``feed``: a :class:`StreamLineError` becomes a non-fatal error event."""

    @functools.wraps(feed)
    def guarded(parser: P, line: str) -> list[Event]:
        try:
            return feed(parser, line)
        except StreamLineError as exc:
            from tackroom.trace.events import ErrorEvent

            return [ErrorEvent(line, message=f"a line was not used: {exc}", fatal=False)]

    return guarded


class StreamParser:
    """Parses one run's stdout, line by line, into events."""

    def feed(self, line: str) -> list[Event]:
        """Events for one stdout line (a line that is not the harness's structure yields none).

        Any line may arrive: a parser takes it without raising. Decorate with
        :func:`tolerant` when it uses :func:`json_line`, so a line too deep to
        use becomes an error event.
        """
        return []

    def close(self, exit_code: int | None) -> list[Event]:
        """Events once the process ended (e.g. a Finished event from accumulated text)."""
        return []


class ClientParser(StreamParser):
    """A parser that talks back: the harness is a server on stdio (ACP) and tackroom its client.

    The runner calls :meth:`begin` before the first line, and after it and
    every :meth:`feed` writes :meth:`outgoing` to the harness's stdin; once
    :attr:`over` is true stdin is closed, and a harness still running a moment
    later is stopped (it is done, not failed).
    """

    over: bool = False
    """The conversation is over: nothing more will be written."""

    def begin(
        self,
        prompt: str,
        workdir: Path,
        options: Mapping[str, Any],
        env: Mapping[str, str] | None = None,
        profile: Mapping[str, Path] | None = None,
    ) -> None:
        """Start the conversation for one run: its prompt, working directory and option values.

        ``env`` is the harness's whole environment (what a ``${VAR}`` the
        client sends resolves against: values the client must never log), and
        ``profile`` where the adapter's profile capabilities live for this run
        (kind -> the file its ``path`` names, resolved in the run's home), for a
        client that sends part of the rendered profile in its protocol (ACP's
        MCP servers).
        """

    def outgoing(self) -> list[str]:
        """The lines to write to the harness's stdin now (each without its newline); taken once."""
        return []

    def cancel(self) -> list[Event]:
        """The run is out of time: queue what asks the harness to end its turn (none by default).

        The runner then writes :meth:`outgoing` and gives the harness a moment
        to answer before it is stopped; the run counts as timed out either way.
        """
        return []


class Lines:
    """The lines of a stream, bounded: the first and the last ``MAX_TEXT`` characters' worth of lines.

    What falls between is counted, not kept, so a harness that floods stdout
    cannot fill memory; :attr:`left_out` says how many lines that was.
    """

    def __init__(self, budget: int = MAX_TEXT) -> None:
        self._budget = budget
        self.head: list[str] = []
        self._head_size = 0
        self.tail: deque[str] = deque()
        self._tail_size = 0
        self.left_out = 0

    def append(self, line: str) -> None:
        # Each line also costs its object: a flood of one-character lines must not slip under the budget.
        cost = len(line) + 64
        if self._head_size + cost <= self._budget and not self.tail and not self.left_out:
            self.head.append(line)
            self._head_size += cost
            return
        self.tail.append(line)
        self._tail_size += cost
        while self._tail_size > self._budget and len(self.tail) > 1:
            self._tail_size -= len(self.tail.popleft()) + 64
            self.left_out += 1

    def __iter__(self) -> Iterator[str]:
        yield from self.head
        yield from self.tail


class PlainTextParser(StreamParser):
    """For harnesses with no structured output: stdout is the answer, reported once it ends.

    Nothing is inferred from the text: no tool calls, no usage (``not_reported``).
    A non-zero exit marks the run failed; a model failure hidden behind exit 0
    needs family code that knows the harness's error text. Of a flood, the
    first and last lines are kept, with a line saying how many were left out.
    """

    def __init__(self) -> None:
        self.lines = Lines()

    def feed(self, line: str) -> list[Event]:
        self.lines.append(line)
        return []

    def close(self, exit_code: int | None) -> list[Event]:
        lines = list(self.lines.head)
        if self.lines.left_out:
            lines.append(f"[tackroom: {self.lines.left_out} lines of output left out here]")
        text = "\n".join([*lines, *self.lines.tail]).strip()
        from tackroom.trace.events import AssistantText, Finished

        events: list[Event] = [AssistantText(text=text)] if text else []
        return [*events, Finished(final_text=text or None, ok=exit_code == 0)]


class Family(ABC):
    """The code that knows one kind of harness.

    Subclasses set :attr:`name` and :attr:`stream` and implement
    :meth:`parser` (a family without one cannot be made, so it does not load);
    an adapter's data supplies everything else.
    """

    name: str = ""
    """The family name adapters select with ``family = ...``."""
    stream: str = ""
    """The structured output this family parses (e.g. ``claude stream-json``)."""
    verified: bool = False
    """Whether the parser was proven on streams recorded from the real harness."""
    reports_usage: frozenset[str] = frozenset()
    """The usage figures this harness's stream reports; the others are ``not_reported``."""
    terminal: str = ""
    """The line that ends a complete stream (e.g. ``the "result" line``), where the stream has one.

    A parser emits :class:`Finished` for it; a run that ends without any
    Finished event failed, and this names what was missing. Families whose
    stream has no such line make their Finished at :meth:`StreamParser.close`.
    """
    sidecars: tuple[str, ...] = ()
    """Endings of files beside each of its logs whose changes are the log's (a database's write-ahead
    log, ``-wal``): the index sees the log as changed when one of them changed. Declared here, not on
    the reader, so finding a run's logs does not import the reader when there are none to read."""
    engines_module: str | None = None
    """The module whose ``ENGINES`` lists the renderers only this family needs (imported on first use)."""

    @abstractmethod
    def parser(self) -> StreamParser:
        """A fresh parser for one run."""

    def after_exit(self, home: Path | None, env: Mapping[str, str], events: Sequence[Event]) -> list[Event]:
        """Events only the harness's files hold (e.g. usage it writes to its session log, not stdout).

        ``home`` is the HOME the harness ran with (the run's own, when isolated),
        ``env`` its whole environment, for its relocation variables, and
        ``events`` what its stream said (the session id, to find the right log).
        """
        return []

    def stderr_error(self, stderr_tail: str) -> ErrorEvent | None:
        """A model failure visible only on stderr, if this harness reports one there."""
        return None

    def transcripts(self) -> TranscriptReader | None:
        """The reader of this harness's own session logs (see :mod:`tackroom.trace`), if the family has one.

        Where the logs are is adapter data (``[adapter.X.transcripts]``); how to read them is this.
        """
        return None

    def engines(self) -> Sequence[Engine]:
        """The profile renderer engines this family contributes (none by default)."""
        if self.engines_module is None:
            return ()
        listed: Sequence[Engine] = import_module(self.engines_module).ENGINES
        return tuple(listed)

    def __repr__(self) -> str:
        return f"<family {self.name}>"


def json_line(line: str) -> dict[str, Any] | None:
    """The JSON object on ``line``, or None for anything else (banners, blank lines, broken JSON).

    Strings come back without lone surrogates (``"\\ud83d"`` decodes to one,
    and no UTF-8 encoder takes it): each is replaced by U+FFFD.

    Raises:
        StreamLineError: the object is nested deeper than :data:`MAX_DEPTH`.
    """
    text = line.strip()
    if not text.startswith("{"):
        return None
    try:
        data = json.loads(text)
    except RecursionError as exc:
        raise StreamLineError(f"JSON nested deeper than {MAX_DEPTH} levels") from exc
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    # Counting brackets is cheap; only a line with many of them needs the walk.
    if text.count("{") + text.count("[") > MAX_DEPTH and _depth(data) > MAX_DEPTH:
        raise StreamLineError(f"JSON nested deeper than {MAX_DEPTH} levels")
    if _SURROGATE_ESCAPE.search(text):
        data = clean(data)
    return data if isinstance(data, dict) else None


def _depth(value: Any) -> int:
    """How deeply ``value`` nests containers, found without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        for child in children:
            if isinstance(child, dict | list):
                if level + 1 > MAX_DEPTH:
                    return level + 1
                stack.append((child, level + 1))
        deepest = max(deepest, level)
    return deepest


def clean(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings (and keys) replaced by U+FFFD."""
    if isinstance(value, str):
        # UTF-16 round trip: a surrogate pair comes back whole, a lone half as one U+FFFD.
        return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    if isinstance(value, dict):
        return {clean(k): clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clean(item) for item in value]
    return value


def fresh_input(prompt: int | None, cached: int | None) -> int | None:
    """Input tokens not read from cache, from a prompt count that includes the cached ones.

    OpenAI and Gemini count cached tokens inside the prompt; tackroom's ``input``
    (Anthropic's convention) excludes them. Without a cached figure the prompt
    count is all that is known, and is kept. A prompt smaller than its cached
    part follows neither convention: the difference is negative, and
    :class:`~tackroom.trace.events.Usage` records a negative figure as unknown.
    """
    if prompt is None or cached is None:
        return prompt
    return prompt - cached


def obj(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one: a harness may put anything anywhere."""
    return value if isinstance(value, dict) else {}


def seq(value: Any) -> list[Any]:
    """``value`` if it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []


def text_or_none(value: Any) -> str | None:
    """``value`` if it is a non-empty string, else None."""
    return value if isinstance(value, str) and value else None


def json_arguments(value: Any) -> Any:
    """A tool call's arguments sent as JSON text (OpenAI's shape), parsed; text that is not JSON is
    kept as is, and a value already parsed is returned unchanged."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except (ValueError, RecursionError):
        return value


def str_or_none(value: Any) -> str | None:
    """``value`` if it is a string, else None."""
    return value if isinstance(value, str) else None


def int_or_none(value: Any) -> int | None:
    """A reported integer, or None: booleans, floats and strings are not token counts."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None
