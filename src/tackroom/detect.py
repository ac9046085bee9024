"""Which harnesses a repository is set up for, from the adapters' ``detect`` markers.

Each adapter lists marker paths with a specificity score: a private config
directory (``.claude``) outscores a shared file (``AGENTS.md``). An adapter's
score is that of its most specific marker found; the best match is the top
scorer, and the other adapters with the same score are ``ambiguous_with``. A
tie is reported, never broken by guessing (vigiles' detection by specificity).

Mirrors are one signal, not two: marker paths that are one file (a hard
link, or a symbolic link inside the repository) or hold identical bytes
(``CLAUDE.md`` kept as a link or a copy of ``AGENTS.md``) say the repository
keeps one text for several harnesses. Such a group counts once, at the score
of its least specific name, for every adapter that names one of its paths.

Adapters that only inherit their markers (``extends`` without a ``detect`` of
their own) are not candidates: they are the same signal as the adapter they
extend. An operator variant with its own markers is one.

A repository is a stranger's: markers are looked up by path, never by a walk
of the tree, one ``lstat`` per component. A link is followed only while it
stays inside the repository (at most :data:`MAX_LINKS` of them per marker); a
link out, a dangling link, a loop, a FIFO, a socket or a device is skipped
with the reason and never opened; contents are compared only up to
:data:`MAX_COMPARE` bytes.

When no harness is named, ``run`` and ``profile`` choose with
:func:`choose_harness`: a flag first, then the project's ``tackroom.toml``,
then detection, and they say which they chose and why.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Literal

from tackroom._hash import sha256
from tackroom.errors import DetectionError, TackroomError

if TYPE_CHECKING:
    from tackroom.adapters.adapter import Adapter
    from tackroom.project import Project

__all__ = [
    "MAX_COMPARE",
    "MAX_LINKS",
    "Choice",
    "Detection",
    "Marker",
    "Match",
    "Skipped",
    "choose_harness",
    "detect",
    "marker_parts",
    "repository_root",
]

MAX_LINKS = 8
"""Symbolic links followed for one marker; more is a loop or a maze, and the marker is skipped."""
MAX_COMPARE = 1024 * 1024
"""Bytes of a marker file read to compare it with another; larger files are compared by identity only."""
_MAX_PARTS = 32


@dataclass(frozen=True)
class Marker:
    """A marker found in the repository, as one adapter scores it."""

    path: str
    """The marker's path relative to the repository root, as the adapter writes it."""
    score: int
    """The adapter's own score for it."""
    counted: int
    """What it counted for: its score, or less when it mirrors another adapter's marker."""
    mirrors: tuple[str, ...] = ()
    """Other markers' paths that are the same file or hold the same bytes."""


@dataclass(frozen=True)
class Match:
    """An adapter whose markers were found, with its score (its best counted marker)."""

    adapter: str
    harness: str
    score: int
    markers: tuple[Marker, ...]


@dataclass(frozen=True)
class Skipped:
    """A marker path that exists but was not used, and why (a link out, a FIFO, ...)."""

    path: str
    reason: str


@dataclass(frozen=True)
class Detection:
    """What a repository's markers say: every match, best first, and what was skipped.

    >>> import tackroom, tempfile, pathlib
    >>> repo = pathlib.Path(tempfile.mkdtemp())
    >>> (repo / ".codex").mkdir()
    >>> found = tackroom.detect(repo)
    >>> found.best, [match.adapter for match in found.matches][:1]
    ('codex', ['codex'])
    """

    root: Path
    """The repository root the markers were looked up under."""
    matches: tuple[Match, ...] = ()
    """Adapters with at least one marker found, by score (highest first), then name."""
    mirrors: tuple[tuple[str, ...], ...] = ()
    """Groups of marker paths found to be one file or identical bytes."""
    skipped: tuple[Skipped, ...] = field(default=())

    @property
    def score(self) -> int:
        """The top score (0 when nothing matched)."""
        return self.matches[0].score if self.matches else 0

    @property
    def best(self) -> str | None:
        """The top scorer (the first by name when several tie; see :attr:`ambiguous_with`)."""
        return self.matches[0].adapter if self.matches else None

    @property
    def ambiguous_with(self) -> tuple[str, ...]:
        """The other adapters with the top score: when not empty, the repository does not say which."""
        return tuple(m.adapter for m in self.matches[1:] if m.score == self.score)

    @property
    def chosen(self) -> str | None:
        """The adapter detection chooses: the best match when it is the only top scorer."""
        return self.best if not self.ambiguous_with else None

    def match(self, adapter: str) -> Match | None:
        """The match of ``adapter``, if its markers were found."""
        return next((m for m in self.matches if m.adapter == adapter), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "root": str(self.root),
            "best": self.best,
            "score": self.score,
            "ambiguous_with": list(self.ambiguous_with),
            "chosen": self.chosen,
            "matches": [
                {
                    "adapter": m.adapter,
                    "harness": m.harness,
                    "score": m.score,
                    "markers": [
                        {"path": k.path, "score": k.score, "counted": k.counted, "mirrors": list(k.mirrors)}
                        for k in m.markers
                    ],
                }
                for m in self.matches
            ],
            "mirrors": [list(group) for group in self.mirrors],
            "skipped": [{"path": s.path, "reason": s.reason} for s in self.skipped],
        }


