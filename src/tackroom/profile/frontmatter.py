"""Markdown with YAML frontmatter, read as the harnesses read it.

Real files carry a byte-order mark, CRLF line ends, and values YAML itself
refuses (``argument-hint: [file] [mode]``, the form Claude Code's docs use;
``description: Use when: x``). The harnesses read those anyway, so tackroom
does too: the text is normalised first, and a head YAML refuses is read again
line by line as ``key: value`` strings (lists as ``- item`` lines). Only a
head that is neither is an error, with its line.
"""

from __future__ import annotations

import re
from typing import Any

_KEY = re.compile(r"^([A-Za-z_][\w-]*)\s*:(?:\s+(.*)|\s*)$")
_ITEM = re.compile(r"^\s+-\s+(.*)$|^-\s+(.*)$")


class FrontmatterError(ValueError):
    """A frontmatter that does not parse even leniently; ``line`` is 1-based in the file."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def normalize(text: str) -> str:
    """Without a byte-order mark, with LF line ends."""
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def split(text: str) -> tuple[str | None, str]:
    """(the raw head, or None when there is no frontmatter, the body) of normalised text.

    A ``---`` that opens a head never closed is no frontmatter: the whole text is the body.
    """
    if not text.startswith("---\n") and text.rstrip("\n") != "---":
        return None, text
    if text.startswith("---\n---\n") or text == "---\n---":
        return "", text[8:]
    end = text.find("\n---", 3)
    while end >= 0 and text[end + 4 : end + 5] not in ("\n", ""):
        end = text.find("\n---", end + 4)
    if end < 0:
        return None, text
    return text[4 : end + 1], text[end + 5 :]


def parse_head(raw: str) -> dict[str, Any]:
    """The head's keys: YAML, or failing that ``key: value`` lines; :class:`FrontmatterError` if neither."""
    import yaml

    try:
        # libyaml's loader when PyYAML has it: the same safe subset, several times faster.
        data = yaml.load(raw, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) if raw.strip() else {}
    except yaml.YAMLError as exc:
        return _lenient(raw, exc)
    except RecursionError as exc:
        raise FrontmatterError("nested too deeply", 2) from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FrontmatterError("frontmatter must be a mapping of keys to values", 2)
    return {str(k): v for k, v in data.items()}


def read(text: str) -> tuple[dict[str, Any], str]:
    """(head keys, body) of a Markdown file's text, normalised; a bad head is :class:`FrontmatterError`."""
    raw, body = split(normalize(text))
    return (parse_head(raw) if raw is not None else {}), body


def _lenient(raw: str, cause: Exception) -> dict[str, Any]:
    data: dict[str, Any] = {}
    key: str | None = None
    for n, line in enumerate(raw.split("\n"), start=2):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item = _ITEM.match(line)
        if item is not None and key is not None and (data[key] in ("", None) or isinstance(data[key], list)):
            value = (item.group(1) or item.group(2) or "").strip()
            data[key] = [*(data[key] or []), _scalar(value)]
            continue
        found = _KEY.match(line)
        if found is None:
            if key is not None and line.startswith((" ", "\t")) and isinstance(data[key], str):
                data[key] = f"{data[key]} {line.strip()}".strip()  # a folded continuation
                continue
            mark = getattr(cause, "problem_mark", None)
            where = mark.line + 2 if mark is not None else n
            raise FrontmatterError(f"bad frontmatter: {str(cause).splitlines()[0]}", where) from cause
        key = found.group(1)
        data[key] = _scalar((found.group(2) or "").strip())
    return data


def _scalar(value: str) -> str:
    """A value as the harness reads it: the text, without one pair of matching quotes."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value
