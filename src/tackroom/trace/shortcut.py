"""A repeat usage report over logs that have not changed, answered from the index alone.

The full path of a report resolves every adapter, imports the families,
walks the transcript roots, compares each file with the index and folds the
usage: a few hundred milliseconds, most of it imports. When nothing changed
none of that is needed but the walk. So after each full report, the plan it
followed is kept beside it in the index: the roots it walked (with their
globs), everything those roots were expanded from (the variables the root
templates read, HOME, the data dir, the working directory where a root uses
it, the run directories, the operator's adapter files, tackroom's version),
and the printed report. A repeat request whose inputs are the same looks at
the same roots; if every file found has the size, time and inode the index
holds, and the index has not changed since, the stored report is the answer.

Looking costs one ``lstat`` per directory and per log, not a walk: the plan
keeps each directory's change time from when the walk listed it, and a
directory whose entries changed (a log added, removed, renamed, or a
directory made readable) has another. Only when one does, or one changed too
close to the walk for its time to tell (:data:`SETTLE_NS`), are the roots
walked again. This path imports no more than SQLite's C module.

Anything that differs, or anything this cannot check, falls back to the full
path: this only ever skips work whose result is known.
"""

from __future__ import annotations

import os
import stat

try:  # SQLite's C module alone: the sqlite3 package around it imports datetime (1.5 ms of a repeat)
    from _sqlite3 import Error as SQLiteError
    from _sqlite3 import connect
except ImportError:  # not CPython
    from sqlite3 import Error as SQLiteError
    from sqlite3 import connect

TYPE_CHECKING = False  # not typing's: this module answers in tens of milliseconds
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

PLAN = "plan:"


def signature(
    env: Mapping[str, str],
    templates: Sequence[str],
    *,
    cwd: str,
    runs_dir: str | os.PathLike[str],
    config: str | os.PathLike[str],
) -> dict[str, Any]:
    """Everything the roots of a report were expanded from, as values a repeat can compare."""
    import re

    # TZ: a report without --timezone counts days in the local zone.
    names = {"HOME", "XDG_DATA_HOME", "TZ", *re.findall(r"\$\{([A-Za-z_][A-Za-z0-9_]*)", " ".join(templates))}
    uses_workdir = any("{{workdir}}" in t for t in templates)
    return _signature(env, sorted(names), cwd if uses_workdir else None, runs_dir, config)


def _signature(
    env: Mapping[str, str],
    names: Iterable[str],
    cwd: str | None,
    runs_dir: str | os.PathLike[str],
    config: str | os.PathLike[str],
) -> dict[str, Any]:
    from tackroom import __version__

    return {
        "version": __version__,
        "env": {name: env.get(name) for name in names},
        "cwd": cwd,
        "runs": _names(runs_dir),
        "config": _stats(os.fspath(config)),
        "prices": _module_file("genai_prices"),
    }


def _module_file(package: str) -> list[Any] | None:
    """``[path, size, mtime_ns, inode]`` of ``package``'s ``__init__.py`` where an import would find it
    (the first ``sys.path`` entry holding it), or None: a release installed over it is another file.
    The price table costs come from is what this tells apart, without importing it (100 ms)."""
    import sys

    for root in sys.path:
        path = os.path.join(root or ".", package, "__init__.py")
        try:
            info = os.stat(path)
        except OSError:
            continue
        return [path, info.st_size, info.st_mtime_ns, info.st_ino]
    return None


def _names(directory: str | os.PathLike[str]) -> list[str]:
    try:
        return sorted(entry.name for entry in os.scandir(directory))
    except OSError:
        return []


def _stats(config: str) -> list[list[Any]]:
    found = []
    for path in [os.path.join(config, "tackroom.toml"), *_glob(os.path.join(config, "adapters.d"))]:
        try:
            info = os.stat(path)
        except OSError:
            continue
        found.append([path, info.st_size, info.st_mtime_ns])
    return found


