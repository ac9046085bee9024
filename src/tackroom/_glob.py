"""Path globs as regular expressions (kept apart: the quickest commands import only this)."""

from __future__ import annotations

import re


def glob_regex(glob: str) -> re.Pattern[str]:
    """A regular expression matching the relative POSIX paths ``Path.glob(glob)`` would find."""
    parts = glob.split("/")
    out = []
    for n, part in enumerate(parts):
        if part == "**":
            out.append("(?:[^/]+/)*" if n < len(parts) - 1 else ".*")
            continue
        text = "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in part)
        out.append(text + ("/" if n < len(parts) - 1 else ""))
    return re.compile("".join(out))
