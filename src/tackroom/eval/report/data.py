"""What a report says, as data: the groups (harness × model) with their statistics, the task × group
grid, the paired comparisons, and each cell's details for a click-through.

Everything in it came from outside (a task's instruction, a harness's events, a verifier's output):
it is bounded here (:data:`TEXT_LIMIT`, :data:`EVENTS_LIMIT`) and escaped where it is shown.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from itertools import combinations
from pathlib import Path
from typing import Any

from tackroom.eval.evaluate import stored
from tackroom.eval.results import ResultStore
from tackroom.eval.stats import groups, paired

TEXT_LIMIT = 16 * 1024
"""Characters kept of an instruction or a verifier's output (its tail)."""
EVENTS_LIMIT = 200
"""Events kept per cell for the click-through (the first ones), each cut to :data:`TEXT_LIMIT`."""
REPORT_FORMAT = 1


def latest_evaluation(store: ResultStore | None = None) -> Path | None:
    """The directory of the evaluation a cell result was stored in last (in ``store``, default: the
    state database), or None."""
    return (store or ResultStore()).last_directory()


def build(directory: Path, *, details: bool = True, store: ResultStore | None = None) -> dict[str, Any]:
    """The report of the evaluation in ``directory``: the latest attempt of each cell."""
    cells = sorted(
        (result.to_json() for result in stored(directory, store).values()),
        key=lambda c: (c["task"], c["harness"], c["model"] or "", c["repeat"]),
    )
    found = groups(cells)
    names = [_name(g.harness, g.model) for g in found]
    grid: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for cell in cells:
        row = grid.setdefault(cell["task"], {})
        row.setdefault(_name(cell["harness"], cell["model"]), []).append(
            {
                "cell_id": cell["cell_id"],
                "repeat": cell["repeat"],
                "outcome": cell["outcome"],
                "reward": cell["reward"],
                "passed": cell["passed"],
            }
        )
    comparisons = [
        {"a": names[i], "b": names[j], **paired(found[i].rewards, found[j].rewards).to_json()}
        for i, j in combinations(range(len(found)), 2)
    ]
    return {
        "report": REPORT_FORMAT,
        "directory": str(directory),
        "groups": [{"name": name, **group.to_json()} for name, group in zip(names, found, strict=True)],
        "tasks": sorted(grid),
        "grid": grid,
        "comparisons": comparisons,
        "cells": [{**cell, **(_details(cell) if details else {})} for cell in cells],
    }


def _name(harness: str, model: str | None) -> str:
    return harness if model is None else f"{harness} × {model}"


def _details(cell: Mapping[str, Any]) -> dict[str, Any]:
    """What the click-through shows: the instruction, the harness's events, the verifier's output."""
    cell_dir = Path(cell["cell_dir"])
    events: list[dict[str, Any]] = []
    for run_dir in cell.get("run_dirs") or []:
        events.extend(_events(Path(run_dir) / "events.jsonl", EVENTS_LIMIT - len(events)))
    oracle = _text(cell_dir / "root" / "logs" / "agent" / "oracle.txt", tail=True)
    return {
        "instruction": _text(cell_dir / "instruction.md"),
        "events": events,
        "agent_output": oracle,
        "verifier_output": _text(cell_dir / "root" / "logs" / "verifier" / "test-stdout.txt", tail=True),
    }


def _events(path: Path, limit: int) -> Iterable[dict[str, Any]]:
    if limit <= 0:
        return []
    kept: list[dict[str, Any]] = []
    try:
        with path.open(encoding="utf-8", errors="replace") as file:
            for line in file:
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(event, dict):
                    continue
                event.pop("raw", None)
                text = json.dumps(event, ensure_ascii=False)
                kept.append(
                    event
                    if len(text) <= TEXT_LIMIT
                    else {"type": event.get("type"), "cut": text[:TEXT_LIMIT]}
                )
                if len(kept) >= limit:
                    break
    except OSError:
        return []
    return kept


def _text(path: Path, *, tail: bool = False) -> str | None:
    """At most :data:`TEXT_LIMIT` characters of ``path`` (its end with ``tail``), never following a link."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        size = os.fstat(fd).st_size
        if tail and size > TEXT_LIMIT * 4:
            os.lseek(fd, size - TEXT_LIMIT * 4, os.SEEK_SET)
        data = os.read(fd, TEXT_LIMIT * 4)
    except OSError:
        return None
    finally:
        os.close(fd)
    text = data.decode("utf-8", errors="replace")
    return text[-TEXT_LIMIT:] if tail else text[:TEXT_LIMIT]
