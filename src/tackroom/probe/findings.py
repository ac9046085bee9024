"""What a probe found: observations per capability, and how each of its runs went.

A probe observes; it never decides the outcome of the whole probe. It
records each capability it looked at (``true``, ``false`` or ``"n/o"``, with
a note where there is something to say), a note for each capability it did
not test and why, and a :class:`Trouble` for each run that did not go as a
probe run must (it timed out, or failed before it could show anything). The
runner turns troubles into the row's outcome.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from tackroom.probe.rows import Support, clip


@dataclass(frozen=True)
class Trouble:
    """A probe run that did not go as it must: it timed out, or failed."""

    kind: Literal["timeout", "failed"]
    note: str


@dataclass
class Findings:
    """Observations and notes by capability, and the troubles of the runs they came from."""

    supports: dict[str, Support] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    troubles: list[Trouble] = field(default_factory=list)

    def untested(self, capability: str, why: str) -> None:
        """Say why ``capability`` was not tested (it stays absent from ``supports``)."""
        self.supports.pop(capability, None)
        self.notes[capability] = clip(f"untested: {why}")

    def add(self, seen: Observations, trouble: Trouble | None) -> None:
        """Take one run's observations; of a run in trouble, only what it did show (``true``)."""
        if trouble is not None:
            self.troubles.append(trouble)
        for capability, (value, note) in seen.items():
            if trouble is not None and value is not True:
                self.untested(capability, f"{trouble.note}, before this could be observed")
                continue
            self.supports[capability] = value
            if note:
                self.notes[capability] = clip(note)
            else:
                self.notes.pop(capability, None)


Observations = dict[str, tuple[Support, str]]
"""One run's observations: capability -> (value, note; empty for none)."""
