"""Cells as Ray tasks, for an evaluation that outgrows one machine (``pip install 'tackroom[ray]'``).

Each cell is one Ray task with the resources its task asks for (``cpus``, ``memory_mb``), shipped
with its task directory (packed once per task, put in Ray's object store) and run by
:func:`tackroom.eval.cell.run_cell` on whichever node Ray picks, in a directory of that node's;
the task returns the result and the cell's directory, packed, which the evaluation unpacks into
its own ``cells/<cell id>/``. Results stream back as they finish. A worker that dies mid-cell (its
process or its node) makes that cell ``worker_lost``, which ``--resume`` runs again; Ray itself
never retries a cell (``max_retries=0``), so a cell runs once per attempt.

A worker runs its cells with its own environment (the harnesses installed there, its keys): none of
this machine's environment is shipped.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import socket
import tarfile
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from tackroom.errors import RayUnavailableError
from tackroom.eval.cell import Cell, CellResult
from tackroom.eval.executors import Finished, Started

PACK_LIMIT = 512 * 1024 * 1024
"""A cell's directory packed past this many bytes (512 MiB) comes back without its files."""


class RayExecutor:
    """Runs cells on the Ray cluster at ``address`` (None: start a local one for this evaluation)."""

    def __init__(self, address: str | None = None, *, connect_timeout_s: float = 30.0) -> None:
        self.address = address
        self.connect_timeout_s = connect_timeout_s

    async def run(self, cells: Sequence[Cell], directory: Path, started: Started, finished: Finished) -> None:
        ray = _ray()
        await asyncio.to_thread(self._connect, ray)
        # Off the loop's thread: so Ray leaves this process's signal handlers alone (SIGTERM stops the
        # evaluation, cleanly, as it does with the local pool).
        remote = ray.remote(max_retries=0, retry_exceptions=False)(_run_remote)
        packed: dict[str, Any] = {}
        pending: dict[Any, Cell] = {}
        try:
            for cell in cells:
                task = cell.task
                if task.digest not in packed:
                    packed[task.digest] = ray.put(_pack(task.path, task.path.name))
                options: dict[str, Any] = {"num_cpus": task.environment.cpus or 1}
                if task.environment.memory_mb:
                    options["memory"] = task.environment.memory_mb * 1024 * 1024
                ref = remote.options(**options).remote(cell, packed[task.digest])
                pending[ref] = cell
                started(cell)
            futures = {asyncio.wrap_future(ref.future()): ref for ref in pending}
            while futures:
                done, _ = await asyncio.wait(futures, return_when=asyncio.FIRST_COMPLETED)
                for future in done:
                    ref = futures.pop(future)
                    cell = pending.pop(ref)
                    finished(cell, await asyncio.to_thread(_received, future, cell, directory))
        finally:
            for ref in pending:
                with contextlib.suppress(Exception):
                    ray.cancel(ref, force=True)

    def _connect(self, ray: Any) -> None:
        if ray.is_initialized():
            return
        if self.address is not None:
            self._reachable()
        try:
            ray.init(
                address=self.address,
                namespace="tackroom",
                log_to_driver=False,
                logging_level="warning",
                include_dashboard=False if self.address is None else None,
                configure_logging=False,
            )
        except Exception as exc:  # ConnectionError, TimeoutError, RuntimeError: Ray's own, by release
            where = self.address or "a local cluster"
            raise RayUnavailableError(f"the Ray cluster at {where} does not answer: {exc}") from exc

    def _reachable(self) -> None:
        """Refuse an address nothing answers at before Ray tries it: Ray's own client retries for
        minutes, then ends the whole process."""
        assert self.address is not None
        host, _, port = self.address.removeprefix("ray://").rpartition(":")
        try:
            with socket.create_connection((host or "127.0.0.1", int(port)), timeout=self.connect_timeout_s):
                pass
        except (OSError, ValueError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise RayUnavailableError(
                f"the Ray cluster at {self.address} does not answer ({reason}): start it "
                "(ray start --head) or give its GCS address as host:port"
            ) from exc


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise RayUnavailableError(
            "the ray executor needs Ray: pip install 'tackroom[ray]' (here and on every node)"
        ) from exc
    return ray


def _received(future: asyncio.Future[Any], cell: Cell, directory: Path) -> CellResult:
    """The result a Ray task returned, its directory unpacked into ``directory``; a lost worker's
    cell is ``worker_lost``."""
    from ray import exceptions

    target = directory / "cells" / cell.id
    try:
        data, packed = future.result()
    except (exceptions.WorkerCrashedError, exceptions.NodeDiedError, exceptions.TaskCancelledError) as exc:
        return _lost(cell, target, f"the Ray worker running it was lost ({type(exc).__name__})")
    except exceptions.RayError as exc:
        return _lost(cell, target, f"Ray could not run it: {str(exc).splitlines()[0][:300]}")
    clock, arrived = time.monotonic(), time.time()
    returned_at = data.get("returned_at")
    result = CellResult.from_json(data)
    said = (
        [] if packed is not None else [f"its directory was larger than {PACK_LIMIT} bytes: left on its node"]
    )
    if packed is not None:
        try:
            _unpack(packed, target)
        except (OSError, tarfile.TarError) as exc:
            said.append(f"its directory could not be brought back: {exc}")
    remote = Path(result.cell_dir)
    # Ray's part here: the result's way back from the worker (its clock against this one: on one
    # machine exact, across machines as good as their clocks agree) and the unpacking.
    travel = max(0.0, arrived - returned_at) if isinstance(returned_at, int | float) else 0.0
    result = _with_ray_time(result, travel + time.monotonic() - clock)
    return replace(
        result,
        cell_dir=str(target),
        run_dirs=tuple(str(target / Path(d).relative_to(remote)) for d in result.run_dirs),
        notes=(*result.notes, *said),
    )


def _lost(cell: Cell, target: Path, reason: str) -> CellResult:
    return CellResult.of(cell, target, "worker_lost", reason)


def _run_remote(cell: Cell, packed_task: bytes) -> tuple[dict[str, Any], bytes | None]:
    """On a Ray worker: unpack the task, run the cell in a directory of this node, pack it back."""
    from tackroom.eval.cell import look_up_prices, run_cell
    from tackroom.eval.tasks import load_task

    with tempfile.TemporaryDirectory(prefix="tackroom-cell-") as scratch:
        root = Path(scratch)
        look_up_prices([cell])  # once per worker: a cache, kept between the cells it runs
        clock = time.monotonic()
        _unpack(packed_task, root / "task")
        task = load_task(root / "task" / cell.task.path.name)
        if task.digest != cell.task.digest:
            raise RuntimeError(f"task {cell.task.name} arrived changed (digest {task.digest[:12]})")
        cell_dir = root / "cell"
        unpacked = time.monotonic() - clock
        result = asyncio.run(run_cell(replace(cell, task=task), cell_dir))
        clock = time.monotonic()
        packed = _pack(cell_dir, ".") if cell_dir.exists() else None
        result = _with_ray_time(result, unpacked + time.monotonic() - clock)
        data = {**result.to_json(), "returned_at": time.time()}
        return data, packed if packed is None or len(packed) <= PACK_LIMIT else None


def _with_ray_time(result: CellResult, seconds: float) -> CellResult:
    """``result`` with ``seconds`` of Ray's part (shipping the task in, the cell's directory back)
    counted in its time: ``timings["ray"]``, and in its total."""
    timings = dict(result.timings)
    timings["ray"] = timings.get("ray", 0.0) + seconds
    timings["total"] = timings.get("total", 0.0) + seconds
    return replace(result, timings=timings)


def _pack(directory: Path, name: str) -> bytes:
    """``directory`` as a gzipped tar (links kept as links), under ``name``."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as archive:
        archive.add(directory, arcname=name)
    return buffer.getvalue()


def _unpack(packed: bytes, target: Path) -> None:
    """Unpack into ``target``: only regular files, directories and links that stay inside it (the
    ``data`` filter: no absolute path, no ``..``, no device, no link out)."""
    target.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(packed), mode="r:gz") as archive:
        archive.extractall(target, filter="data")
    with contextlib.suppress(OSError):
        os.utime(target)
