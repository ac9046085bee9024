"""The adapter catalog: one row per adapter, as ``tackroom adapters list`` shows it.

Built from the (cached) resolution without touching any adapter's typed spec,
so a listing never pays for validation it does not need.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tackroom.adapters.resolve import load_adapters


def catalog(*, project: Path | None = None, config: Path | None = None) -> list[dict[str, Any]]:
    """One row per adapter: name, family, extends, source, executable, verified_with, hash."""
    return [
        {
            "name": a.name,
            "family": a.family,
            "extends": a.extends,
            "source": a.source,
            "executable": a.executable,
            "verified_with": a.verified_with,
            "hash": a.hash,
        }
        for a in load_adapters(config=config, project=project).values()
    ]
