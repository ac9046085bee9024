"""Run the checks on one adapter, and the assertions an adapter author's tests call."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from tackroom.conformance.findings import Finding, Raw, locate
from tackroom.conformance.roundtrip import check_hooks_load, check_round_trip
from tackroom.conformance.static import (
    check_detect,
    check_family,
    check_hook_maps,
    check_renderers,
    check_templates,
    check_tool_vocabulary,
)
from tackroom.errors import ConformanceError

if TYPE_CHECKING:
    from tackroom.adapters.adapter import Adapter

CHECKS: dict[str, Callable[[Adapter], list[Raw]]] = {
    "renderers": check_renderers,
    "hook-maps": check_hook_maps,
    "tool-vocabulary": check_tool_vocabulary,
    "templates": check_templates,
    "family": check_family,
    "detect": check_detect,
    "round-trip": check_round_trip,
    "hooks-load": check_hooks_load,
}
"""Every check, by name, in the order they run."""


def check_adapter_conformance(adapter: Adapter, *, checks: Sequence[str] | None = None) -> list[Finding]:
    """Run the checks (default: all of :data:`CHECKS`) on ``adapter``; every failure, located."""
    selected = list(CHECKS) if checks is None else list(checks)
    unknown = [c for c in selected if c not in CHECKS]
    if unknown:
        raise ValueError(f"unknown checks {unknown}; checks: {', '.join(CHECKS)}")
    return [
        locate(adapter, name, key, message) for name in selected for key, message in CHECKS[name](adapter)
    ]


def assert_adapter_conformance(adapter: Adapter) -> None:
    """Raise :class:`~tackroom.errors.ConformanceError` listing every failure, if any check fails."""
    findings = check_adapter_conformance(adapter)
    if findings:
        raise ConformanceError(adapter.name, findings)


def assert_adapter_loads_hooks(adapter: Adapter) -> None:
    """Raise :class:`~tackroom.errors.ConformanceError` unless hooks rendered into a temp home come back.

    The hooks of :func:`generated_profile` (every mapped moment, each channel
    where it works, a tool matcher) are rendered into a temporary home and
    read back through the hooks engine's own parser. This catches a layout
    that writes the right file in a shape its parser (and the harness) does
    not read: the pure checks pass it, but the agent would silently run no hooks.
    """
    if adapter.spec.capabilities.hooks is None:
        finding = locate(
            adapter, "hooks-load", ("capabilities",), "declares no hooks capability: no hooks to load"
        )
        raise ConformanceError(adapter.name, [finding])
    findings = check_adapter_conformance(adapter, checks=["hooks-load"])
    if findings:
        raise ConformanceError(adapter.name, findings)
