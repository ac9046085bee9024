"""Where the session logs are: each adapter's ``transcripts`` roots, in the user's home and in every run's.

The roots are adapter data (``[adapter.X.transcripts]``), expanded exactly as
a run expands them: ``${CLAUDE_CONFIG_DIR:-~/.claude}/projects`` follows the
relocation variable when it is set, ``~`` is the harness's home. The user's
real home is expanded with the caller's environment; each run directory's
isolated home (``runs/<id>/home``) with the relocation defaults a run gives
its harness, so the logs of every ``tackroom run`` are found where it put them.

The walk never follows a symbolic link (a link to a log file is not read
either: it could point anywhere), never leaves its root, and a directory it
cannot list is reported by path, not raised. Nothing is ever written.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from tackroom._files import data_dir
from tackroom._glob import glob_matcher
from tackroom.adapters.templates import expand_path
from tackroom.families import get_family
from tackroom.trace.model import TraceIssue
from tackroom.vocabulary import TRANSCRIPT_GLOB

if TYPE_CHECKING:
    from tackroom.adapters.adapter import Adapter
    from tackroom.adapters.resolve import AdapterSet

MAX_FILES = 1_000_000
"""A root holding more files than this is not walked further (and says so)."""


@dataclass(frozen=True)
class Root:
    """One directory to look for one harness's logs in."""

    harness: str
    """The adapter name."""
    path: Path
    glob: str
    run_id: str | None = None
    """The run whose isolated home this is (None: the user's own home)."""
    sidecars: tuple[str, ...] = ()
    """Endings of files beside each log that are part of it (see ``Family.sidecars``)."""


class Source(NamedTuple):
    """One log file found under a root (a tuple: a walk makes thousands, and reads them once)."""

    harness: str
    location: str
    """Its path as the walk found it."""
    run_id: str | None
    size: int
    mtime_ns: int
    inode: int

    @property
    def path(self) -> Path:
        return Path(self.location)


def readable(adapters: AdapterSet, harness: str | None = None) -> list[Adapter]:
    """The adapters whose logs tackroom can read: transcript roots declared, and a family reader."""
    chosen = []
    for name in sorted(adapters):
        if harness is not None and name != harness:
            continue
        adapter = adapters[name]
        if not adapter.effective.get("transcripts"):
            continue
        if get_family(adapter.family).transcripts() is None:
            continue
        chosen.append(adapter)
    return chosen


def home_roots(adapter: Adapter, env: Mapping[str, str], home: Path, workdir: Path) -> list[Root]:
    """``adapter``'s roots in the user's own home (``workdir`` for logs kept in a project, like aider's)."""
    roots, glob = transcripts(adapter)
    extra = sidecars(adapter)
    return [
        Root(
            adapter.name, expand_path(root, env=env, home=str(home), workdir=str(workdir)), glob, None, extra
        )
        for root in roots
    ]


def run_roots(adapter: Adapter, run_dir: Path, workdir: Path | None = None) -> list[Root]:
    """``adapter``'s roots in one run's isolated home, with the relocation defaults a run sets."""
    roots, glob = transcripts(adapter)
    extra = sidecars(adapter)
    home = run_dir / "home"
    env = {"HOME": str(home)}
    relocations: Mapping[str, str] = adapter.effective.get("home", {})
    for name, default in relocations.items():
        env[name] = str(expand_path(default, env={}, home=str(home), workdir=str(run_dir)))
    place = str(workdir) if workdir is not None else str(run_dir / "work-unknown")
    return [
        Root(
            adapter.name, expand_path(root, env=env, home=str(home), workdir=place), glob, run_dir.name, extra
        )
        for root in roots
    ]


def sidecars(adapter: Adapter) -> tuple[str, ...]:
    """The endings of the files beside each of ``adapter``'s logs that are part of it."""
    return get_family(adapter.family).sidecars


def transcripts(adapter: Adapter) -> tuple[list[str], str]:
    """The adapter's transcript roots and glob, from its validated table (without building the schema)."""
    table = adapter.effective.get("transcripts") or {}
    return [str(root) for root in table.get("roots", [])], str(table.get("glob", TRANSCRIPT_GLOB))


_RUN_ID = re.compile(r"^\d{8}-\d{6}-(?P<adapter>.+)-[0-9a-f]{6}$")


def all_roots(
    adapters: AdapterSet,
    *,
    env: Mapping[str, str],
    home: Path,
    workdir: Path,
    harness: str | None = None,
    runs: bool = True,
    real: bool = True,
) -> list[Root]:
    """Every root to scan: the user's home for each readable adapter, then each run's home."""
    chosen = {adapter.name: adapter for adapter in readable(adapters, harness)}
    roots: list[Root] = []
    if real:
        for adapter in chosen.values():
            roots += home_roots(adapter, env, home, workdir)
    if runs:
        runs_dir = data_dir(env) / "runs"
        for run_dir in _run_dirs(runs_dir):
            found = _RUN_ID.match(run_dir.name)
            owner = chosen.get(found["adapter"]) if found else None
            if owner is not None:
                roots += run_roots(owner, run_dir)
    return _distinct(roots)


