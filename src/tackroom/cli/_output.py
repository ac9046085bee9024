"""Shared printing: JSON for machines, Rich for people (imported only when used)."""

from __future__ import annotations

import json
import re
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def dumps_json(data: Any, indent: int | None = 2) -> str:
    """``data`` as JSON text that any UTF-8 stream can take.

    Text from outside can hold a lone surrogate (``"\\ud83d"`` in a harness's
    JSON), which no UTF-8 encoder writes; inside a JSON string it is written
    as its ``\\uXXXX`` escape, which reads back as the same value.
    """
    text = json.dumps(data, indent=indent, ensure_ascii=False)
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m[0]):04x}", text)


def dumps_report_json(data: Any) -> str:
    """:func:`dumps_json`, the same text, for data of dicts, lists, strings, integers, booleans and None
    (a usage report): written by orjson, as the standard encoder indents in pure Python (a session
    report of 2.6 MB took 70 ms that way, 6 ms this one). Floats are left to :func:`dumps_json`: the
    two write some of them differently. So is whatever orjson refuses: a lone surrogate, an integer
    past 64 bits."""
    import orjson

    try:
        return orjson.dumps(data, option=orjson.OPT_INDENT_2).decode()
    except orjson.JSONEncodeError:
        return dumps_json(data)


def print_json(data: Any) -> None:
    """Write ``data`` as indented JSON to stdout."""
    sys.stdout.write(dumps_json(data) + "\n")


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def escape(value: Any) -> str:
    """``str(value)`` safe to embed in Rich markup and to print on a terminal.

    Names and text from users' files and harness logs may hold ``[markup]``, and
    control characters (an ANSI escape could recolour, move or retitle the
    terminal): markup is escaped, a control character is shown as ``\\xNN``.
    """
    from rich.markup import escape as rich_escape

    return rich_escape(printable(str(value)))


def printable(text: str) -> str:
    """``text`` to print on a terminal: each control character but tab and newline as ``\\xNN``."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m[0]):02x}", text)


def console(stderr: bool = False) -> Console:
    """A Rich console (stderr for progress and warnings)."""
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True)
