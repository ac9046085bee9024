"""Names that become paths, and paths that must stay inside their root.

Every name that comes from outside (a version asked for on the command line,
an adapter name, a run id, a profile item's name) is checked before it
becomes part of a path, and every path tackroom writes or deletes is proven
inside its root first, without following a symbolic link out of it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from tackroom.errors import UnsafePathError

__all__ = ["SAFE_NAME", "check_name", "inside"]

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


def inside(root: Path, *parts: str | os.PathLike[str]) -> Path:
    """``root`` joined with ``parts``, proven to stay under ``root``.

    The join is checked lexically (no absolute part, no ``..`` that climbs
    out) and on disk: no component below ``root`` that exists may be a
    symbolic link, so a link planted in the tree can never redirect a write
    or a delete elsewhere. ``root`` itself may be a link (a user's choice).
    """
    base = Path(os.path.normpath(Path(root).absolute()))
    target = Path(os.path.normpath(base.joinpath(*parts)))
    if target != base and base not in target.parents:
        raise UnsafePathError(f"{str(Path(*parts))!r} would leave {str(base)!r}")
    current = base
    for component in target.relative_to(base).parts:
        current = current / component
        if current.is_symlink():
            raise UnsafePathError(f"{str(current)!r} is a symbolic link; tackroom does not follow links here")
    return target
