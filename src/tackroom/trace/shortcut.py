"""A repeat usage report over logs that have not changed, answered from the index alone.

The full path of a report resolves every adapter, imports the families,
walks the transcript roots, compares each file with the index and folds the
usage: a few hundred milliseconds, most of it imports. When nothing changed
none of that is needed but the walk. So after each full report, the plan it
followed is kept beside it in the index: the roots it walked (with their
globs), everything those roots were expanded from (the variables the root
templates read, HOME, the data dir, the working directory where a root uses
it, the run directories, the operator's adapter files, tackroom's version),
and the printed report. A repeat request whose inputs are the same walks the
same roots; if every file found has the size, time and inode the index holds,
and the index has not changed since, the stored report is the answer.

Anything that differs, or anything this cannot check, falls back to the full
path: this only ever skips work whose result is known.
"""

from __future__ import annotations

import os
import re
import sqlite3
import stat
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

TYPE_CHECKING = False  # not typing's: this module answers in tens of milliseconds
if TYPE_CHECKING:
    from typing import Any

PLAN = "plan:"
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)")


def signature(
    env: Mapping[str, str],
    templates: Sequence[str],
    *,
    cwd: str,
    runs_dir: Path,
    config: Path,
) -> dict[str, Any]:
    """Everything the roots of a report were expanded from, as values a repeat can compare."""
    from tackroom import __version__

    # TZ: a report without --timezone counts days in the local zone.
    names = sorted({"HOME", "XDG_DATA_HOME", "TZ", *(_VARIABLE.findall(" ".join(templates)))})
    uses_workdir = any("{{workdir}}" in t for t in templates)
    return {
        "version": __version__,
        "env": {name: env.get(name) for name in names},
        "cwd": cwd if uses_workdir else None,
        "runs": _names(runs_dir),
        "config": _stats(config),
    }


def _names(directory: Path) -> list[str]:
    try:
        return sorted(entry.name for entry in os.scandir(directory))
    except OSError:
        return []


def _stats(config: Path) -> list[list[Any]]:
    found = []
    for path in [config / "tackroom.toml", *_glob(config / "adapters.d")]:
        try:
            info = path.stat()
        except OSError:
            continue
        found.append([str(path), info.st_size, info.st_mtime_ns])
    return found


def _glob(directory: Path) -> list[Path]:
    try:
        return sorted(Path(e.path) for e in os.scandir(directory) if e.name.endswith(".toml"))
    except OSError:
        return []


def files(roots: Sequence[Sequence[str]]) -> Iterator[tuple[str, int, int, int]]:
    """``(path, size, mtime_ns, inode)`` of every log under ``roots`` (``[path, glob, *sidecars]``),
    found exactly as :func:`tackroom.trace.discover.walk` finds them (links are neither followed nor
    taken); only the logs themselves are stat'ed, a directory's type comes with its listing."""
    from tackroom._glob import glob_regex

    for base, glob, *endings in roots:
        match = glob_regex(glob).fullmatch
        try:
            top = os.lstat(base)
        except OSError:
            continue
        if not stat.S_ISDIR(top.st_mode):
            continue
        stack = [(base, "")]
        while stack:
            directory, relative = stack.pop()
            try:
                listing = os.scandir(directory)
            except OSError:
                continue
            with listing:
                for entry in listing:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append((entry.path, f"{relative}{entry.name}/"))
                            continue
                        if not entry.is_file(follow_symlinks=False) or not match(f"{relative}{entry.name}"):
                            continue
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    size, mtime = info.st_size, info.st_mtime_ns
                    for ending in endings:  # as discover.with_sidecars (not imported: it loads the families)
                        try:
                            extra = os.lstat(entry.path + ending)
                        except OSError:
                            continue
                        if stat.S_ISREG(extra.st_mode):
                            size, mtime = size + extra.st_size, max(mtime, extra.st_mtime_ns)
                    yield entry.path, size, mtime, info.st_ino


def listing(found: Iterable[tuple[str, int, int, int]]) -> str:
    """``(path, size, mtime_ns, inode)`` of each log, one line each, in path order."""
    return "\n".join(sorted(f"{path}\t{size}\t{mtime}\t{inode}" for path, size, mtime, inode in found))


def remember(db: sqlite3.Connection, key: str, plan: dict[str, Any]) -> None:
    """Keep the plan a full report followed (in the caller's transaction)."""
    import json

    db.execute(
        "INSERT OR REPLACE INTO trace_cache (name, generation, value) VALUES (?, ?, ?)",
        (PLAN + key, plan["generation"], json.dumps(plan).encode()),
    )


def report_key(*options: Any) -> str:
    """The cache key of a report: its options in order (group, harness, since, until, zone, cost)."""
    import json

    return json.dumps(list(options))


def answer(
    state: Path, key: str, env: Mapping[str, str], cwd: str, runs_dir: Path, config: Path
) -> str | None:
    """The stored report for ``key``, if nothing it was made from has changed; else None."""
    import json

    if not state.is_file():
        return None
    try:
        db = sqlite3.connect(f"file:{state}?mode=ro", uri=True, timeout=1.0)
    except sqlite3.Error:
        return None
    try:
        row = db.execute("SELECT generation, value FROM trace_cache WHERE name = ?", (PLAN + key,)).fetchone()
        if row is None:
            return None
        plan = json.loads(row[1])
        (generation,) = db.execute("SELECT value FROM trace_generation WHERE id = 1").fetchone()
        if generation != row[0] or plan.get("generation") != generation:
            return None
        expected = signature(env, plan["templates"], cwd=cwd, runs_dir=runs_dir, config=config)
        if expected != plan["signature"]:
            return None
        # The logs as the scan behind the report found them, compared whole: any new, grown, touched,
        # replaced or removed log (or a sidecar's change) makes the listing differ.
        if listing(files(plan["roots"])) != plan["listing"]:
            return None
        text = plan.get("text")
        return text if isinstance(text, str) else None
    except (sqlite3.Error, ValueError, KeyError, TypeError):
        return None
    finally:
        db.close()
