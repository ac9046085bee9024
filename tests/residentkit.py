"""A resident tackroom for a test: started in the test's own cache directory, gone at its end."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import clikit

TACKROOM = str(Path(sys.executable).parent / "tackroom")
"""The ``tackroom`` command as installed (``pip install -e .``): its ``sys.path`` is the same from
every directory, as ``python -m tackroom``'s is not."""

AUTO = {"TACKROOM_NO_RESIDENT_START": "", "CI": ""}
"""What lets a command start a resident (handover.start_for_next), which the suite keeps commands
from doing (conftest): "" is unset for both switches, and CI services set ``CI`` themselves."""


def run_cli(*args: str, **keywords: Any) -> subprocess.CompletedProcess[str]:
    """:func:`clikit.run_cli` through the installed ``tackroom`` command."""
    return clikit.run_cli(*args, command=(TACKROOM,), **keywords)


@contextlib.contextmanager
def resident_running(*args: str, env: dict[str, str] | None = None) -> Iterator[dict[str, Any]]:
    """``tackroom resident start --json ARGS``; what it said. At the end it is stopped, and killed if
    it does not go (it runs in a session of its own: nothing else would end it)."""
    done = run_cli("resident", "start", "--json", *args, env=env)
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    try:
        yield found
    finally:
        if not stopped_or_killed(found["pid"], env):
            assert gone(found["pid"], within_s=10)


def status(env: dict[str, str] | None = None) -> dict[str, Any]:
    """``tackroom resident status --json``."""
    done = run_cli("resident", "status", "--json", env=env)
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def answering(env: dict[str, str] | None = None, within_s: float = 60) -> dict[str, Any]:
    """``tackroom resident status --json`` once a resident answers (one a command started loads its
    modules first), or ``{"state": "none", ...}`` when none does within the time."""
    deadline = time.monotonic() + within_s
    while True:
        done = run_cli("resident", "status", "--json", env={**(env or {}), "TACKROOM_NO_RESIDENT": "1"})
        found: dict[str, Any] = json.loads(done.stdout)
        if found["state"] != "none" or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def stop(pid: int, env: dict[str, str] | None = None) -> None:
    """``tackroom resident stop``; the resident ``pid`` must be gone within 10 s (killed if not, so
    nothing is left running, and the test fails)."""
    if not stopped_or_killed(pid, env):
        raise AssertionError(f"the resident (pid {pid}) did not stop when asked: killed")


def stopped_or_killed(pid: int, env: dict[str, str] | None = None, within_s: float = 10) -> bool:
    """``tackroom resident stop``: whether the resident ``pid`` went within the time; if not, it is
    killed (it runs in a session of its own: nothing else would end it)."""
    run_cli("resident", "stop", env=env)
    if gone(pid, within_s=within_s):
        return True
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    return False


def gone(pid: int, within_s: float) -> bool:
    """Whether ``pid`` ended (a zombie has ended: it is not our child to reap) within the time."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return True
        if state == "Z":
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
