"""Long commands stopped by a signal as a timeout would stop them: cleaned up, then exit 128 + N.

SIGTERM, SIGHUP and SIGQUIT cancel the command's work (which stops what it started), and so do
SIGUSR1, SIGUSR2 and SIGALRM, whose default is to end the process at once and orphan the harness
with no ``result.json``; Ctrl-C is ``asyncio.run``'s own (it cancels the work and raises
KeyboardInterrupt: exit 130). SIGPIPE stays ignored, as Python sets it: a reader that goes away
(``tackroom run --events | head -1``) does not stop the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Coroutine
from typing import Any, TypeVar

STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM)
T = TypeVar("T")


class Stopped(Exception):
    """A stop signal ended the work: the command exits 128 + its number."""

    def __init__(self, number: int) -> None:
        super().__init__(number)
        self.number = number


def until_signal(work: Coroutine[Any, Any, T], said: str) -> T:
    """Run ``work`` to the end, or until a stop signal: then cancel it (which cleans up), print
    ``tackroom: stopped by SIGNAL; <said>`` and raise :class:`Stopped`."""
    received: list[int] = []

    async def main() -> T:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        for number in STOP_SIGNALS:
            loop.add_signal_handler(number, _stop, task, number, received)
        try:
            return await work
        finally:
            for number in STOP_SIGNALS:
                loop.remove_signal_handler(number)

    try:
        return asyncio.run(main())
    except asyncio.CancelledError:
        if not received:
            raise
        name = signal.Signals(received[0]).name
        with contextlib.suppress(OSError):  # after SIGHUP the terminal may be gone
            print(f"tackroom: stopped by {name}; {said}", file=sys.stderr)
        raise Stopped(received[0]) from None


def _stop(task: asyncio.Task[Any], number: int, received: list[int]) -> None:
    # A second signal while the first is being handled stops the cleanup's graceful part too.
    received.append(number)
    task.cancel()
