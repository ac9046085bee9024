"""Markdown with YAML frontmatter, read as the harnesses read it.

Real files carry a byte-order mark, CRLF line ends, and values YAML itself
refuses (``argument-hint: [file] [mode]``, the form Claude Code's docs use;
``description: Use when: x``). The harnesses read those anyway, so tackroom
does too: the text is normalised first, and a head YAML refuses is read again
line by line as ``key: value`` strings (lists as ``- item`` lines). Only a
head that is neither is an error, with its line.

Most heads are a few ``key: words`` lines (a name, a description, a list of
tools): those are read and written here without PyYAML (:func:`plain_head`,
:func:`dump_head`), whose import and parser were most of a small render's
reading. Only what YAML would read as the same strings takes that way; a
property test holds both to PyYAML's own results.
"""

from __future__ import annotations

import re
from typing import Any

_KEY = re.compile(r"^([A-Za-z_][\w-]*)\s*:(?:\s+(.*)|\s*)$")
_ITEM = re.compile(r"^\s+-\s+(.*)$|^-\s+(.*)$")
_PLAIN_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]{0,63}):(?: +(.*))?")
_PLAIN_ITEM = re.compile(r"( {0,2})- +(.*)")
_PLAIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9 _.,;()/+=!?&%$@'\"-]{0,499}")
_NOT_STRINGS = frozenset(
    form
    for word in ("y", "n", "yes", "no", "true", "false", "on", "off", "null")
    for form in (word, word.title(), word.upper())
)
"""Words YAML reads as a boolean or null, not as a string (PyYAML's YAML 1.1 resolvers, and y/n)."""


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


def plain(value: object) -> bool:
    """``value`` is a string YAML reads and writes bare, as itself: words, digits and punctuation
    that starts with a letter, on one line, with no ``:`` or ``#`` and no space at either end."""
    return (
        isinstance(value, str)
        and _PLAIN_WORD.fullmatch(value) is not None
        and not value.endswith(" ")
        and "  " not in value
        and value not in _NOT_STRINGS
    )


def plain_head(raw: str) -> dict[str, Any] | None:
    """The head's keys when it is only ``key: words`` lines and ``key:`` lines with a list of
    ``- words`` under them (:func:`plain`), the same as YAML reads them; None for anything else."""
    data: dict[str, Any] = {}
    items: list[str] | None = None
    indent: str | None = None
    for line in raw.split("\n"):
        if not line:
            continue
        item = _PLAIN_ITEM.fullmatch(line)
        if item is not None:
            if items is None or (indent is not None and item.group(1) != indent) or not plain(item.group(2)):
                return None
            indent = item.group(1)
            items.append(item.group(2))
            continue
        if items is not None and not items:
            return None  # ``key:`` and no list: YAML's null
        found = _PLAIN_LINE.fullmatch(line)
        if found is None or found.group(1) in _NOT_STRINGS:
            return None
        key, value = found.group(1), found.group(2)
        if value is None:
            items, indent = [], None
            data[key] = items
        elif plain(value):
            items = None
            data[key] = value
        else:
            return None
    if items is not None and not items:
        return None
    return data or None


def dump_head(data: dict[str, Any]) -> str:
    """``data`` written as a YAML head (without its ``---`` lines), as PyYAML's ``safe_dump`` writes
    it (insertion order, block style, Unicode kept); without PyYAML when every key and value is
    :func:`plain` (a value may be a non-empty list of such strings, or a boolean)."""
    lines: list[str] = []
    for key, value in data.items():
        if not plain(key) or not _PLAIN_LINE.fullmatch(f"{key}:"):
            break
        if isinstance(value, bool):
            lines.append(f"{key}: {'true' if value else 'false'}\n")
        elif isinstance(value, list) and value and all(plain(v) for v in value):
            lines.append(f"{key}:\n" + "".join(f"- {v}\n" for v in value))
        elif plain(value):
            lines.append(f"{key}: {value}\n")
        else:
            break
    else:
        if lines:
            return "".join(lines)
    import yaml

    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False, width=1000)


def parse_head(raw: str) -> dict[str, Any]:
    """The head's keys: YAML, or failing that ``key: value`` lines; :class:`FrontmatterError` if neither."""
    if not raw.strip():
        return {}
    fast = plain_head(raw)
    if fast is not None:
        return fast
    import yaml

    try:
        # libyaml's loader when PyYAML has it: the same safe subset, several times faster.
        data = yaml.load(raw, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
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
