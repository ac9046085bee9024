"""A coroutine run to its end from synchronous code, whether or not an event loop is running here.

``asyncio.run`` refuses to start inside a running loop (Jupyter, an async application): there the
coroutine gets a loop of its own in a worker thread, and the call waits for it as any blocking
call would. ``await`` the coroutine instead to let the caller's loop go on meanwhile.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_to_end(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """``make()``'s coroutine run to its end: on this thread, or on a thread of its own when this
    thread's loop is running (the coroutine is made there, for that loop)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        running = False
    else:
        running = True
    if not running:  # outside the except: the run's own errors carry no "no running loop" context
        return asyncio.run(make())
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1, thread_name_prefix="tackroom-run") as pool:
        return pool.submit(lambda: asyncio.run(make())).result()