def repository_root(start: Path) -> Path:
    """The root of the repository holding ``start`` (the nearest directory with ``.git``), else ``start``."""
    start = Path(start).resolve()
    for directory in (start, *start.parents):
        if os.path.lexists(directory / ".git"):
            return directory
    return start


def detect(path: Path, adapters: Mapping[str, Adapter] | None = None) -> Detection:
    """Which harnesses the repository holding ``path`` is set up for.

    >>> import tackroom, tempfile, pathlib
    >>> repo = pathlib.Path(tempfile.mkdtemp())
    >>> (repo / "CLAUDE.md").write_text("Run the tests first.")
    20
    >>> found = tackroom.detect(repo)
    >>> found.best, found.chosen
    ('claude-code', 'claude-code')

    ``adapters`` default to :func:`~tackroom.adapters.resolve.load_adapters`
    with ``path`` as the project. Nothing is read outside the repository.
    """
    path = Path(path)
    if not path.is_dir():
        raise DetectionError(f"{str(path)!r} is not a directory: give the repository to look at")
    root = repository_root(path)
    if adapters is None:
        from tackroom.adapters.resolve import load_adapters

        adapters = load_adapters(project=path)
    markers = _candidate_markers(adapters)
    entries, skipped = _look_all(root, sorted({p for ms in markers.values() for p, _ in ms}))
    groups = _mirror_groups(root, entries)
    floors = _floors(markers, groups)
    matches = []
    for name, own in markers.items():
        found = _one_per_group([_marker(p, s, groups, floors) for p, s in own if p in entries], groups)
        if found:
            adapter = adapters[name]
            matches.append(Match(name, adapter.harness, max(m.counted for m in found), tuple(found)))
    matches.sort(key=lambda m: (-m.score, m.adapter))
    mirrored = sorted({tuple(sorted(g)) for g in groups.values() if len(g) > 1})
    return Detection(root, tuple(matches), tuple(mirrored), tuple(skipped))


def _one_per_group(found: list[Marker], groups: Mapping[str, frozenset[str]]) -> list[Marker]:
    """One adapter's markers, one per mirror group: its two names for one file are one signal too."""
    kept: dict[frozenset[str], Marker] = {}
    for marker in sorted(found, key=lambda m: -m.score):
        kept.setdefault(groups[marker.path], marker)
    return [m for m in found if kept[groups[m.path]] is m]


def _candidate_markers(adapters: Mapping[str, Adapter]) -> dict[str, list[tuple[str, int]]]:
    """Adapter -> its (path, score) markers, for adapters that state markers of their own."""
    out: dict[str, list[tuple[str, int]]] = {}
    for name, adapter in adapters.items():
        origin = adapter.origins.get("detect")
        if origin is not None and origin.label.startswith("extends "):
            continue  # the same signal as the adapter it extends
        own = [(str(m["path"]), int(m["score"])) for m in adapter.effective.get("detect", ())]
        if own:
            out[name] = own
    return out


