"""Where a working directory's repository is: its root, and the project file there.

A harness reads project config from every directory between its workdir and
the repository root (the nearest parent holding ``.git``); the project file
``tackroom.toml`` is the one at that root.
"""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_FILE = "tackroom.toml"


def find_project_file(start: Path) -> Path | None:
    """The ``tackroom.toml`` at the root of the repository containing ``start``, if any."""
    start = start.resolve()
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            candidate = directory / PROJECT_FILE
            return candidate if candidate.is_file() else None
    return None


def project_chain(workdir: Path) -> list[Path]:
    """The directories whose project config a harness in ``workdir`` reads: up to the repository root."""
    start = Path(os.path.realpath(workdir))
    chain = []
    for directory in (start, *start.parents):
        chain.append(directory)
        if (directory / ".git").exists():
            return chain
    return [start]
