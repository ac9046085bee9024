"""A control group around a run's harness: the membership a descendant cannot shed.

A process group is left by ``setsid()``, and the run's marker in the
environment by clearing it; a cgroup is inherited by every child and left only
by a process allowed to write to another cgroup's ``cgroup.procs`` (which a
harness running as the user is not, below a cgroup tackroom made). So a run
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
from collections.abc import Callable
from pathlib import Path

_ROOT = Path("/sys/fs/cgroup")
_PREFIX = "tackroom-"


class Cage:
    """One cgroup made for one run; :meth:`remove` once it is empty."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def opener(self) -> Callable[[], None] | None:
        """What the harness's leader runs between fork and exec to step in itself, so nothing it
        starts is born outside (moving it in from here once it runs would race its first fork);
        None when the cgroup cannot be written. The descriptor closes at exec, and in
        :meth:`remove`."""
        try:
            fd = os.open(self.path / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC)
        except OSError:
            return None
        self._fd = fd

        def step_in() -> None:  # in the child: a bare system call, no lock, no allocation to speak of
            with contextlib.suppress(OSError):
                os.write(fd, b"0")

        return step_in

    def members(self) -> list[int]:
        """The pids in it now (the dead leave at once; a zombie's parent still holds it)."""
        try:
            text = (self.path / "cgroup.procs").read_text(encoding="ascii")
        except OSError:
            return []
        return [int(line) for line in text.split() if line.isdigit()]

    def remove(self) -> None:
        """Take the cgroup away (it must be empty; one that is not is left, and says so by existing)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
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
