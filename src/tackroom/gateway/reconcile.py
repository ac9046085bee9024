"""A run's usage as the harness reported it, beside what its gateway saw, each difference explained.

The gateway's figures are the ground truth of what the provider said; the
harness's are what it chose to report. Each figure gets both values, their
difference (harness minus gateway) and, when they differ or one is missing,
the likeliest reason, from what the calls themselves show.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tackroom.trace.events import Usage

FIGURES = {
    "input": "input_uncached",
    "cache_read": "cache_read",
    "cache_write": "cache_write",
    "output": "output",
    "reasoning": "reasoning",
}
"""The harness's figure name, and the gateway's."""


def reconcile(harness: Usage, calls: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per figure: ``harness``, ``gateway``, ``difference`` (harness - gateway) and ``explanation``."""
    priced = [call for call in calls if call.get("wire_api") is not None]
    out: dict[str, dict[str, Any]] = {}
    for name, ours in FIGURES.items():
        reported = getattr(harness, name)
        values = [call["usage"][ours] for call in priced]
        known = [v for v in values if v is not None]
        seen = sum(known) if known else None
        difference = None if reported is None or seen is None else reported - seen
        out[name] = {
            "harness": reported,
            "gateway": seen,
            "difference": difference,
            "explanation": _why(name, reported, seen, difference, harness, values, priced),
        }
    return out


def _why(
    name: str,
    reported: int | None,
    seen: int | None,
    difference: int | None,
    harness: Usage,
    values: list[int | None],
    calls: Sequence[Mapping[str, Any]],
) -> str | None:
    if reported is None:
        return f"the harness's report has no {name} figure" + (
            " (it reported only part of it)" if name in harness.unknown else ""
        )
    if seen is None:
        return (
            "no call sent this figure to the gateway" if calls else "no model call went through the gateway"
        )
    if difference == 0:
        if None in values:
            return "equal, though some calls did not send this figure"
        return None
    if len(values) > 1 and values[-1] is not None and reported == values[-1]:
        return f"the harness reports only its last model call (of {len(values)})"
    writes = sum(call["usage"]["cache_write"] or 0 for call in calls)
    if name == "input" and difference == writes:
        return "the harness counts cache writes inside its input; the provider's input excludes them here"
    if difference is not None and difference < 0:
        return (
            f"the harness reports {-difference} fewer than its {len(values)} model call(s) used "
            "(calls it did not count: side calls, retries, or calls after its last report)"
        )
    return f"the harness reports {difference} more than the provider sent (it counts differently)"
