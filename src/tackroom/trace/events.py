"""The normalized event model every family parser emits.

One vocabulary for every harness, aligned with ACP's session updates and
Harbor's ATIF steps:

=================  ==============================  ==========================
tackroom           ACP ``session/update``          ATIF
=================  ==============================  ==========================
SessionStarted     (session/new result)            trajectory ``session_id``
UserText           ``user_message_chunk``          step ``source: user``
AssistantText      ``agent_message_chunk``         step ``source: agent``
ToolCall           ``tool_call``                   step ``tool_calls[]``
ToolResult         ``tool_call_update`` completed  step ``observation``
UsageReport        (usage in prompt response)      step ``metrics``
ErrorEvent         (error response)                —
Finished           ``stopReason``                  final step
Record             (none: kept raw)                step ``extra``
=================  ==============================  ==========================

Every event keeps the raw line it was parsed from (the runner bounds how many
events a run keeps in memory and on disk).

Usage figures are never invented and never negative. Each of ``input``,
``output``, ``cache_read``, ``cache_write`` and ``reasoning`` is one of:

* a count (an ``int`` >= 0) the harness reported;
* ``"not_reported"`` (``None``): the harness did not report that figure at all;
* ``"unknown"`` (``None``, and named in :attr:`Usage.unknown`): it was
  reported only in part (a total whose parts did not all carry it, a figure
  the harness rounded) or contradicted itself (a negative count, a prompt
  smaller than its own cached part). A number would be a guess, so there is none.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

NOT_REPORTED = "not_reported"
UNKNOWN = "unknown"
FIGURES = ("input", "output", "cache_read", "cache_write", "reasoning")
"""The usage figures, in the order :class:`Usage` takes them."""


@dataclass(frozen=True)
class Usage:
    """Token counts: an ``int``, or ``None`` when not reported or (named in ``unknown``) not knowable.

    A negative count given here is a contradiction and is recorded as unknown.

    >>> import tackroom
    >>> tackroom.Usage(input=1200, output=50).to_json()["cache_read"]
    'not_reported'
    """

    input: int | None = None
    output: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None
    reasoning: int | None = None
    unknown: frozenset[str] = frozenset()
    """The figures that were reported in part or contradicted themselves; their value is ``None``."""

    def __post_init__(self) -> None:
        negative = [name for name in FIGURES if (getattr(self, name) or 0) < 0]
        if not negative and not self.unknown:
            return  # the common case, once per usage line of a stream: nothing to normalise
        strange = set(self.unknown) - set(FIGURES)
        if strange:
            raise ValueError(f"not usage figures: {sorted(strange)}")
        unknown = frozenset(self.unknown).union(negative)
        object.__setattr__(self, "unknown", unknown)
        for name in unknown:
            object.__setattr__(self, name, None)

    def __add__(self, other: Usage) -> Usage:
        """The sum of two reports: a figure only one of them carries is unknown, not that one's value.

        A report with nothing in it (``Usage()``) adds nothing, so ``sum(reports, Usage())`` works.
        """
        if not other.reported:
            return self
        if not self.reported:
            return other
        values: dict[str, int | None] = {}
        unknown: set[str] = set()
        for name in FIGURES:
            a, b = getattr(self, name), getattr(other, name)
            if name in self.unknown or name in other.unknown or (a is None) != (b is None):
                unknown.add(name)
            else:
                values[name] = None if a is None or b is None else a + b
        return Usage(**values, unknown=frozenset(unknown))

    @property
    def reported(self) -> bool:
        """Whether any figure was reported at all (an unknown one was, in part)."""
        return bool(self.unknown) or any(getattr(self, name) is not None for name in FIGURES)

    def state(self, name: str) -> int | str:
        """One figure as JSON shows it: its count, ``"unknown"`` or ``"not_reported"``."""
        value: int | None = getattr(self, name)
        if value is not None:
            return value
        return UNKNOWN if name in self.unknown else NOT_REPORTED

    def to_json(self) -> dict[str, int | str]:
        return {name: self.state(name) for name in FIGURES}


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    # fields() filters out ClassVars on every call: once per event type is enough.
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(item.name for item in fields(cls))
    return names


@dataclass(frozen=True)
class Event:
    """Base of every event: its kind and the raw line it came from.

    >>> import tackroom
    >>> tackroom.AssistantText(text="hi").to_json()
    {'type': 'assistant_text', 'raw': '', 'text': 'hi'}
    """

    kind: ClassVar[str] = "event"
    raw: str = field(default="", repr=False)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": self.kind}
        for name in _field_names(type(self)):
            value = getattr(self, name)
            data[name] = value.to_json() if isinstance(value, Usage) else value
        return data


@dataclass(frozen=True)
class SessionStarted(Event):
    """The harness started (or resumed) a session: its id and model, where it says them.

    >>> import tackroom
    >>> tackroom.SessionStarted(session_id="abc", model="sonnet").to_json()["session_id"]
    'abc'
    """

    kind: ClassVar[str] = "session_started"
    session_id: str | None = None
    model: str | None = None


@dataclass(frozen=True)
class UserText(Event):
    """Text the user (or the run's prompt) sent: it starts a turn. Transcripts record it, streams rarely.

    >>> import tackroom
    >>> tackroom.UserText(text="fix the bug").to_json()["type"]
    'user_text'
    """

    kind: ClassVar[str] = "user_text"
    text: str = ""


@dataclass(frozen=True)
class AssistantText(Event):
    """Text the model wrote to the user.

    >>> import tackroom
    >>> tackroom.AssistantText(text="Done.").text
    'Done.'
    """

    kind: ClassVar[str] = "assistant_text"
    text: str = ""


@dataclass(frozen=True)
class ToolCall(Event):
    """The model asked for a tool, in the harness's own tool name, with its input.

    >>> import tackroom
    >>> tackroom.ToolCall(name="Bash", call_id="1", input={"command": "ls"}).to_json()["input"]
    {'command': 'ls'}
    """

    kind: ClassVar[str] = "tool_call"
    name: str = ""
    call_id: str | None = None
    input: Any = None


@dataclass(frozen=True)
class ToolResult(Event):
    """What a tool call returned (``call_id`` links it to its :class:`ToolCall`).

    >>> import tackroom
    >>> result = tackroom.ToolResult(call_id="1", output="README.md", is_error=False)
    >>> result.to_json()["call_id"], result.is_error
    ('1', False)
    """

    kind: ClassVar[str] = "tool_result"
    call_id: str | None = None
    output: str | None = None
    is_error: bool = False


@dataclass(frozen=True)
class UsageReport(Event):
    """Usage of one model call (``scope="turn"``) or of the whole run (``scope="total"``).

    >>> import tackroom
    >>> report = tackroom.UsageReport(usage=tackroom.Usage(input=10, output=2), scope="total")
    >>> report.to_json()["usage"]["output"], report.scope
    (2, 'total')
    """

    kind: ClassVar[str] = "usage"
    usage: Usage = field(default_factory=Usage)
    scope: str = "turn"


@dataclass(frozen=True)
class ErrorEvent(Event):
    """An error the harness reported; ``fatal`` when the run failed because of it.

    >>> import tackroom
    >>> tackroom.ErrorEvent(message="API Error: 400", fatal=True).to_json()["fatal"]
    True
    """

    kind: ClassVar[str] = "error"
    message: str = ""
    fatal: bool = True


@dataclass(frozen=True)
class Finished(Event):
    """The run's terminal event: the final text and whether the harness called it a success.

    >>> import tackroom
    >>> tackroom.Finished(final_text="done", ok=False).to_json()
    {'type': 'finished', 'raw': '', 'final_text': 'done', 'ok': False}
    """

    kind: ClassVar[str] = "finished"
    final_text: str | None = None
    ok: bool = True


@dataclass(frozen=True)
class Record(Event):
    """A transcript record no reader knows (a new harness release's line type): kept whole, never dropped.

    Only transcripts yield it; a live stream's unknown lines are not events.

    >>> import tackroom
    >>> tackroom.Record(raw='{"type": "new-kind"}', record_type="new-kind").record_type
    'new-kind'
    """

    kind: ClassVar[str] = "record"
    record_type: str | None = None
    """The record's own type name, where it has one (``"type"`` of a JSON line)."""
