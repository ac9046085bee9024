"""Read a TOML file together with the line each key was written on.

TOML parsers return values, not positions, but provenance (``adapters show``)
and every load error must name a file *and line*. A small scanner walks the
text once, tracking table headers, dotted keys, strings and brackets, and
records the line of every key it sees; keys inside an inline table or array
fall back to the line of their parent key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tackroom._toml import tomllib
from tackroom.errors import ConfigError, Problem

KeyPath = tuple[str, ...]


@dataclass(frozen=True)
class TomlSource:
    """A parsed TOML document and the line of each key path in it."""

    path: str
    data: dict[str, Any]
    lines: dict[KeyPath, int]

    def line_of(self, key: KeyPath) -> int | None:
        """The line of ``key``, or of its nearest ancestor that has one."""
        for end in range(len(key), 0, -1):
            line = self.lines.get(key[:end])
            if line is not None:
                return line
        return None


def load_toml(path: Path, shown: str | None = None) -> TomlSource:
    """Parse ``path``; a syntax error becomes a :class:`ConfigError` naming file and line."""
    name = shown or str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError([Problem(name, "", f"cannot read: {exc.strerror or exc}")]) from exc
    except UnicodeDecodeError as exc:
        line = exc.object[: exc.start].count(b"\n") + 1
        byte = exc.object[exc.start]
        message = f"not UTF-8 (byte {byte:#04x} at offset {exc.start}); save the file as UTF-8"
        raise ConfigError([Problem(name, "", message, line)]) from exc
    return parse_toml(text, name)


def parse_toml(text: str, name: str) -> TomlSource:
    """Parse TOML ``text`` that came from the file called ``name``."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = getattr(exc, "lineno", None)
        message = getattr(exc, "msg", str(exc))
        raise ConfigError([Problem(name, "", f"TOML syntax error: {message}", line)]) from exc
    except RecursionError as exc:  # tomli refuses nesting past 400 levels with a RecursionError
        raise ConfigError([Problem(name, "", "arrays or tables nested too deeply")]) from exc
    except ValueError as exc:  # an integer past Python's 4,300 digits, which no setting needs
        raise ConfigError([Problem(name, "", *_too_long(text))]) from exc
    return TomlSource(name, data, _Scanner(text).scan())


def _too_long(text: str) -> tuple[str, int | None]:
    """What is wrong with TOML that parses but holds a value Python will not convert, and its line."""
    found = re.search(r"[0-9_]{4300,}", text)
    line = text.count("\n", 0, found.start()) + 1 if found else None
    return "a number with thousands of digits: no setting takes one; shorten it", line


class _Scanner:
    """Records the line of each table header and key; values are skipped, not parsed."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.line = 1
        self.table: KeyPath = ()
        self.lines: dict[KeyPath, int] = {}
        self.array_counts: dict[KeyPath, int] = {}

    def scan(self) -> dict[KeyPath, int]:
        while self._skip_blank():
            if self.text[self.i] == "[":
                self._header()
            else:
                self._key_value()
        return self.lines

    def _skip_blank(self) -> bool:
        text = self.text
        while self.i < len(text):
            char = text[self.i]
            if char == "\n":
                self.line += 1
            elif char == "#":
                self._skip_to_eol()
                continue
            elif not char.isspace():
                return True
            self.i += 1
        return False

    def _skip_to_eol(self) -> None:
        end = self.text.find("\n", self.i)
        self.i = len(self.text) if end < 0 else end

    def _header(self) -> None:
        array = self.text.startswith("[[", self.i)
        start = self.i + (2 if array else 1)
        end = self._find_unquoted("]", start)
        key = self._in_arrays(_split_key(self.text[start:end]))
        if array:
            index = self.array_counts.get(key, 0)
            self.array_counts[key] = index + 1
            self.lines.setdefault(key, self.line)
            key = (*key, str(index))
        self.table = key
        for depth in range(1, len(key) + 1):
            self.lines.setdefault(key[:depth], self.line)
        self.i = end + (2 if array else 1)
        self._skip_to_eol()

    def _in_arrays(self, key: KeyPath) -> KeyPath:
        """``key`` with the index of the last element after each array of tables it passes through.

        ``[a.since.env]`` after ``[[a.since]]`` is a table in the last ``since``
        element (TOML's rule), so its keys are recorded under ``a.since.<n>.env``.
        The header's own last part is left as written (an ``[[a.since]]`` header
        opens a new element; the caller counts it).
        """
        resolved: KeyPath = ()
        for part in key[:-1]:
            resolved = (*resolved, part)
            count = self.array_counts.get(resolved)
            if count:
                resolved = (*resolved, str(count - 1))
        return (*resolved, *key[-1:])

    def _key_value(self) -> None:
        end = self._find_unquoted("=", self.i)
        key = (*self.table, *_split_key(self.text[self.i : end]))
        for depth in range(len(self.table) + 1, len(key) + 1):
            self.lines.setdefault(key[:depth], self.line)
        self.i = end + 1
        self._skip_value()

    def _find_unquoted(self, target: str, start: int) -> int:
        i, quote = start, ""
        while i < len(self.text):
            char = self.text[i]
            if quote:
                if char == "\\" and quote == '"':
                    i += 1
                elif char == quote:
                    quote = ""
            elif char in "\"'":
                quote = char
            elif char == target or char == "\n":
                return i
            i += 1
        return i

    def _skip_value(self) -> None:
        depth = 0
        text = self.text
        while self.i < len(text):
            if text.startswith('"""', self.i) or text.startswith("'''", self.i):
                self._skip_string(text[self.i : self.i + 3])
                continue
            char = text[self.i]
            if char in "\"'":
                self._skip_string(char)
                continue
            if char in "[{":
                depth += 1
            elif char in "]}":
                depth -= 1
            elif char == "#":
                self._skip_to_eol()
                continue
            elif char == "\n":
                if depth <= 0:
                    return
                self.line += 1
            self.i += 1

    def _skip_string(self, quote: str) -> None:
        text = self.text
        self.i += len(quote)
        while self.i < len(text):
            if text[self.i] == "\\" and quote[0] == '"':
                self.i += 2
                continue
            if text.startswith(quote, self.i):
                self.i += len(quote)
                return
            if text[self.i] == "\n":
                self.line += 1
            self.i += 1


def _split_key(raw: str) -> KeyPath:
    parts: list[str] = []
    current, quote = "", ""
    for char in raw.strip():
        if quote:
            if char == quote:
                quote = ""
            else:
                current += char
        elif char in "\"'":
            quote = char
        elif char == ".":
            parts.append(current.strip())
            current = ""
        else:
            current += char
    parts.append(current.strip())
    return tuple(parts)
