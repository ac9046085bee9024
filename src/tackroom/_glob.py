"""Path globs: as regular expressions, and as the quicker name tests a walk uses (the quickest commands
import only this module)."""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: a repeat report imports this module
if TYPE_CHECKING:
    import re
    from collections.abc import Callable


def glob_regex(glob: str) -> re.Pattern[str]:
    """A regular expression matching the relative POSIX paths ``Path.glob(glob)`` would find."""
    import re

    parts = glob.split("/")
    out = []
    for n, part in enumerate(parts):
        if part == "**":
            out.append("(?:[^/]+/)*" if n < len(parts) - 1 else ".*")
            continue
        text = "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in part)
        out.append(text + ("/" if n < len(parts) - 1 else ""))
    return re.compile("".join(out))


def glob_matcher(glob: str) -> tuple[bool, Callable[[str], bool]]:
    """Whether a root's ``glob`` decides by a file's name alone, and the test of its name (or of its
    path relative to the root), as :func:`glob_regex` matches.

    ``**/NAME`` (any depth) decides by the name: the path's other parts are any directories. A NAME
    that is ``*`` and a plain ending (``*.jsonl``) is an ending, no regular expression at all (this
    path does not import :mod:`re`).
    """
    if glob.startswith("**/") and "/" not in glob[3:] and glob[3:] != "**":
        last = glob[3:]
        if last.startswith("*") and "*" not in last[1:] and "?" not in last[1:]:
            ending = last[1:]
            return True, lambda name: name.endswith(ending)
        glob, by_name = last, True
    else:
        by_name = False
    regex = glob_regex(glob).fullmatch
    return by_name, lambda text: regex(text) is not None