def _glob(directory: str) -> list[str]:
    try:
        return sorted(e.path for e in os.scandir(directory) if e.name.endswith(".toml"))
    except OSError:
        return []


def files(roots: Sequence[Sequence[str]]) -> list[tuple[str, int, int, int]]:
    """``(path, size, mtime_ns, inode)`` of every log under ``roots`` (``[path, glob, *sidecars]``),
    found exactly as :func:`tackroom.trace.discover.walk` finds them (links are neither followed nor
    taken); only the logs themselves are stat'ed, a directory's type comes with its listing."""
    from tackroom._glob import glob_matcher

    found: list[tuple[str, int, int, int]] = []
    for base, glob, *endings in roots:
        by_name, match = glob_matcher(glob)
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
                    name = entry.name
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append((entry.path, "" if by_name else f"{relative}{name}/"))
                            continue
                        if not match(name if by_name else f"{relative}{name}"):
                            continue
                        if not entry.is_file(follow_symlinks=False):
                            continue
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if endings:
                        size, mtime = _with(entry.path, info.st_size, info.st_mtime_ns, endings)
                        found.append((entry.path, size, mtime, info.st_ino))
                    else:
                        found.append((entry.path, info.st_size, info.st_mtime_ns, info.st_ino))
    return found


def listing(found: Iterable[tuple[str, int, int, int]]) -> str:
    """``(path, size, mtime_ns, inode)`` of each log, one line each, in path order."""
    return "\n".join(sorted(_line(*item) for item in found))


def _line(path: str, size: int, mtime: int, inode: int) -> str:
    return f"{path}\t{size}\t{mtime}\t{inode}"


def trees(
    walks: Sequence[tuple[list[list[Any]], list[tuple[str, int, int, int]]]],
) -> tuple[str, list[list[Any]]]:
    """The listing of what each root's walk found (``(directories, logs)`` per root, in the roots'
    order), and per root ``[directories, the listing's lines that root found]``."""
    lines = sorted((_line(*item), n) for n, (_, found) in enumerate(walks) for item in found)
    places: list[list[int]] = [[] for _ in walks]
    for at, (_, n) in enumerate(lines):
        places[n].append(at)
    return "\n".join(line for line, _ in lines), [[dirs, places[n]] for n, (dirs, _) in enumerate(walks)]


SETTLE_NS = 2_000_000_000
"""A directory changed this close to a walk (or after it) is listed again: a file system's clock has
coarse ticks, so a change in the same tick as the recorded one would leave the time as it was."""


def unchanged(plan: dict[str, Any], settle_ns: int = SETTLE_NS) -> bool | None:
    """Whether the logs are as the plan's walk found them, looking only at its directories and logs:
    True or False, or None when that cannot tell (a directory changed: a full walk decides)."""
    roots, walked = plan.get("trees"), plan.get("walked_at")
    if not isinstance(roots, list) or len(roots) != len(plan["roots"]) or not isinstance(walked, int):
        return None
    recent = walked - settle_ns
    for dirs, _ in roots:
        for path, ctime in dirs:
            try:
                info = os.lstat(path)
            except FileNotFoundError:
                if ctime == -1:
                    continue
                return None
            if ctime == -1 and not stat.S_ISDIR(info.st_mode):
                continue  # still no directory: still nothing in it
            if ctime < 0 or info.st_ctime_ns != ctime or ctime >= recent or not stat.S_ISDIR(info.st_mode):
                return None
    lines = plan["listing"].split("\n") if plan["listing"] else []
    lstat, regular = os.lstat, stat.S_ISREG
    for (_, places), (_, _, *endings) in zip(roots, plan["roots"], strict=True):
        for at in places:
            line = lines[at]
            path = line.partition("\t")[0]
            try:
                info = lstat(path)
            except OSError:
                return False
            if not regular(info.st_mode):
                return False
            if endings:
                size, mtime = _with(path, info.st_size, info.st_mtime_ns, endings)
                if _line(path, size, mtime, info.st_ino) != line:
                    return False
            elif f"{path}\t{info.st_size}\t{info.st_mtime_ns}\t{info.st_ino}" != line:  # _line, inline
                return False
    return True


