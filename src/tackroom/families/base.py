"""The interface every family implements.

A family turns its harness's structured output into normalized events. The
parser is stateful (one per run) because several harnesses spread one fact
over many lines (a tool call started here and finished there).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tackroom.trace.events import AssistantText, ErrorEvent, Event, Finished

if TYPE_CHECKING:
    from tackroom.profile.engines.base import Engine


class StreamParser:
    """Parses one run's stdout, line by line, into events."""

    def feed(self, line: str) -> list[Event]:
        """Events for one stdout line (a line that is not the harness's structure yields none)."""
        return []

    def close(self, exit_code: int | None) -> list[Event]:
        """Events once the process ended (e.g. a Finished event from accumulated text)."""
        return []


class PlainTextParser(StreamParser):
    """For harnesses with no structured output: stdout is the answer, reported once it ends.

    Nothing is inferred from the text: no tool calls, no usage (``not_reported``).
    A non-zero exit marks the run failed; a model failure hidden behind exit 0
    needs family code that knows the harness's error text.
    """

    def __init__(self) -> None:
        self.lines: list[str] = []

    def feed(self, line: str) -> list[Event]:
        self.lines.append(line)
        return []

    def close(self, exit_code: int | None) -> list[Event]:
        text = "\n".join(self.lines).strip()
        events: list[Event] = [AssistantText(text=text)] if text else []
        return [*events, Finished(final_text=text or None, ok=exit_code == 0)]


class Family:
    """The code that knows one kind of harness.

    Subclasses set :attr:`name` and :attr:`stream` and override
    :meth:`parser`; an adapter's data supplies everything else.
    """

    name: str = ""
    """The family name adapters select with ``family = ...``."""
    stream: str = ""
    """The structured output this family parses (e.g. ``claude stream-json``)."""
    verified: bool = False
    """Whether the parser was proven on streams recorded from the real harness."""
    reports_usage: frozenset[str] = frozenset()
    """The usage figures this harness's stream reports; the others are ``not_reported``."""
    engines_module: str | None = None
    """The module whose ``ENGINES`` lists the renderers only this family needs (imported on first use)."""

    def parser(self) -> StreamParser:
        """A fresh parser for one run."""
        return StreamParser()

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

    def engines(self) -> Sequence[Engine]:
        """The profile renderer engines this family contributes (none by default)."""
        if self.engines_module is None:
            return ()
        listed: Sequence[Engine] = import_module(self.engines_module).ENGINES
        return tuple(listed)

    def __repr__(self) -> str:
        return f"<family {self.name}>"


def json_line(line: str) -> dict[str, Any] | None:
    """The JSON object on ``line``, or None for anything else (banners, blank lines)."""
    text = line.strip()
    if not text.startswith("{"):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def fresh_input(prompt: int | None, cached: int | None) -> int | None:
    """Input tokens not read from cache, from a prompt count that includes the cached ones.

    OpenAI and Gemini count cached tokens inside the prompt; tackroom's ``input``
    (Anthropic's convention) excludes them. Without a cached figure the prompt
    count is all that is known, and is kept; a prompt smaller than its cached
    part follows neither convention, so it is unknown rather than guessed.
    """
    if prompt is None or cached is None:
        return prompt
    return prompt - cached if prompt >= cached else None


def int_or_none(value: Any) -> int | None:
    """A reported integer, or None: booleans, floats and strings are not token counts."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None
