"""Run directories: ``$XDG_DATA_HOME/tackroom/runs/<id>/``, each with its ``result.json``.

Listing, showing and pruning them reads what a harness may have written, so
nothing here trusts the tree: a run id is checked as a file name before it
becomes a path, no symbolic link is followed, nothing outside ``runs/`` is
deleted, and a ``result.json`` that is missing, huge or not JSON is reported,
never a crash. A run in progress holds a lock on its directory (see
:func:`holding`), and prune leaves it alone.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tackroom.errors import RunError, UnsafePathError
from tackroom.paths import check_name, inside

RESULT = "result.json"
LOCK = ".lock"
MAX_RESULT_BYTES = 16 * 1024 * 1024
"""A larger ``result.json`` is not read (a result is a few KB; events live in ``events.jsonl``)."""


@dataclass(frozen=True)
class RunRecord:
    """One run directory as found on disk."""

    id: str
    path: Path
    size_bytes: int
    """Every file below the directory, links counted as themselves."""
    modified: float
    """When ``result.json`` was written (the directory's time when there is none), as ``time.time()``."""
    in_progress: bool
    """A running tackroom holds this run's lock."""
    result: Mapping[str, Any] | None = None
    """``result.json``, when it is a readable JSON object."""
    problem: str | None = None
    """Why there is no result: in progress, interrupted before the harness ended, or unreadable."""
    entries: tuple[tuple[str, int], ...] = field(default=())
    """Top-level entries and their sizes (filled by :func:`show_run`)."""

    @property
    def status(self) -> str:
        """``ok``, ``failed``, ``timed out``, ``running`` or ``no result``."""
        if self.result is None:
            return "running" if self.in_progress else "no result"
        if self.result.get("timed_out") is True:
            return "timed out"
        return "ok" if self.result.get("ok") is True else "failed"

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready summary; :func:`show_run` records also carry the result and the entries."""
        result = self.result or {}
        data: dict[str, Any] = {
            "id": self.id,
            "path": str(self.path),
            "status": self.status,
            "adapter": result.get("adapter"),
            "exit_code": result.get("exit_code"),
            "duration_s": result.get("duration_s"),
            "size_bytes": self.size_bytes,
            "modified": self.modified,
            "problem": self.problem,
        }
        if self.entries:
            data["entries"] = [{"name": name, "size_bytes": size} for name, size in self.entries]
            data["result"] = self.result
        return data


def runs_root(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_DATA_HOME/tackroom/runs``, where every run directory is made."""
    from tackroom.harnesses import data_dir

    return data_dir(env) / "runs"


def list_runs(root: Path | None = None) -> list[RunRecord]:
    """Every run directory under ``root`` (default :func:`runs_root`), oldest first.

    Entries that are not run directories (links, files, names no run gets) are skipped.
    """
    root = runs_root() if root is None else root
    if not root.is_dir():
        return []
    records = []
    for entry in _run_entries(root):
        try:
            records.append(_record(root, entry.name))
        except OSError:
            continue  # removed while we looked
    return sorted(records, key=lambda r: (r.modified, r.id))


def show_run(run_id: str, root: Path | None = None) -> RunRecord:
    """One run by id, with its result and the size of each top-level entry."""
    root = runs_root() if root is None else root
    check_name(run_id, "run id")
    path = inside(root, run_id)
    if not path.is_dir():
        raise RunError(f"no run {run_id!r} in {str(root)!r}: `tackroom runs list` shows the runs there")
    entries = tuple(sorted((p.name, _size(p)) for p in path.iterdir()))
    return replace(_record(root, run_id), entries=entries)


def prune_runs(
    older_than_s: float | None = None, root: Path | None = None, *, dry_run: bool = False
) -> tuple[list[RunRecord], list[str]]:
    """Delete run directories (those older than ``older_than_s`` seconds; all without it).

    A run in progress is never deleted. Returns the runs deleted (or that would
    be, with ``dry_run``) and a message for each one that could not be.
    """
    root = runs_root() if root is None else root
    if root.is_symlink():
        raise UnsafePathError(
            f"{root} is a link (to {root.readlink()}): runs are deleted only in a real directory, "
            "never through a link; remove the link, or point XDG_DATA_HOME where the runs are"
        )
    now = time.time()
    removed: list[RunRecord] = []
    failed: list[str] = []
    for record in list_runs(root):
        if record.in_progress or (older_than_s is not None and now - record.modified < older_than_s):
            continue
        try:
            if not dry_run:
                _remove(root, record.id)
        except OSError as exc:
            failed.append(f"{record.id}: {exc.strerror or exc}")
            continue
        removed.append(record)
    return removed, failed


@contextmanager
def holding(run_dir: Path) -> Iterator[None]:
    """Hold ``run_dir``'s lock while a run uses it, so a concurrent prune skips it."""
    fd = os.open(run_dir / LOCK, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _run_entries(root: Path) -> Iterator[os.DirEntry[str]]:
    with os.scandir(root) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False) and _is_run_id(entry.name):
                yield entry


def _is_run_id(name: str) -> bool:
    try:
        check_name(name, "run id")
    except UnsafePathError:
        return False
    return True


def _remove(root: Path, run_id: str) -> None:
    path = inside(root, run_id)  # the name is one component and no link: the delete stays in runs/
    # rmtree never follows a link inside the tree (it removes the link itself).
    shutil.rmtree(path)


def _record(root: Path, run_id: str) -> RunRecord:
    path = root / run_id
    result_file = path / RESULT
    result, problem = _read_result(result_file)
    in_progress = _locked(path)
    if result is None and problem is None:
        problem = "in progress" if in_progress else "no result.json: interrupted before the harness ended"
    stat = result_file.lstat() if result is not None else path.lstat()
    return RunRecord(run_id, path, _size(path), stat.st_mtime, in_progress, result, problem)


def _read_result(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """The result, or why it cannot be read; (None, None) when there is no result.json at all."""
    if path.is_symlink():
        return None, "result.json is a link; not followed"
    try:
        if not path.is_file():
            return None, None
        if path.stat().st_size > MAX_RESULT_BYTES:
            return None, f"result.json is larger than {MAX_RESULT_BYTES} bytes; not read"
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        return None, f"result.json cannot be read: {exc}"
    if not isinstance(data, dict):
        return None, "result.json is not a JSON object"
    return data, None


def _locked(path: Path) -> bool:
    try:
        fd = os.open(path / LOCK, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False  # no lock file (or a link planted as one): nothing holds this run
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def _size(path: Path) -> int:
    """Bytes below ``path``, never following a link (a link counts as itself)."""
    if path.is_symlink() or not path.is_dir():
        return path.lstat().st_size
    total = 0
    for directory, dirs, files in os.walk(path):  # os.walk does not descend into linked directories
        here = Path(directory)
        linked = [d for d in dirs if (here / d).is_symlink()]
        for name in (*files, *linked):
            try:
                total += (here / name).lstat().st_size
            except OSError:
                continue  # removed while we looked
    return total
