"""Reading a stranger's tree on import: what may be opened, and each thing that may not, named once.

A symbolic link that resolves inside the import's root is read as the harness
reads it (``CLAUDE.md -> AGENTS.md``, a linked ``.opencode/agent`` folder, a
linked skill). A link that leads out of the root, points at nothing, or loops
is never followed, and a FIFO, socket or device is never opened: each is
dropped by name (its path under the root) with the reason, and the rest of the
import goes on. Engines list directories through :func:`entries` and
:func:`files_below`; the import checks each capability's own path with
:func:`refused` before its engine reads it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tackroom.profile.engines.base import Context

MAX_DEPTH = 8
"""How deep :func:`files_below` walks (a tree of links inside the root stays bounded)."""

_KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
}


def _within(path: Path, base: Path) -> bool:
    return path == base or base in path.parents


def why_not(root: Path | None, path: Path, holder: Path | None = None) -> str | None:
    """Why the entry ``path`` must not be read (None: it may be, or nothing is there).

    ``holder`` is the directory being listed: a link back to it or to a folder
    above it is a loop.
    """
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        return f"cannot be examined ({exc.strerror or exc})"
    if stat.S_ISLNK(mode):
        try:
            target = str(path.readlink())
        except OSError:
            target = "?"
        link = f"a symbolic link to {target!r}"
        try:
            real = path.resolve(strict=True)
        except FileNotFoundError:
            return f"{link}, which leads nowhere"
        except (RuntimeError, OSError):
            return f"{link}, which loops"
        base = root.resolve() if root is not None else None
        if base is None or not _within(real, base):
            return (
                f"{link}, out of {str(root)!r}: tackroom follows no link out of the tree it imports "
                "(copy what it points at into the tree to import it)"
            )
        if holder is not None and _within(holder.resolve(), real):
            return f"{link}, a folder that holds it (a loop)"
        mode = real.stat().st_mode
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return f"{_KINDS.get(stat.S_IFMT(mode), 'a special file')}, not a regular file: never opened"


def name_of(ctx: Context, path: Path) -> str:
    """How a refused entry is named: its path under the import's root (else as it is)."""
    if ctx.root is not None:
        try:
            return path.relative_to(ctx.root).as_posix()
        except ValueError:
            pass
    return str(path)


def refuse(ctx: Context, kind: str, path: Path, why: str, item: str | None = None) -> None:
    """Drop a refused entry by name, once per import (an item's own file is a field of it)."""
    if path in ctx.refused:
        return
    ctx.refused.add(path)
    if item is None:
        ctx.drop(kind, name_of(ctx, path), f"{path}: {why}")
    else:
        ctx.drop(kind, item, f"{path}: {why}", name_of(ctx, path))


def refused(ctx: Context, kind: str, path: Path) -> bool:
    """Whether the capability path ``path`` (or a folder on the way to it) may not be read.

    Each component below the import's root is checked; the first one that may
    not be read is dropped by name, and True says the engine must not read
    ``path`` at all.
    """
    if ctx.root is None:
        return False
    try:
        parts = path.relative_to(ctx.root).parts
    except ValueError:
        return False
    current = ctx.root
    for part in parts:
        current = current / part
        why = why_not(ctx.root, current)
        if why is not None:
            refuse(ctx, kind, current, why)
            return True
    return False


def entries(
    ctx: Context,
    directory: Path,
    kind: str,
    item: str | None = None,
    wanted: Callable[[str], bool] | None = None,
) -> list[Path]:
    """The entries of ``directory`` an import may read, sorted; each one it may not is dropped by name.

    ``wanted`` picks the names worth looking at (the others are not examined);
    ``item`` makes a refused entry a field drop of that item (a skill's file).
    """
    found = []
    for path in sorted(directory.iterdir()):
        if wanted is not None and not wanted(path.name):
            continue
        why = why_not(ctx.root, path, directory)
        if why is None:
            found.append(path)
        else:
            refuse(ctx, kind, path, why, item)
    return found


def files_below(ctx: Context, directory: Path, kind: str, item: str | None = None) -> list[Path]:
    """Every file under ``directory`` an import may read (through links inside the root), sorted."""
    found: list[Path] = []
    seen = {directory.resolve()}

    def walk(folder: Path, depth: int) -> None:
        for path in entries(ctx, folder, kind, item):
            if not path.is_dir():
                found.append(path)
                continue
            real = path.resolve()
            if real in seen or depth >= MAX_DEPTH:
                refuse(ctx, kind, path, "a folder reached twice, or too deep: not read again", item)
                continue
            seen.add(real)
            walk(path, depth + 1)

    walk(directory, 0)
    return sorted(found)