def _with(path: str, size: int, mtime: int, endings: Sequence[str]) -> tuple[int, int]:
    for ending in endings:  # as discover.with_sidecars (not imported: it loads the families)
        try:
            extra = os.lstat(path + ending)
        except OSError:
            continue
        if stat.S_ISREG(extra.st_mode):
            size, mtime = size + extra.st_size, max(mtime, extra.st_mtime_ns)
    return size, mtime


def remember(db: sqlite3.Connection, key: str, plan: dict[str, Any]) -> None:
    """Keep the plan a full report followed (in the caller's transaction)."""
    import orjson

    db.execute(
        "INSERT OR REPLACE INTO trace_cache (name, generation, value) VALUES (?, ?, ?)",
        (PLAN + key, plan["generation"], orjson.dumps(plan)),
    )


def report_key(*options: Any) -> str:
    """The cache key of a report: its options in order (group, harness, since, until, zone, cost)."""
    return repr(list(options))  # str, None and bool options: repr is exact, and needs no import


def answer(
    state: str | os.PathLike[str],
    key: str,
    env: Mapping[str, str],
    cwd: str,
    runs_dir: str | os.PathLike[str],
    config: str | os.PathLike[str],
    *,
    settle_ns: int = SETTLE_NS,
) -> str | None:
    """The stored report for ``key``, if nothing it was made from has changed; else None."""
    if not os.path.isfile(state):
        return None
    try:
        db = connect(f"file:{state}?mode=ro", uri=True, timeout=1.0)
    except SQLiteError:
        return None
    try:
        row = db.execute("SELECT generation, value FROM trace_cache WHERE name = ?", (PLAN + key,)).fetchone()
        if row is None:
            return None
        plan = _loads(row[1].decode() if isinstance(row[1], bytes) else row[1])
        (generation,) = db.execute("SELECT value FROM trace_generation WHERE id = 1").fetchone()
        if generation != row[0] or plan.get("generation") != generation:
            return None
        # The same templates (kept in the plan) read the same variables: the stored signature names them.
        stored = plan["signature"]
        here = _signature(env, stored["env"], cwd if stored["cwd"] is not None else None, runs_dir, config)
        if here != stored:
            return None
        # The logs as the scan behind the report found them, compared whole: any new, grown, touched,
        # replaced or removed log (or a sidecar's change) makes the listing differ. While no directory
        # changed, the logs found are looked at alone; otherwise every root is walked again.
        same = unchanged(plan, settle_ns)
        if same is None:
            same = listing(files(plan["roots"])) == plan["listing"]
        if not same:
            return None
        text = plan.get("text")
        return text if isinstance(text, str) else None
    except (SQLiteError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None  # a damaged or foreign plan: the full path decides
    finally:
        db.close()


class _Strict:
    """What the C scanner of :mod:`json` reads from its decoder: plain JSON, nothing hooked."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    @staticmethod
    def parse_constant(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")


def _loads(text: str) -> Any:
    """``json.loads(text)``, with the C scanner json itself uses: importing json (and the ``re`` it
    needs) would cost this path about a fifth of its time."""
    try:
        from _json import make_scanner
    except ImportError:  # not CPython
        import json

        return json.loads(text)
    try:
        value, end = make_scanner(_Strict)(text, 0)  # type: ignore[arg-type]  # it reads attributes
    except StopIteration as exc:  # what the scanner raises where no value starts
        raise ValueError(f"not JSON at {exc.value}") from None
    if text[end:].strip():
        raise ValueError(f"not JSON at {end}")
    return value