def _marker(
    path: str, score: int, groups: Mapping[str, frozenset[str]], floors: Mapping[frozenset[str], int]
) -> Marker:
    group = groups[path]
    if len(group) == 1:
        return Marker(path, score, score)
    return Marker(path, score, min(score, floors[group]), tuple(sorted(group - {path})))


def _floors(
    markers: Mapping[str, list[tuple[str, int]]], groups: Mapping[str, frozenset[str]]
) -> dict[frozenset[str], int]:
    """Each mirror group's weight: the lowest score any candidate gives any of its paths."""
    floors: dict[frozenset[str], int] = {}
    for own in markers.values():
        for path, score in own:
            group = groups.get(path)
            if group is not None:
                floors[group] = min(score, floors.get(group, score))
    return floors


# -- looking markers up --------------------------------------------------------------------


@dataclass(frozen=True)
class _Entry:
    parts: tuple[str, ...]
    """Where the marker really is, relative to the root (links resolved, none left)."""
    kind: Literal["file", "dir"]
    identity: tuple[int, int]
    size: int


def _look_all(root: Path, paths: Sequence[str]) -> tuple[dict[str, _Entry], list[Skipped]]:
    entries: dict[str, _Entry] = {}
    skipped: list[Skipped] = []
    for path in paths:
        found = _look(root, path)
        if isinstance(found, _Entry):
            entries[path] = found
        elif found is not None:
            skipped.append(Skipped(path, found))
    return entries, skipped


def marker_parts(path: str) -> list[str] | None:
    """The components of a marker path, or None when it is not a plain relative path."""
    if not path or "\0" in path or "\\" in path or len(path) > 1024:
        return None
    pure = PurePosixPath(path)
    parts = [p for p in pure.parts if p != "."]
    if pure.is_absolute() or path.startswith("~") or ".." in parts or not parts or len(parts) > _MAX_PARTS:
        return None
    return parts


def _look(root: Path, path: str) -> _Entry | str | None:
    """The file or directory at ``path`` under ``root``; a reason when it is skipped; None when absent.

    Each component is looked at with ``lstat``; a link's target is walked the
    same way, and only while it stays under ``root``.
    """
    pending = marker_parts(path)
    if pending is None:
        return "not a plain relative path inside the repository; not looked up"
    here: list[str] = []
    hops = 0
    info: os.stat_result | None = None
    while pending:
        part = pending.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            if not here:
                return "a symbolic link leads out of the repository; not followed"
            here.pop()
            info = None
            continue
        try:
            info = os.lstat(root.joinpath(*here, part))
        except (FileNotFoundError, NotADirectoryError):
            return None
        except (OSError, ValueError) as exc:
            return f"cannot be looked at: {getattr(exc, 'strerror', None) or exc}"
        if stat.S_ISLNK(info.st_mode):
            hops += 1
            if hops > MAX_LINKS:
                return f"more than {MAX_LINKS} symbolic links (a loop?); not followed"
            target = _link_target(root, here, part)
            if target is None:
                return "a symbolic link leads out of the repository; not followed"
            here, pending = target[0], target[1] + pending
            info = None
            continue
        here.append(part)
        if pending and not stat.S_ISDIR(info.st_mode):
            return None  # a file where a directory would be: the marker is not there
    return _entry(root, here, info)


def _link_target(root: Path, here: list[str], name: str) -> tuple[list[str], list[str]] | None:
    """(the directory to continue from, the parts still to walk) for the link ``here/name``; None when out."""
    try:
        target = str(root.joinpath(*here, name).readlink())
    except OSError:
        return None
    if not target:
        return None
    pure = PurePosixPath(target)
    if not pure.is_absolute():
        return list(here), target.split("/")
    parts = pure.parts[1:]
    prefix = root.parts[1:]
    if tuple(parts[: len(prefix)]) != prefix:
        return None
    return [], list(parts[len(prefix) :])


def _entry(root: Path, here: list[str], info: os.stat_result | None) -> _Entry | str | None:
    if info is None:  # the marker resolved to the root itself, or through '..' to a directory
        if not here:
            return "resolves to the repository root itself; not a marker"
        try:
            info = os.lstat(root.joinpath(*here))
        except OSError:
            return None
    if stat.S_ISREG(info.st_mode):
        kind: Literal["file", "dir"] = "file"
    elif stat.S_ISDIR(info.st_mode):
        kind = "dir"
    else:
        return "not a regular file or directory (a FIFO, socket or device); not opened"
    return _Entry(tuple(here), kind, (info.st_dev, info.st_ino), info.st_size)


