"""Cells as Ray tasks, for an evaluation that outgrows one machine (``pip install 'tackroom[ray]'``).

Each cell is one Ray task with the resources its task asks for (``cpus``, ``memory_mb``), shipped
with its task directory (packed once per task, put in Ray's object store) and run by
:func:`tackroom.eval.cell.run_cell` on whichever node Ray picks, in a directory of that node's;
the task returns the result and the cell's directory, packed, which the evaluation unpacks into
its own ``cells/<cell id>/``. Where a worker sees the evaluation's directory at the same path (the
same machine, or a shared filesystem: it finds the token this evaluation wrote there), it runs the
cell there in place and reads the task where it is, so only the result travels. Results stream
back as they finish. A worker that dies mid-cell (its
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
import secrets
import socket
import tarfile
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from tackroom.errors import RayUnavailableError, TackroomError
from tackroom.eval.cell import Cell, CellResult
from tackroom.eval.executors import Finished, Started, warm
from tackroom.eval.tasks import Task

PACK_LIMIT = 512 * 1024 * 1024
"""A cell's directory packed past this many bytes (512 MiB) comes back without its files."""


class RayExecutor:
    """Runs cells on the Ray cluster at ``address`` (None: start a local one for this evaluation)."""

    def __init__(
        self,
        address: str | None = None,
        *,
        connect_timeout_s: float = 30.0,
        in_place: bool = True,
        capture_db: str | None = None,
    ) -> None:
        self.address = address
        self.capture_db = capture_db
        """Where the workers store the calls of captured cells: a ``postgresql://`` URL every node
        reaches (None: each worker's own state database)."""
        self.connect_timeout_s = connect_timeout_s
        self.in_place = in_place
        """Let a worker that sees the evaluation's directory run its cells there (False: every cell
        ships its task and brings its directory back through Ray, as across machines)."""

    async def run(self, cells: Sequence[Cell], directory: Path, started: Started, finished: Finished) -> None:
        ray = _ray()
        await asyncio.to_thread(self._connect, ray)
        # Off the loop's thread: so Ray leaves this process's signal handlers alone (SIGTERM stops the
        # evaluation, cleanly, as it does with the local pool).
        remote = ray.remote(max_retries=0, retry_exceptions=False)(_run_remote)
        shared = await asyncio.to_thread(_mark, directory) if self.in_place else None
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
                ref = remote.options(**options).remote(cell, packed[task.digest], shared, self.capture_db)
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
    in_place = Path(result.cell_dir).resolve() == target.resolve()
    said = (
        []
        if packed is not None or in_place
        else [f"its directory was larger than {PACK_LIMIT} bytes: left on its node"]
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


MARK = ".tackroom-ray"
"""The file in the evaluation's directory whose token tells a worker it sees that directory."""


def _mark(directory: Path) -> tuple[str, str]:
    """Write a fresh token into ``directory``: (the directory, the token) for the workers to check."""
    token = secrets.token_hex(16)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / MARK).write_text(token, encoding="ascii")
    return str(directory.resolve()), token


def _sees(shared: tuple[str, str] | None) -> Path | None:
    """The evaluation's directory if this worker sees it (the token there is this evaluation's)."""
    if shared is None:
        return None
    directory, token = Path(shared[0]), shared[1]
    try:
        return directory if (directory / MARK).read_text(encoding="ascii") == token else None
    except (OSError, UnicodeDecodeError):
        return None


def _run_remote(
    cell: Cell, packed_task: bytes, shared: tuple[str, str] | None, capture_db: str | None = None
) -> tuple[dict[str, Any], bytes | None]:
    """On a Ray worker: run the cell in the evaluation's directory where this worker sees it, else
    unpack the task, run the cell in a directory of this node, and pack it back."""
    from tackroom.eval.cell import look_up_prices, run_cell
    from tackroom.eval.tasks import load_task

    look_up_prices([cell])  # once per worker: a cache, kept between the cells it runs
    adapters = _adapters()
    warm([cell], adapters)  # once per family and worker: the imports are cached
    clock = time.monotonic()
    directory = _sees(shared)
    if directory is not None:
        task = _task_here(cell)
        if task is not None:
            ready = time.monotonic() - clock
            cell_dir = directory / "cells" / cell.id
            ran = run_cell(replace(cell, task=task), cell_dir, adapters=adapters, capture_db=capture_db)
            result = asyncio.run(ran)
            result = _on_node(_with_ray_time(result, ready), "in the evaluation's directory")
            return {**result.to_json(), "returned_at": time.time()}, None
    with tempfile.TemporaryDirectory(prefix="tackroom-cell-") as scratch:
        root = Path(scratch)
        _unpack(packed_task, root / "task")
        task = load_task(root / "task" / cell.task.path.name)
        if task.digest != cell.task.digest:
            raise RuntimeError(f"task {cell.task.name} arrived changed (digest {task.digest[:12]})")
        cell_dir = root / "cell"
        unpacked = time.monotonic() - clock
        ran = run_cell(replace(cell, task=task), cell_dir, adapters=adapters, capture_db=capture_db)
        result = asyncio.run(ran)
        clock = time.monotonic()
        packed = _pack(cell_dir, ".") if cell_dir.exists() else None
        result = _with_ray_time(result, unpacked + time.monotonic() - clock)
        data = {**_on_node(result, "its directory shipped back").to_json(), "returned_at": time.time()}
        return data, packed if packed is None or len(packed) <= PACK_LIMIT else None


_WORKER: dict[str, Any] = {}
"""What a worker process loads once and keeps between the cells it runs."""


def _adapters() -> Any:
    """This worker's adapters (its own environment's: its drop-ins, its config), loaded once: a
    worker's start, as the local pool's, is no cell's time."""
    if "adapters" not in _WORKER:
        from tackroom.adapters.resolve import load_adapters

        _WORKER["adapters"] = load_adapters()
    return _WORKER["adapters"]


def _task_here(cell: Cell) -> Task | None:
    """The cell's task read where the driver read it, if it is there on this node unchanged."""
    from tackroom.eval.tasks import load_task

    try:
        task = load_task(cell.task.path)
    except (TackroomError, OSError):
        return None
    return task if task.digest == cell.task.digest else None


def _on_node(result: CellResult, how: str) -> CellResult:
    """``result`` noting the node that ran it, and how its directory reached the evaluation."""
    return replace(result, notes=(*result.notes, f"ran on Ray node {socket.gethostname()}, {how}"))


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
