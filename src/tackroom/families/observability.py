"""What tackroom can see of a harness's work, by which of three ways (seed 002's observability tiers).

- **stream**: the harness prints a stream its family parses while it runs, and the usage figures
  that stream reports (none for a text-only one);
- **transcripts**: it writes session logs tackroom reads (``tackroom trace``, ``tackroom usage``);
- **gateway**: its model calls can be pointed at a base URL (``model_endpoint``), so a gateway in
  front of them captures every call, its tokens and its cost, under the run's trace id.

The tier sums them up: ``full`` when all three are there and the stream reports usage, ``partial``
when the gateway is (its calls are captured, but not all of the rest is), ``minimal`` when it is
not (the harness calls its provider directly: cost only from what it says itself, or a bill).
Everything here is read from the adapter's data and its family's code, never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from tackroom.families import get_family

if TYPE_CHECKING:
    from tackroom.adapters.adapter import Adapter

Tier = Literal["full", "partial", "minimal"]


@dataclass(frozen=True)
class Observability:
    """One adapter's ways of being seen."""

    stream: str
    """The output its family parses (``claude stream-json``, ``aider text``)."""
    stream_usage: tuple[str, ...]
    """The usage figures that stream reports (``input``, ``output``, ...): empty when none."""
    transcripts: bool
    """tackroom reads the session logs it writes."""
    gateway: str | None
    """The wire API its model calls take through a base URL tackroom sets; None when it has none."""

    @property
    def tier(self) -> Tier:
        if self.gateway is not None and self.transcripts and self.stream_usage:
            return "full"
        return "partial" if self.gateway is not None else "minimal"

    @property
    def ways(self) -> tuple[str, ...]:
        """What carries usage or calls: ``stream`` (when it reports usage), ``transcripts``, ``gateway``."""
        named = (("stream", bool(self.stream_usage)), ("transcripts", self.transcripts))
        return (*(name for name, there in named if there), *(("gateway",) if self.gateway else ()))

    def summary(self) -> str:
        """``partial: stream, transcripts, gateway``: the tier and its ways, for a table cell."""
        return f"{self.tier}: {', '.join(self.ways) or 'text only'}"

    def to_json(self) -> dict[str, Any]:
        return {
            "tier": self.tier,
            "stream": self.stream,
            "stream_usage": list(self.stream_usage),
            "transcripts": self.transcripts,
            "gateway": self.gateway,
        }


def observability(adapter: Adapter) -> Observability:
    """How ``adapter``'s harness can be seen at work, from its data and its family."""
    family = get_family(adapter.family)
    endpoint = adapter.spec.model_endpoint
    return Observability(
        stream=family.stream,
        stream_usage=tuple(sorted(family.reports_usage)),
        transcripts=adapter.spec.transcripts is not None and family.transcripts() is not None,
        gateway=endpoint.wire_api if endpoint is not None else None,
    )
