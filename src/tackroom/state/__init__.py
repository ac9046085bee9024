"""The state database: one SQLite file with named migrations, shared by everything tackroom records.

Capability rows live here (:class:`CapabilityRows`), and the trace index
(:mod:`tackroom.trace.index`); the gateway's captures add their tables through
:mod:`tackroom.state.migrations`. Names are imported on first use, so the
modules that only need the database (a usage report) do not load the rest.

::

    from tackroom.state import CapabilityRows, StateDB

    rows = CapabilityRows(StateDB.default())
    latest = rows.latest("claude-code")
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tackroom.state.capabilities import CapabilityRows
    from tackroom.state.db import STATE_FILE, StateDB, state_path

__all__ = ["STATE_FILE", "CapabilityRows", "StateDB", "state_path"]

_WHERE = {
    "CapabilityRows": "tackroom.state.capabilities",
    "STATE_FILE": "tackroom.state.db",
    "StateDB": "tackroom.state.db",
    "state_path": "tackroom.state.db",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'tackroom.state' has no attribute {name!r}")
    return getattr(import_module(module), name)