# -- mirrors -------------------------------------------------------------------------------


def _mirror_groups(root: Path, entries: Mapping[str, _Entry]) -> dict[str, frozenset[str]]:
    """Marker path -> the paths that are one file with it, or the same bytes (itself included)."""
    parent = {path: path for path in entries}

    def find(path: str) -> str:
        while parent[path] != path:
            parent[path] = parent[parent[path]]
            path = parent[path]
        return path

    def join(a: str, b: str) -> None:
        parent[find(a)] = find(b)

    by_identity: dict[tuple[int, int], str] = {}
    by_content: dict[tuple[int, bytes], str] = {}
    sizes = [e.size for e in entries.values() if e.kind == "file"]
    for path, entry in sorted(entries.items()):
        first = by_identity.setdefault(entry.identity, path)
        if first != path:
            join(path, first)
            continue
        if entry.kind == "file" and sizes.count(entry.size) > 1:
            digest = _digest(root, entry)
            if digest is not None:
                join(path, by_content.setdefault((entry.size, digest), path))
    groups: dict[str, set[str]] = {}
    for path in entries:
        groups.setdefault(find(path), set()).add(path)
    return {path: frozenset(groups[find(path)]) for path in entries}


def _digest(root: Path, entry: _Entry) -> bytes | None:
    """The SHA-256 of a marker file, when it is small enough to compare and still a regular file."""
    if entry.size > MAX_COMPARE:
        return None
    from tackroom.paths import read_inside

    try:
        data = read_inside(root, *entry.parts, limit=MAX_COMPARE + 1)
    except TackroomError:  # it changed under us (now a link, a FIFO): compare by identity only
        return None
    if data is None or len(data) > MAX_COMPARE:
        return None
    return sha256(data).digest()


# -- choosing ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Choice:
    """The adapter a command uses when it was asked for none by name, and why."""

    adapter: str
    by: Literal["flag", "project", "detection"]
    reason: str
    """Why, for people: ``named``, ``harness = "x" in /repo/tackroom.toml``, ``detected in ...``."""
    detection: Detection | None = None


def choose_harness(
    name: str | None,
    workdir: Path,
    *,
    project: Project | None,
    adapters: Mapping[str, Adapter] | None = None,
    how: str = "name one",
) -> Choice:
    """The adapter to use: ``name`` (a flag), else the project's ``harness``, else detection.

    ``how`` tells the user how to name one in the calling command (e.g.
    ``tackroom run NAME PROMPT``). When detection finds nothing, or several
    adapters tie for the top score, :class:`DetectionError` lists the
    candidates and how to choose; nothing is guessed.
    """
    if name is not None:
        return Choice(name, "flag", "named")
    if project is not None and project.harness is not None:
        return Choice(project.harness, "project", f'harness = "{project.harness}" in {project.file}')
    found = detect(workdir, adapters)
    where = str(project.file) if project is not None else "a tackroom.toml at the repository root"
    fix = f'name one ({how}) or set harness = "NAME" in {where}'
    if not found.matches:
        raise DetectionError(
            f"no adapter named: {fix}; no harness's markers were found in {str(found.root)!r}"
        )
    if found.ambiguous_with:
        tied = [m for m in found.matches if m.score == found.score]
        listed = "; ".join(f"{m.adapter} ({_shown(m)})" for m in tied)
        raise DetectionError(
            f"no adapter named, and {str(found.root)!r} is set up for {len(tied)} harnesses equally "
            f"(score {found.score}): {listed}. Choose one: {fix}"
        )
    best = found.matches[0]
    return Choice(best.adapter, "detection", f"detected in {found.root}: {_shown(best)}", found)


def _shown(match: Match) -> str:
    """A match's markers for people: ``.claude 10, CLAUDE.md 6``, a mirror marked as such."""
    parts = []
    for marker in match.markers:
        text = f"{marker.path} {marker.counted}"
        if marker.mirrors:
            text += f" (same as {', '.join(marker.mirrors)})"
        parts.append(text)
    return ", ".join(parts)
