"""Installed distributions, found as :mod:`importlib.metadata` finds them, without importing it.

Importing ``importlib.metadata`` (its email parser and zip support come with
it) cost about 35 ms, a third of a quick command's start-up, to learn the
family entry points and one version. This reads the same files: each
``*.dist-info`` or ``*.egg-info`` directory in every ``sys.path`` directory,
one distribution per normalized name (the first on ``sys.path`` shadows the
rest). Distributions inside zip files on ``sys.path`` (old eggs) are not
looked in. A test holds every answer here to importlib.metadata's.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path


def distributions() -> Iterator[tuple[str, Path]]:
    """``(normalized name, metadata directory)`` of each installed distribution, in importlib's order."""
    seen: set[str] = set()
    for root in sys.path:
        for child in _metadata_dirs(root or ".") or ():
            name = normalize(child.lower().rpartition(".")[0].partition("-")[0])
            if name not in seen:
                seen.add(name)
                yield name, Path(root or ".", child)


def _metadata_dirs(root: str) -> list[str] | None:
    """The names of the ``*.dist-info`` and ``*.egg-info`` entries of directory ``root``, in listing
    order; None when it cannot be listed."""
    try:
        with os.scandir(root) as listing:
            children = [entry.name for entry in listing]
    except OSError:
        return None
    return [child for child in children if child.lower().endswith((".dist-info", ".egg-info"))]


def normalize(name: str) -> str:
    """A distribution's name as importlib.metadata compares them (PEP 503, dashes as underscores)."""
    return re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")


def entry_points(group: str) -> dict[str, str]:
    """``name -> "module:attribute"`` of every entry point in ``group``; of two distributions naming
    one entry point, the later one wins (as a dict built from importlib's list does)."""
    return dict(_groups().get(group, {}))


@cache
def _groups() -> dict[str, dict[str, str]]:
    """Every group's entry points, from one look at the installed distributions per process (a run
    wants the families' and the sandboxes': each look reads a hundred directories).

    Across processes the last look is reused while nothing it read has changed: each
    distribution's metadata directory and ``entry_points.txt`` has the size and modification time
    it had, and each ``sys.path`` directory either has too or still lists the same metadata
    directories (a working directory on ``sys.path`` changes all the time). Installing, removing
    or editing a distribution changes one of them. A look costs about 5 ms, a reuse a few hundred
    stats. ``TACKROOM_NO_CACHE=1`` looks every time.
    """
    from tackroom._files import cache_dir, write_json

    where = None if os.environ.get("TACKROOM_NO_CACHE") else cache_dir() / "entry-points.json"
    if where is not None:
        reused = _reuse(where)
        if reused is not None:
            return reused
    # Stamped before they are read: a change made meanwhile is seen by the next process.
    roots = {root or ".": [_stamp(root or "."), _metadata_dirs(root or ".")] for root in sys.path}
    stamps: dict[str, list[int] | None] = {}
    found: dict[str, dict[str, str]] = {}
    for _, path in distributions():
        listed = path / "entry_points.txt"
        stamps[str(path)] = _stamp(str(path))
        stamps[str(listed)] = _stamp(str(listed))
        text = _read(listed)
        if text is not None:
            for group, entries in _sections(text).items():
                found.setdefault(group, {}).update(entries)
    if where is not None:
        write_json(where, {"path": sys.path, "roots": roots, "stamps": stamps, "groups": found})
    return found


def _stamp(path: str) -> list[int] | None:
    try:
        stat = os.stat(path)  # noqa: PTH116 (a few hundred of them: plain strings, no Path each)
    except OSError:
        return None
    return [stat.st_size, stat.st_mtime_ns]


def _reuse(where: Path) -> dict[str, dict[str, str]] | None:
    """The groups of the last look, if it was made for this ``sys.path`` and nothing it read changed."""
    from tackroom._files import read_json

    last = read_json(where)
    try:
        if last["path"] != sys.path or any(_stamp(p) != s for p, s in last["stamps"].items()):
            return None
        for root, (stamp, listed) in last["roots"].items():
            if _stamp(root) != stamp and _metadata_dirs(root) != listed:
                return None
        groups = last["groups"]
    except (LookupError, TypeError, ValueError, AttributeError):
        return None  # missing, damaged or of another shape: look again
    return groups if isinstance(groups, dict) else None


def version(name: str) -> str | None:
    """The installed version of distribution ``name``, or None when it is not installed."""
    wanted = normalize(name)
    for found, path in distributions():
        if found == wanted:
            text = _read(path / "METADATA") or _read(path / "PKG-INFO") or ""
            for line in text.splitlines():
                if not line.strip():
                    break  # the headers end at the first blank line
                key, colon, value = line.partition(":")
                if colon and key.strip().lower() == "version":
                    return value.strip()
            return None
    return None


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, ValueError):
        return None  # none (an egg-info file, a distribution without entry points), or unreadable


def _sections(text: str) -> dict[str, dict[str, str]]:
    """The ``name = value`` lines of each section of an ``entry_points.txt``, parsed as
    importlib.metadata parses it (lines stripped, blank and ``#`` lines skipped)."""
    sections: dict[str, dict[str, str]] = {}
    section: dict[str, str] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = sections.setdefault(line.strip("[]"), {})
        elif section is not None:
            key, equals, value = line.partition("=")
            if equals:
                section[key.strip()] = value.strip()
    return sections
