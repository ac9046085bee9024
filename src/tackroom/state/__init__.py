"""The state database: one SQLite file with named migrations, shared by everything tackroom records.

Capability rows live here today (:class:`CapabilityRows`); runs, traces and
gateway captures add their tables through :mod:`tackroom.state.migrations`.

::

    from tackroom.state import CapabilityRows, StateDB

    rows = CapabilityRows(StateDB.default())
    latest = rows.latest("claude-code")
"""

from tackroom.state.capabilities import CapabilityRows
from tackroom.state.db import STATE_FILE, StateDB, state_path

__all__ = ["STATE_FILE", "CapabilityRows", "StateDB", "state_path"]
