"""What an adapter's data claims a probe will prove: one list, read by the probe's tests, ``doctor``
and the matrix's notes alike."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tackroom.errors import TackroomError
from tackroom.probe.rows import CAPABILITIES

if TYPE_CHECKING:
    from tackroom.adapters.adapter import Adapter


def declared_capabilities(adapter: Adapter) -> list[str]:
    """The capabilities the adapter's data claims (what a probe of it is expected to prove)."""
    spec = adapter.spec
    caps = spec.capabilities
    hooks = caps.hooks
    claims = {
        "rules.read": caps.rules is not None,
        "skills.visible": caps.skills is not None,
        "agents.visible": caps.subagents is not None,
        "commands.expand": caps.commands is not None,
        "hooks.inject": hooks is not None and hooks.inject is not None,
        "hooks.refuse": hooks is not None and hooks.refuse is not None,
        # A harness whose output carries no usage figure (grok) cannot report it exactly.
        "usage.exact": spec.model_endpoint is not None and bool(_reports_usage(spec.family)),
        "endpoint.model": spec.model_endpoint is not None and spec.options.model is not None,
        "error.detected": spec.model_endpoint is not None,
        "process.tree_killed": spec.model_endpoint is not None,
        "transcripts.written": spec.model_endpoint is not None
        and spec.transcripts is not None
        and spec.transcripts.runs,
    }
    for name in ("mcp.offered", "mcp.called", "mcp.answered"):
        claims[name] = caps.mcp is not None
    for moment, _event in hooks.events.items() if hooks is not None else ():
        claims[f"hooks.{moment}.fire"] = True
    return [c for c in CAPABILITIES if claims.get(c)]


def _reports_usage(family: str) -> frozenset[str]:
    from tackroom.families import get_family

    try:
        return get_family(family).reports_usage
    except TackroomError:
        return frozenset({"unknown"})  # a family that does not load claims what it did before
