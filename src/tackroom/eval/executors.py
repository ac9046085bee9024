"""Where an evaluation's cells run: the executor seam, and the bounded local pool.

An executor takes cells and runs each to a :class:`~tackroom.eval.cell.CellResult`, saying when
one starts and when one ends; the evaluation stores each result as it ends. The local pool runs at
most ``jobs`` cells at once (default: the cores), and at most ``per_harness[name]`` of one
harness; :class:`tackroom.eval.ray.RayExecutor` runs them as Ray tasks on a cluster.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from tackroom.errors import TackroomError
from tackroom.eval.cell import ORACLE, Cell, CellResult, run_cell

Started = Callable[[Cell], None]
Finished = Callable[[Cell, CellResult], None]


class Executor(Protocol):
    """Runs cells; ``finished`` is called with each result as it ends, in the caller's loop."""

    async def run(
        self, cells: Sequence[Cell], directory: Path, started: Started, finished: Finished
    ) -> None: ...


def warm(cells: Sequence[Cell], adapters: Any) -> None:
    """Load the run path, the harnesses' families and (for captured cells) the gateway before any
    cell starts: the pool's start, as the price table is, not its first cells' time."""
    from tackroom.run.runner import warm as warm_runs

    harnesses = {c.harness for c in cells if c.harness != ORACLE}
    families = {adapters[name].family for name in harnesses if name in adapters}
    capture = any(c.capture and c.gateway is None for c in cells if c.harness != ORACLE)
    with contextlib.suppress(TackroomError):  # a family that cannot load: its cells say so, each
        warm_runs(families, capture=capture)


class LocalExecutor:
    """A bounded pool on this machine: ``jobs`` cells at once, ``per_harness`` caps per harness."""

    def __init__(
        self,
        jobs: int | None = None,
        *,
        per_harness: Mapping[str, int] | None = None,
        environ: Mapping[str, str] | None = None,
        adapters: Any = None,
        capture_db: Path | str | None = None,
    ) -> None:
        self.jobs = max(1, jobs or os.cpu_count() or 1)
        self.capture_db = capture_db
        self.per_harness = dict(per_harness or {})
        self.environ = environ
        self.adapters = adapters

    async def run(self, cells: Sequence[Cell], directory: Path, started: Started, finished: Finished) -> None:
        if self.adapters is None:
            from tackroom.adapters.resolve import load_adapters

            self.adapters = await asyncio.to_thread(load_adapters, env=self.environ)
        await asyncio.to_thread(warm, cells, self.adapters)
        pool = asyncio.Semaphore(self.jobs)
        caps = {name: asyncio.Semaphore(limit) for name, limit in self.per_harness.items()}

        async def one(cell: Cell) -> None:
            async with contextlib.AsyncExitStack() as held:
                if cell.harness in caps:
                    await held.enter_async_context(caps[cell.harness])
                await held.enter_async_context(pool)
                started(cell)
                result = await run_cell(
                    cell,
                    directory / "cells" / cell.id,
                    environ=self.environ,
                    adapters=self.adapters,
                    capture_db=self.capture_db,
                )
            finished(cell, result)

        tasks = [asyncio.ensure_future(one(cell)) for cell in cells]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.gather(*tasks, return_exceptions=True)
