"""What is still running after a probe run: found through ``/proc``, and stopped.

A probe of ``process.tree_killed`` looks for anything of the run that
outlived it: a process carrying the run's ``TACKROOM_RUN_MARKER`` (every
process of a run inherits it), one whose working directory is inside the
run's workdir, or a pid the run's MCP server logged, if that pid is still
the probe's MCP server (the log sits beside the harness, so a pid in it is
outside input: never pid 1, never another program). Only the user's own
processes are looked at. Linux only: without ``/proc`` nothing is found.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterable
from pathlib import Path

from tackroom.run.session import MARKER

_PROC = Path("/proc")
_DEAD = frozenset({"Z", "X", "x"})


def leftovers(
    run_dir: Path, workdir: Path, pids: Iterable[object] = (), *, command: str | None = None
) -> dict[int, str]:
    """Live processes of the run ``run_dir`` (pid -> command line), excluding this process.

    ``pids`` (from a log) count only when their command line holds ``command``.
    """
    entry = f"{MARKER}={run_dir.name}:".encode()
    wanted = {p for p in pids if type(p) is int and p > 1} if command else set()
    found: dict[int, str] = {}
    me, uid = os.getpid(), os.getuid()
    try:
        entries = list(_PROC.iterdir())
    except OSError:
        return found
    for proc in entries:
        if not proc.name.isdigit() or int(proc.name) == me:
            continue
        pid = int(proc.name)
        with contextlib.suppress(OSError):
            if proc.stat().st_uid != uid or not alive(pid):
                continue
            named = pid in wanted and command is not None and command in command_line(pid)
            if named or _marked(proc, entry) or _inside(proc, workdir):
                found[pid] = command_line(pid)
    return found


def alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        stat = (_PROC / str(pid) / "stat").read_text(errors="replace")
    except OSError:
        return False
    return stat[stat.rindex(")") + 2 :].split(maxsplit=1)[0] not in _DEAD


def stop(pids: Iterable[int]) -> None:
    """SIGKILL each of ``pids`` (a probe leaves nothing behind, whatever it found)."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def command_line(pid: int) -> str:
    """A process's command line, for a note (empty once it is gone)."""
    try:
        raw = (_PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return ""
    return raw.rstrip(b"\0").replace(b"\0", b" ").decode("utf-8", errors="replace")[:200]


def _marked(proc: Path, entry: bytes) -> bool:
    environ = (proc / "environ").read_bytes()
    return any(item.startswith(entry) for item in environ.split(b"\0"))


def _inside(proc: Path, workdir: Path) -> bool:
    cwd = (proc / "cwd").readlink()
    return cwd == workdir or workdir in cwd.parents
