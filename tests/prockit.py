"""What tests ask of /proc: the processes still working in a directory, and this process's children."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path


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


def children(matching: Callable[[list[bytes]], bool]) -> list[int]:
    """Pids of this process's live children whose argv ``matching`` accepts."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError, IndexError):
            continue
        if parent == os.getpid() and matching(argv):
            found.append(int(entry.name))
    return found
