"""The normalized event model every family parser emits.

One vocabulary for every harness, aligned with ACP's session updates and
Harbor's ATIF steps:

=================  ==============================  ==========================
tackroom           ACP ``session/update``          ATIF
=================  ==============================  ==========================
SessionStarted     (session/new result)            trajectory ``session_id``
AssistantText      ``agent_message_chunk``         step ``source: agent``
ToolCall           ``tool_call``                   step ``tool_calls[]``
ToolResult         ``tool_call_update`` completed  step ``observation``
UsageReport        (usage in prompt response)      step ``metrics``
ErrorEvent         (error response)                —
Finished           ``stopReason``                  final step
=================  ==============================  ==========================

Every event keeps the raw line it was parsed from. A usage figure a harness did
not report is ``None`` (shown as ``"not_reported"``), never an invented 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

NOT_REPORTED = "not_reported"


@dataclass(frozen=True)
class Usage:
    """Token counts; ``None`` means the harness did not report that figure."""

    input: int | None = None
    output: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None
    reasoning: int | None = None

    def __add__(self, other: Usage) -> Usage:
        def add(a: int | None, b: int | None) -> int | None:
            return b if a is None else a if b is None else a + b

        return Usage(*(add(getattr(self, f.name), getattr(other, f.name)) for f in fields(self)))

    @property
    def reported(self) -> bool:
        """Whether any figure was reported at all."""
        return any(getattr(self, f.name) is not None for f in fields(self))

    def to_json(self) -> dict[str, int | str]:
        return {f.name: NOT_REPORTED if (v := getattr(self, f.name)) is None else v for f in fields(self)}


@dataclass(frozen=True)
class Event:
    """Base of every event: its kind and the raw line it came from."""

    kind: ClassVar[str] = "event"
    raw: str = field(default="", repr=False)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": self.kind}
        for item in fields(self):
            value = getattr(self, item.name)
            data[item.name] = value.to_json() if isinstance(value, Usage) else value
        return data


@dataclass(frozen=True)
class SessionStarted(Event):
    """The harness started (or resumed) a session: its id and model, where it says them."""

    kind: ClassVar[str] = "session_started"
    session_id: str | None = None
    model: str | None = None


@dataclass(frozen=True)
class AssistantText(Event):
    """Text the model wrote to the user."""

    kind: ClassVar[str] = "assistant_text"
    text: str = ""


@dataclass(frozen=True)
class ToolCall(Event):
    """The model asked for a tool, in the harness's own tool name, with its input."""

    kind: ClassVar[str] = "tool_call"
    name: str = ""
    call_id: str | None = None
    input: Any = None


@dataclass(frozen=True)
class ToolResult(Event):
    """What a tool call returned (``call_id`` links it to its :class:`ToolCall`)."""

    kind: ClassVar[str] = "tool_result"
    call_id: str | None = None
    output: str | None = None
    is_error: bool = False


@dataclass(frozen=True)
class UsageReport(Event):
    """Usage of one model call (``scope="turn"``) or of the whole run (``scope="total"``)."""

    kind: ClassVar[str] = "usage"
    usage: Usage = field(default_factory=Usage)
    scope: str = "turn"


@dataclass(frozen=True)
class ErrorEvent(Event):
    """An error the harness reported; ``fatal`` when the run failed because of it."""

    kind: ClassVar[str] = "error"
    message: str = ""
    fatal: bool = True


@dataclass(frozen=True)
class Finished(Event):
    """The run's terminal event: the final text and whether the harness called it a success."""

    kind: ClassVar[str] = "finished"
    final_text: str | None = None
    ok: bool = True
