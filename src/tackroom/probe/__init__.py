"""Probes: run the real harness against the mock and record what it really does, as capability rows.

::

    from tackroom import load_adapters
    from tackroom.probe import probe

    row = probe(load_adapters()["codex"])   # a Row: outcome, supports, notes
    row.supports.get("mcp.called") is True

Names are imported on first use (``import tackroom.probe`` does no work).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "probe": "tackroom.probe.runner",
    "aprobe": "tackroom.probe.runner",
    "aprobe_all": "tackroom.probe.runner",
    "installed": "tackroom.probe.runner",
    "Row": "tackroom.probe.rows",
    "CAPABILITIES": "tackroom.probe.rows",
    "parse_row": "tackroom.probe.rows",
}

__all__ = ["CAPABILITIES", "Row", "aprobe", "aprobe_all", "installed", "parse_row", "probe"]

if TYPE_CHECKING:
    from tackroom.probe.rows import CAPABILITIES, Row, parse_row
    from tackroom.probe.runner import aprobe, aprobe_all, installed, probe


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'tackroom.probe' has no attribute {name!r}")
    return getattr(import_module(module), name)
