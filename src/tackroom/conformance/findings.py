"""What a conformance check reports, and where in the adapter's files it points."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tackroom.adapters.adapter import Adapter, Origin

KeyPath = tuple[str, ...]
Raw = tuple[KeyPath, str]
"""One problem as a check returns it: the key path inside the adapter table, and what is wrong."""


@dataclass(frozen=True)
class Finding:
    """One conformance failure: which check, which adapter and key, where it was written, and what."""

    check: str
    adapter: str
    key: str
    """The dotted key, ``adapter.<name>.<path>`` as load errors name it."""
    message: str
    file: str | None = None
    """The file that set the key (``builtin/<name>.toml`` for a built-in), when known."""
    line: int | None = None
    via: str | None = None
    """How the key got there when not written in this adapter's own table (``extends codex``)."""

    def __str__(self) -> str:
        where = self.file or f"adapter {self.adapter!r}"
        where = f"{where}:{self.line}" if self.file and self.line is not None else where
        via = f" ({self.via})" if self.via else ""
        return f"{where}: {self.key}: {self.message} [{self.check}]{via}"

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def locate(adapter: Adapter, check: str, key: KeyPath, message: str) -> Finding:
    """A check's ``(key, message)`` as a :class:`Finding`, with the file and line that set the key."""
    dotted = ".".join(("adapter", adapter.name, *key))
    origin = _origin(adapter.origins, key, adapter.source)
    if origin is None:
        source = None if adapter.source in ("builtin", "") else adapter.source
        return Finding(check, adapter.name, dotted, message, source)
    via = origin.label if origin.label.startswith("extends ") else None
    return Finding(check, adapter.name, dotted, message, origin.file, origin.line, via)


def _origin(origins: Mapping[str, Origin], key: KeyPath, source: str) -> Origin | None:
    """Where ``key`` (or its nearest ancestor, or its first child) was written; None when unknown.

    Of a table's children, the first one the adapter's own file wrote is
    preferred: in a variant, what the operator changed is the likely cause.
    """
    for end in range(len(key), 0, -1):
        dotted = ".".join(key[:end])
        if dotted in origins:
            return origins[dotted]
        below = [o for k, o in origins.items() if k.startswith(dotted + ".")]
        own = [o for o in below if o.file == source]
        if below:
            return min(own or below, key=lambda o: o.line or 0)
    return None