def _run_dirs(runs_dir: Path) -> list[Path]:
    try:
        entries = list(os.scandir(runs_dir))
    except OSError:
        return []
    return sorted(Path(e.path) for e in entries if e.is_dir(follow_symlinks=False))


def _distinct(roots: Iterable[Root]) -> list[Root]:
    """Each directory once (two adapters of one family share roots: the first one named keeps them)."""
    seen: set[tuple[Path, str]] = set()
    out = []
    for root in roots:
        key = (root.path, root.glob)
        if key not in seen:
            seen.add(key)
            out.append(root)
    return out


def walk(root: Root, issues: list[TraceIssue], dirs: list[list[Any]] | None = None) -> Iterator[Source]:
    """The files under ``root`` matching its glob, without following links; problems go to ``issues``.

    With ``dirs``, every directory listed is added to it as ``[path, ctime_ns]``, its change time
    taken before it was listed (a root that is no directory as ``[path, -1]``): while none of
    those times changes, no entry was added, removed, renamed or made readable under ``root``, so
    a repeat (:mod:`tackroom.trace.shortcut`) need only look at the files found. A walk cut
    short adds ``[path, -2]``, which never matches.
    """
    by_name, match = glob_matcher(root.glob)
    base = str(root.path)
    try:
        top = os.lstat(base)
    except FileNotFoundError:
        if dirs is not None:
            dirs.append([base, -1])
        return
    except OSError as exc:
        issues.append(TraceIssue(root.path, 0, f"cannot be read ({exc.strerror or exc}): skipped"))
        if dirs is not None:
            dirs.append([base, -2])
        return
    if not stat.S_ISDIR(top.st_mode):
        if dirs is not None:
            dirs.append([base, -1])
        return  # a link, or a file where a directory should be: not followed
    if dirs is not None:
        dirs.append([base, top.st_ctime_ns])
    stack = [(base, "")]
    seen = 0
    while stack:
        directory, relative = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError as exc:
            issues.append(
                TraceIssue(Path(directory), 0, f"cannot be listed ({exc.strerror or exc}): skipped")
            )
            continue
        for entry in sorted(entries, key=lambda e: e.name):
            seen += 1
            if seen > MAX_FILES:
                issues.append(
                    TraceIssue(root.path, 0, f"more than {MAX_FILES} entries: the rest not looked at")
                )
                if dirs is not None:
                    dirs.append([base, -2])
                return
            if not _utf8(entry.name):
                # A name that is not UTF-8 cannot be a key of the index, nor printed as it is: said,
                # by its bytes escaped, and skipped (with whatever is under it).
                issues.append(TraceIssue(Path(shown_path(entry.path)), 0, "its name is not UTF-8: skipped"))
                continue
            name = entry.name if by_name else f"{relative}{entry.name}"
            try:
                info = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue  # vanished between listing and looking
            except OSError as exc:
                issues.append(
                    TraceIssue(Path(entry.path), 0, f"cannot be looked at ({exc.strerror or exc}): skipped")
                )
                continue
            if stat.S_ISDIR(info.st_mode):
                stack.append((entry.path, "" if by_name else name + "/"))
                if dirs is not None:
                    dirs.append([entry.path, info.st_ctime_ns])
            elif not match(name):
                continue
            elif not stat.S_ISREG(info.st_mode):
                # A FIFO named like a log would block whoever opened it: never opened, and said.
                issues.append(TraceIssue(Path(entry.path), 0, f"{not_regular(info.st_mode)}: skipped"))
            else:
                for ending in root.sidecars:
                    odd = _odd(entry.path + ending)
                    if odd is not None:
                        issues.append(TraceIssue(Path(entry.path + ending), 0, f"{odd}: not read"))
                size, mtime = with_sidecars(entry.path, info.st_size, info.st_mtime_ns, root.sidecars)
                yield Source(root.harness, entry.path, root.run_id, size, mtime, info.st_ino)


def not_regular(mode: int) -> str:
    """What a file that is not a regular file is, as a reason to leave it unread."""
    for test, what in (
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a device"),
        (stat.S_ISBLK, "a device"),
    ):
        if test(mode):
            return f"{what}, not a regular file"
    return "not a regular file"


def _odd(path: str) -> str | None:
    """Why the sidecar at ``path`` cannot be read, when something other than a regular file is there."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    return None if stat.S_ISREG(mode) else not_regular(mode)


def _utf8(name: str) -> bool:
    """Whether a name the file system gave (undecodable bytes as surrogates) is UTF-8 text."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown_path(path: str) -> str:
    """``path`` as text to print: bytes that are not UTF-8 as ``\\xNN``."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def with_sidecars(path: str, size: int, mtime_ns: int, endings: tuple[str, ...]) -> tuple[int, int]:
    """A log's size and time with its sidecars': their sum and the latest (so a change to either shows)."""
    for ending in endings:
        try:
            info = os.lstat(path + ending)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode):
            size += info.st_size
            mtime_ns = max(mtime_ns, info.st_mtime_ns)
    return size, mtime_ns
