"""What the real-harness tests share besides fixtures."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tackroom.run.result import Result

#: The harnesses that install and run on this machine (the others are data, tested on fixtures).
REAL = ["claude-code"]


RunFn = Callable[..., Result]


def processes_in(directory: Path) -> list[int]:
    """Pids of live processes whose working directory is inside ``directory``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = (entry / "cwd").resolve()
        except OSError:
            continue
        if cwd == directory or directory in cwd.parents:
            found.append(int(entry.name))
    return found
