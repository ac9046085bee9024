"""A control group around a run's harness: the membership a descendant cannot shed.

A process group is left by ``setsid()``, and the run's marker in the
environment by clearing it; a cgroup is inherited by every child and left only
by a process that writes its pid into another cgroup's ``cgroup.procs``: root,
or the user where the hierarchy is delegated to them (a systemd desktop), and
only by asking for it, never by the daemon's usual setsid-and-fork. So a run
that can make one puts its harness in it, and whatever is still in it once the
harness's group is gone has escaped, however it went about it.

Only membership is used (``cgroup.procs``): no controller, no limit. Where
cgroups can be made depends on the machine: the unified (v2) hierarchy under
the cgroup this process is in (delegated to the user by systemd on a desktop,
or root's), else a v1 hierarchy. Where none can be made, :func:`cage` returns
None and a run falls back on the marker alone, as on macOS.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

_ROOT = Path("/sys/fs/cgroup")
_PREFIX = "tackroom-"
_MAX_ADOPTED = 256
"""The most processes moved in at the start (a harness has its leader and perhaps a child or two)."""


class Cage:
    """One cgroup made for one run; :meth:`remove` once it is empty."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def adopt(self, pid: int) -> None:
        """Move ``pid`` (a harness just started) in, with whatever it has started already.

        Done from the parent as soon as the harness runs, not between fork and exec: a function
        there makes the interpreter fork holding its lock, which stalled a caller's event loop for
        a quarter of a second under sixteen concurrent runs. The moment before the move is a
        harness's very first instructions; what it forked by then is moved too, found through
        ``/proc/<pid>/task/*/children``.
        """
        todo, seen = [pid], 0
        while todo and seen < _MAX_ADOPTED:
            current = todo.pop()
            seen += 1
            if not self._write(current):
                continue
            todo.extend(_children(current))

    def _write(self, pid: int) -> bool:
        try:
            fd = os.open(self.path / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC)
        except OSError:
            return False
        try:
            os.write(fd, str(pid).encode())
        except OSError:  # gone already, or not ours to move
            return False
        finally:
            os.close(fd)
        return True

    def members(self) -> list[int]:
        """The pids in it now (the dead leave at once; a zombie's parent still holds it)."""
        try:
            text = (self.path / "cgroup.procs").read_text(encoding="ascii")
        except OSError:
            return []
        return [int(line) for line in text.split() if line.isdigit()]

    def remove(self) -> None:
        """Take the cgroup away (it must be empty; one that is not is left, and says so by existing)."""
        with contextlib.suppress(OSError):
            self.path.rmdir()


def cage(name: str) -> Cage | None:
    """A new, empty cgroup for the run called ``name``, where this machine lets tackroom make one."""
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in name)[:120]
    for parent in _parents():
        path = parent / f"{_PREFIX}{safe}-{os.getpid()}"
        try:
            path.mkdir()
        except OSError:  # not allowed here, or no such hierarchy after all
            continue
        if (path / "cgroup.procs").exists():
            return Cage(path)
        with contextlib.suppress(OSError):
            path.rmdir()
    return None


def _parents() -> list[Path]:
    """Where a cgroup may be made: below this process's own cgroup, in each hierarchy mounted."""
    try:
        lines = Path("/proc/self/cgroup").read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    found: list[Path] = []
    for line in lines:
        number, _, rest = line.partition(":")
        controllers, _, relative = rest.partition(":")
        relative = relative.lstrip("/")
        if number == "0" and not controllers:  # the unified (v2) hierarchy
            for mount in (_ROOT, _ROOT / "unified"):
                if (mount / "cgroup.controllers").exists() or (mount / "cgroup.procs").exists():
                    found.append(mount / relative)
                    break
        elif controllers == "pids":  # a v1 hierarchy with no limit set by default
            found.append(_ROOT / "pids" / relative)
    return [path for path in found if path.is_dir()]


def _children(pid: int) -> list[int]:
    """The direct children of every thread of ``pid``, as /proc lists them (none once it is gone)."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")  # noqa: PTH208 - bare calls, as the process layer's
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as listed:  # noqa: PTH123
                found += [int(child) for child in listed.read().split()]
        except (OSError, ValueError):
            continue
    return found
