"""What tests ask of /proc: the processes still working in a directory, those of an argv, and this
process's children."""

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


def processes(matching: Callable[[list[bytes]], bool], parent: int | None = None) -> dict[int, list[bytes]]:
    """``pid -> argv`` of the live processes whose argv ``matching`` accepts (``parent``'s children
    alone, when given)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError, IndexError):
            continue
        if (parent is None or ppid == parent) and matching(argv):
            found[int(entry.name)] = argv
    return found


def children(matching: Callable[[list[bytes]], bool]) -> list[int]:
    """Pids of this process's live children whose argv ``matching`` accepts."""
    return list(processes(matching, parent=os.getpid()))
