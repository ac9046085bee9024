"""Ask a program a short question and read a bounded answer: a flood or a hang costs nothing.

``subprocess.run(capture_output=True)`` keeps everything a child prints until
it exits or times out; a harness executable that answers ``--version`` like
``yes`` filled 20 GB that way in 30 s. Here the child runs in its own process
group, at most ``limit`` bytes of each stream are kept, and the group is
killed as soon as the answer is long enough or the time is up.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ANSWER_LIMIT = 64 * 1024
"""Bytes kept of each stream: a version line, a usage text, a short JSON answer."""


@dataclass(frozen=True)
class Answer:
    """What a child printed (each stream cut at the limit) and how it ended."""

    returncode: int | None
    """Its exit status; None when it was stopped (time up, or it said too much)."""
    stdout: bytes
    stderr: bytes
    cut: bool
    """It printed more than the limit on a stream, and was stopped there."""
    timed_out: bool


def ask(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    timeout_s: float,
    cwd: Path | None = None,
    limit: int = ANSWER_LIMIT,
) -> Answer:
    """Run ``argv`` with no stdin; raises OSError if it cannot start."""
    child = subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(env),
        cwd=cwd,
        start_new_session=True,
    )
    assert child.stdout is not None and child.stderr is not None
    out, err = bytearray(), bytearray()
    kept = {child.stdout.fileno(): out, child.stderr.fileno(): err}
    deadline = time.monotonic() + timeout_s
    cut = timed_out = False
    try:
        with selectors.DefaultSelector() as selector:
            for fd in kept:
                os.set_blocking(fd, False)
                selector.register(fd, selectors.EVENT_READ)
            while selector.get_map() and not cut:
                left = deadline - time.monotonic()
                if left <= 0:
                    timed_out = True
                    break
                for key, _ in selector.select(left):
                    fd = int(key.fd)
                    try:
                        chunk = os.read(fd, 65536)
                    except BlockingIOError:
                        continue
                    if not chunk:
                        selector.unregister(fd)
                        continue
                    kept[fd] += chunk[: limit - len(kept[fd])]
                    cut = cut or len(kept[fd]) >= limit
        returncode = None if (cut or timed_out) else _wait(child, deadline)
    finally:
        _stop(child)
        child.stdout.close()
        child.stderr.close()
    return Answer(returncode, bytes(out), bytes(err), cut, timed_out or (returncode is None and not cut))


def _wait(child: subprocess.Popen[bytes], deadline: float) -> int | None:
    """The exit status once both pipes are closed; None if it is not gone by the deadline."""
    with contextlib.suppress(subprocess.TimeoutExpired):
        return child.wait(max(0.0, deadline - time.monotonic()))
    return None


def _stop(child: subprocess.Popen[bytes]) -> None:
    """Kill whatever is left of the child's process group, and reap the child."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGKILL)
    child.wait()
