"""Names that become paths, and paths that must stay inside their root.

Every name that comes from outside (a version asked for on the command line,
an adapter name, a run id, a profile item's name) is checked before it
becomes part of a path, and every path tackroom writes or deletes is proven
inside its root first, without following a symbolic link out of it.
Reads of outside files go through :func:`read_inside` (no link, no FIFO or
device), and writes through :class:`Transaction`: every file replaced
atomically (a temporary file renamed over it in the same directory), all of
them or none.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from pathlib import Path
from typing import BinaryIO

from tackroom._glob import glob_regex as glob_regex
from tackroom.errors import UnsafePathError

__all__ = [
    "SAFE_NAME",
    "Transaction",
    "check_name",
    "inside",
    "read_inside",
    "resolves_inside",
    "write_atomic",
]

SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$")
"""One path component: no separator, no leading dot, nothing a shell or a file system reads specially."""


def check_name(value: str, what: str) -> str:
    """``value`` if it is safe as one path component, else :class:`UnsafePathError` naming ``what``."""
    if not isinstance(value, str) or not SAFE_NAME.fullmatch(value) or ".." in value:
        raise UnsafePathError(
            f"{what} {value!r} cannot be used as a file name: use letters, digits, '.', '_', '+' and '-' "
            "(not starting with '.', no '..', at most 128 characters)"
        )
    return value


def inside(root: Path, *parts: str | os.PathLike[str], proven: set[str] | None = None) -> Path:
    """``root`` joined with ``parts``, proven to stay under ``root``.

    The join is checked lexically (no absolute part, no ``..`` that climbs
    out) and on disk: no component below ``root`` that exists may be a
    symbolic link, so a link planted in the tree can never redirect a write
    or a delete elsewhere. ``root`` itself may be a link (a user's choice).

    ``proven`` is one operation's memo: the directories (absolute, normal
    paths) this check found to be real directories, added as they are found
    and not looked at again. Many files under one tree are then proven with
    one ``lstat`` per directory, not one per component of every file.
    """
    # Plain strings and os.lstat: a render checks every path of hundreds of files, often
    # several times, and pathlib's parsing was most of a large render's time.
    base = os.path.abspath(root)  # noqa: PTH100 (speed: see above)
    target = os.path.normpath(os.path.join(base, *(os.fspath(part) for part in parts)))  # noqa: PTH118
    prefix = base if base.endswith(os.sep) else base + os.sep
    if target != base and not target.startswith(prefix):
        raise UnsafePathError(f"{str(Path(*parts))!r} would leave {base!r}")
    current = base
    for component in target[len(prefix) :].split(os.sep) if target != base else ():  # noqa: PTH206
        current = os.path.join(current, component)  # noqa: PTH118
        if proven is not None and current in proven:
            continue
        try:
            mode = os.lstat(current).st_mode
        except (FileNotFoundError, NotADirectoryError):
            break  # nothing exists below a missing component, so no link either
        if stat.S_ISLNK(mode):
            raise UnsafePathError(f"{current!r} is a symbolic link; tackroom does not follow links here")
        if proven is not None and stat.S_ISDIR(mode):
            proven.add(current)
    return Path(target)


def resolves_inside(root: Path, path: str | os.PathLike[str]) -> Path:
    """``path`` (absolute, or relative to ``root``), proven to lead inside ``root`` once links are resolved.

    For paths that are links by design (npm's ``node_modules/.bin`` entries):
    where they lead is what must stay inside.
    """
    base = Path(root).resolve()
    target = Path(root, path).resolve()
    if target != base and base not in target.parents:
        raise UnsafePathError(f"{str(path)!r} leads to {str(target)!r}, outside {str(base)!r}")
    return target


_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """``path`` opened for reading if it is a regular file; else OSError, never a hang.

    A link is not followed (ELOOP) and the open does not block: a FIFO named
    like a log (``agent-1.meta.json``), a socket, a device or a directory is an
    OSError whose ``strerror`` says "not a regular file", where a plain
    ``open`` of a FIFO waits forever for a writer. Every reader of a file it
    did not write (a harness's logs, a stranger's repository) opens with this.
    """
    fd = os.open(path, _READ_FLAGS)
    try:
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
    except OSError:
        os.close(fd)
        raise
    if not regular:
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", os.fspath(path))
    return os.fdopen(fd, "rb")


def read_regular(path: str | os.PathLike[str], limit: int = -1) -> bytes:
    """The first ``limit`` bytes (all with -1) of the regular file ``path`` (:func:`open_regular`)."""
    with open_regular(path) as handle:
        return handle.read(limit)


def read_inside(
    root: Path, *parts: str | os.PathLike[str], limit: int | None = None, proven: set[str] | None = None
) -> bytes | None:
    """The bytes of the regular file ``root/parts``, or None when there is nothing there.

    The path is checked with :func:`inside`; the file is opened without
    following a link and without blocking, so a link, a FIFO, a socket, a
    device or a directory is an :class:`UnsafePathError` naming it, never a
    read of something else and never a hang. ``limit`` reads at most that
    many bytes (a stranger's file may be any size). ``proven`` is :func:`inside`'s memo.
    """
    path = inside(root, *parts, proven=proven)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafePathError(
                f"{str(path)!r} is a symbolic link; tackroom does not follow links here"
            ) from exc
        raise UnsafePathError(f"cannot read {str(path)!r}: {exc.strerror or exc}") from exc
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UnsafePathError(f"{str(path)!r} is not a regular file")
    with os.fdopen(fd, "rb") as handle:
        return handle.read() if limit is None else handle.read(limit)


def _lstat(path: str | os.PathLike[str]) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):  # nothing there, or a file where a directory would be
        return None


class Transaction:
    """Writes under one root that happen all together or not at all.

    :meth:`put` checks each target as it is added (inside the root, no link
    on the way, a regular file or nothing), so every problem is found before
    anything is written. :meth:`commit` then replaces each file atomically;
    if one write fails, the files already replaced get their old bytes back,
    the ones created are removed with the directories made for them, and the
    ``OSError`` is raised again.

    A file that replaces one is flushed to the disk before its rename (what
    was there is at stake); a new file is not: a crash can lose it, never
    anything it replaced. ``durable=False`` flushes nothing (a run's own
    home, thrown away with the run).
    """

    def __init__(self, root: Path, *, durable: bool = True) -> None:
        self.root = Path(root)
        self.durable = durable
        self.files: dict[Path, bytes] = {}
        self.removals: list[Path] = []
        self._base = inside(self.root)  # the root itself: made absolute and normal, nothing on disk
        self._checked: set[str] = set()
        """Directories under the root :meth:`put` found to be directories or missing (absolute paths)."""

    def remove(self, path: str | os.PathLike[str]) -> Path:
        """Add one regular file to delete (after every write); its directories go too once empty.

        Directories emptied by the removal are removed up to, never including, the root.
        """
        target = inside(self.root, path, proven=self._checked)
        found = _lstat(target)
        if found is not None and not stat.S_ISREG(found.st_mode):
            raise UnsafePathError(f"{str(target)!r} is not a regular file: tackroom does not remove it")
        if target not in self.removals:
            self.removals.append(target)
        return target

    def put(self, path: str | os.PathLike[str], data: bytes) -> Path:
        """Add one file (a path under the root, absolute or relative); returns the checked path."""
        # ``_checked`` doubles as inside()'s memo: whatever is in it is a directory or missing, and a
        # missing one has nothing below it, so no link either.
        target = inside(self.root, path, proven=self._checked)
        found = _lstat(target)
        if found is not None and not stat.S_ISREG(found.st_mode):
            raise UnsafePathError(f"{str(target)!r} exists and is not a regular file")
        base = os.fspath(self._base)
        parent = os.path.dirname(target)  # noqa: PTH120 (plain strings: see inside())
        while len(parent) > len(base) and parent not in self._checked:
            above = _lstat(parent)
            if above is not None and not stat.S_ISDIR(above.st_mode):
                raise UnsafePathError(f"{parent!r} is in the way: it is not a directory")
            self._checked.add(parent)  # checked now, and so is everything above it, by inside()
            parent = os.path.dirname(parent)  # noqa: PTH120
        self.files[target] = data
        return target

    def commit(self) -> list[Path]:
        """Write every file added; on a failure restore what was there and raise the error."""
        made: list[Path] = []
        done: list[tuple[Path, bytes | None, int | None]] = []
        ready: set[str] = set()  # directories this commit found or made, each proven once
        path = self.root
        try:
            for path, data in self.files.items():
                made += self._parents(path, ready)
                found = _lstat(path)
                before = read_inside(self.root, path, proven=ready) if found is not None else None
                mode = stat.S_IMODE(found.st_mode) if found is not None else None
                done.append((path, before, mode))
                write_atomic(path, data, mode, durable=self.durable and found is not None)
            for path in self.removals:
                before = read_inside(self.root, path, proven=ready)
                if before is None:
                    continue
                mode = stat.S_IMODE(path.lstat().st_mode)
                path.unlink()
                done.append((path, before, mode))
        except UnsafePathError:  # a file swapped for a link or a directory since it was checked
            self._restore(done, made)
            raise
        except OSError as exc:
            self._restore(done, made)
            if exc.filename is None:  # a failed write(2) names no file: say which one it was
                exc.filename = str(path)
            raise
        self._prune()
        return list(self.files)

    def _prune(self) -> None:
        """Remove the directories the removals left empty (never the root; a failure is harmless)."""
        base = inside(self.root)
        for path in self.removals:
            for directory in path.relative_to(base).parents[:-1]:
                with contextlib.suppress(OSError):
                    (base / directory).rmdir()  # only ever succeeds on an empty directory

    def _parents(self, path: Path, ready: set[str]) -> list[Path]:
        """Make the directories ``path`` needs, each proven inside the root (no link on the way) the
        first time this commit meets it; ``ready`` holds those already met (absolute paths)."""
        made: list[Path] = []
        parent = os.path.dirname(path)  # noqa: PTH120 (plain strings: see inside())
        if parent in ready:
            return made
        base = os.fspath(self._base)
        if base not in ready:
            if not self._base.exists():
                self._base.mkdir(parents=True)
                made.append(self._base)
            ready.add(base)
        missing = []
        while parent not in ready and len(parent) > len(base):
            missing.append(parent)
            parent = os.path.dirname(parent)  # noqa: PTH120
        for directory in reversed(missing):  # from the top: everything above each one is proven
            found = _lstat(directory)
            if found is None:
                os.mkdir(directory)  # noqa: PTH102
                made.append(Path(directory))
            elif stat.S_ISLNK(found.st_mode):
                raise UnsafePathError(f"{directory!r} is a symbolic link; tackroom does not follow it here")
            ready.add(directory)
        return made

    @staticmethod
    def _restore(done: list[tuple[Path, bytes | None, int | None]], made: list[Path]) -> None:
        for path, before, mode in reversed(done):
            with contextlib.suppress(OSError):
                if before is None:
                    path.unlink(missing_ok=True)
                else:
                    write_atomic(path, before, mode)
        for directory in reversed(made):
            with contextlib.suppress(OSError):
                directory.rmdir()


def write_atomic(path: Path, data: bytes, mode: int | None = None, *, durable: bool = True) -> None:
    """Replace ``path`` with ``data``: a temporary file in the same directory, renamed over it.

    A reader sees the old file or the new one, never half of one. ``mode``
    keeps an existing file's permissions; a new file gets the umask's.
    ``durable`` flushes the bytes to the disk before the rename, so a crash
    cannot leave an empty file where the old one was (an fsync: about a
    quarter of a millisecond a file here, most of a large render's writing).
    """
    # A short name: the target's own name may already be near the file system's limit. (os.urandom
    # is what secrets.token_hex reads; importing secrets would bring hashlib to every reader of logs.)
    tmp = path.parent / f".tackroom-{os.urandom(6).hex()}.tmp"
    fd = os.open(
        tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o666
    )
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        if mode is not None:
            tmp.chmod(mode)
        tmp.replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
