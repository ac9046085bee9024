"""Run an evaluation's cells on this machine, in a bounded pool, resumably.

An evaluation is a directory, ``cells/<cell id>/`` for each cell's latest attempt (its fresh root,
its runs, ``result.json`` in Harbor's field names), and its results in the state database
(:class:`~tackroom.eval.results.ResultStore`), every attempt kept. A cell is done only once its
result is stored, so ``resume`` reruns exactly the cells without one (``retry_failed`` also those
that failed), and stopping the evaluation loses at most the cells that were running.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tackroom.errors import EvaluationExistsError, Problem, StateError, TackroomError
from tackroom.eval.cell import Cell, CellResult, look_up_prices
from tackroom.eval.executors import Executor, LocalExecutor
from tackroom.eval.results import ResultStore


@dataclass
class Progress:
    """Where an evaluation stands: what a live display shows."""

    total: int
    done: int = 0
    running: int = 0
    failed: int = 0
    skipped: int = 0
    """Cells already done in an earlier run of the same evaluation (``resume``)."""
    tokens: int = 0
    cost_usd: float = 0.0
    finished: list[CellResult] = field(default_factory=list)


def stored(directory: Path, store: ResultStore | None = None) -> dict[str, CellResult]:
    """The latest stored attempt of each cell of the evaluation in ``directory`` (none if there is none)."""
    store = store or ResultStore()
    evaluation = store.known(directory)
    return {} if evaluation is None else store.latest(evaluation)


async def evaluate(
    cells: Iterable[Cell],
    directory: Path,
    *,
    jobs: int | None = None,
    resume: bool = False,
    retry_failed: bool = False,
    environ: Mapping[str, str] | None = None,
    adapters: Any = None,
    store: ResultStore | None = None,
    executor: Executor | None = None,
    on_progress: Callable[[Progress, CellResult | None], None] | None = None,
) -> list[CellResult]:
    """Run ``cells`` with ``executor`` (default: the local pool, ``jobs`` at once), storing each result
    in ``directory`` and the store as it ends; with ``resume`` the cells already stored are not run
    again (a directory that holds an evaluation is refused without it).

    A cell that cannot run on this host is a result, not a raise; here, a task whose image needs a
    multi-stage build:

    >>> import asyncio, pathlib, tackroom
    >>> task = pathlib.Path("tasks/hello")
    >>> files = {"task.toml": '[task]\\nname = "me/hello"\\n', "instruction.md": "Say hello.\\n",
    ...          "tests/test.sh": "exit 0\\n",
    ...          "environment/Dockerfile": "FROM golang AS build\\nFROM ubuntu:24.04\\n"}
    >>> for name, text in files.items():
    ...     (task / name).parent.mkdir(parents=True, exist_ok=True)
    ...     _ = (task / name).write_text(text)
    >>> cell = tackroom.Cell(task=tackroom.load_task(task), harness="oracle")
    >>> [result] = asyncio.run(tackroom.evaluate([cell], pathlib.Path("out")))
    >>> result.outcome, result.reason
    ('unsupported', 'unsupported: needs image build: ...Dockerfile:2: a second FROM (a multi-stage build)')
    >>> [again] = asyncio.run(tackroom.evaluate([cell], pathlib.Path("out"), resume=True))
    >>> again.started_at == result.started_at  # stored already: resuming does not run it again
    True
    """
    cells = list(cells)
    store = store or ResultStore()
    before = stored(directory, store)
    if before and not resume:
        raise EvaluationExistsError(
            [
                Problem(
                    str(directory),
                    "",
                    f"holds an evaluation ({len(before)} cells stored): --resume it, or --out elsewhere",
                )
            ]
        )
    directory.mkdir(parents=True, exist_ok=True)
    evaluation = store.evaluation(directory)
    todo = [c for c in cells if not _done(before.get(c.id), retry_failed)]
    again = {c.id for c in todo}
    progress = Progress(total=len(cells), skipped=len(cells) - len(todo))
    results: dict[str, CellResult] = {
        c.id: before[c.id] for c in cells if c.id in before and c.id not in again
    }
    attempts = {c.id: (before[c.id].attempt + 1 if c.id in before else 0) for c in todo}

    def started(cell: Cell) -> None:
        progress.running += 1
        if on_progress is not None:
            on_progress(progress, None)

    def finished(cell: Cell, result: CellResult) -> None:
        progress.running -= 1
        result = replace(result, attempt=attempts[cell.id])
        keep(store, evaluation, result)
        results[cell.id] = result
        progress.done += 1
        progress.failed += result.outcome != "ok" or result.passed is False
        progress.tokens += _tokens(result)
        progress.cost_usd += result.cost_usd or 0.0
        progress.finished.append(result)
        if on_progress is not None:
            on_progress(progress, result)

    executor = executor or LocalExecutor(jobs, environ=environ, adapters=adapters)
    await asyncio.to_thread(look_up_prices, todo)
    await executor.run(todo, directory, started, finished)
    return [results[c.id] for c in cells if c.id in results]


def keep(store: ResultStore, evaluation: int, result: CellResult) -> None:
    """Keep ``result``: the cell's ``result.json`` (Harbor's names), then its row in the store, which
    is what makes the cell done. A ``result.json`` that cannot be written (a full disk) is said in
    the stored result's notes; a store that cannot take the row is a :class:`StateError`: nothing
    more is worth running until it can."""
    cell_dir = Path(result.cell_dir)
    harbor = cell_dir / "result.json"
    tmp = harbor.with_name(".result.json.tmp")
    try:
        cell_dir.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(result.harbor_json(), indent=2, ensure_ascii=True) + "\n", encoding="utf-8")
        tmp.replace(harbor)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        said = f"{harbor} could not be written ({exc.strerror or exc}): the stored result is the record"
        result = replace(result, notes=(*result.notes, said))
    try:
        store.store(evaluation, [result])
    except TackroomError as exc:
        raise StateError(
            f"the result of cell {result.cell_id[:12]} ({result.task}, {result.harness}) could not be "
            f"stored: {exc}. The evaluation stops here; the cells stored so far are kept: once the store "
            f"works again, go on with --resume --out {cell_dir.parent.parent}"
        ) from exc


def _done(result: CellResult | None, retry_failed: bool) -> bool:
    """Whether a stored cell stays as it is: a lost worker's cell never does (it has no result of its
    own); with ``retry_failed`` neither does any cell that did not end ``ok``."""
    if result is None or result.outcome == "worker_lost":
        return False
    return not (retry_failed and result.outcome != "ok")


def _tokens(result: CellResult) -> int:
    usage = result.usage or {}
    counted = usage.get("counted") or usage.get("reported") or {}
    return sum(
        v
        for k, v in counted.items()
        if isinstance(v, int) and k in ("input", "output", "cache_read", "cache_write")
    )


def summary(results: Iterable[CellResult]) -> dict[str, Any]:
    """Counts per outcome and passes: what a run prints at its end."""
    results = list(results)
    outcomes: dict[str, int] = {}
    for result in results:
        outcomes[result.outcome] = outcomes.get(result.outcome, 0) + 1
    return {
        "total": len(results),
        "passed": sum(1 for r in results if r.passed),
        "outcomes": dict(sorted(outcomes.items())),
        "cost_usd": _total_cost(results),
    }


def _total_cost(results: list[CellResult]) -> float | None:
    """What the model calls of every cell that made some cost; None when any of those is unknown (a cell
    that never reached its agent, unsupported or lost, spent nothing)."""
    spent = [r.cost_usd for r in results if r.usage is not None or r.harness == "oracle"]
    return None if any(c is None for c in spent) else sum(c or 0.0 for c in spent)
