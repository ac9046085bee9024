"""Options: the closed set of per-run values a user may set, checked and coerced by kind.

A flag (``--option KEY=VALUE``), a project file's ``[options]`` and the Python
API all come through :func:`coerce_option`, so a value means the same wherever
it was written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from tackroom.errors import OptionError
from tackroom.vocabulary import OPTION_KINDS


def coerce_option(name: str, value: Any) -> Any:
    """Check an option name against the closed set and coerce its value to the option's kind."""
    kind = OPTION_KINDS.get(name)
    if kind is None:
        raise OptionError(f"unknown option {name!r}; options are: {', '.join(OPTION_KINDS)}")
    try:
        coerced = _COERCE[kind](value)
    except (TypeError, ValueError) as exc:
        raise OptionError(f"option {name!r} takes {_KIND_WORDS[kind]}, not {value!r}") from exc
    if name == "model" and not _MODEL.fullmatch(str(coerced)):
        # A model name goes into argv, environment values and config files (opencode-acp's is JSON in
        # a variable): a quote or a brace there would be syntax, so a name is never more than this.
        raise OptionError(
            f"option 'model' takes a model name (letters, digits and . _ : / @ + - [ ]), not {value!r}"
        )
    return coerced


def parse_option_args(pairs: Iterable[str]) -> dict[str, Any]:
    """``KEY=VALUE`` strings (``--option``) -> coerced values; list options repeat or comma-split."""
    options: dict[str, Any] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        name = name.strip()
        if not sep:
            raise OptionError(f"--option expects KEY=VALUE, got {pair!r}")
        value = coerce_option(name, raw)
        if OPTION_KINDS[name] == "list" and name in options:
            value = [*options[name], *value]
        options[name] = value
    return options


def _flag(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "1", "yes", "on"):
        return True
    if isinstance(value, str) and value.lower() in ("false", "0", "no", "off"):
        return False
    raise ValueError(value)


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise TypeError(value)
    number = int(value)
    if number < 1:
        raise ValueError(value)
    return number


def _str(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise TypeError(value)
    return value


def _list(value: Any) -> list[str]:
    if isinstance(value, str):
        items = [item.strip() for item in value.split(",")]
    elif isinstance(value, list | tuple) and all(isinstance(item, str) for item in value):
        items = [item.strip() for item in value]
    else:
        raise TypeError(value)
    if not items or not all(items):
        raise ValueError(value)
    return items


_MODEL = re.compile(r"[A-Za-z0-9._:/@+\[\]-]{1,256}")
"""A model name as providers spell them: ``anthropic/claude-sonnet-4-5``, ``custom:x``, ``sonnet[1m]``,
``us.anthropic.claude-3-5-sonnet-20241022-v2:0``, ``claude-sonnet-4-5@20250929``."""
_COERCE = {"flag": _flag, "int": _int, "str": _str, "list": _list}
_KIND_WORDS = {
    "flag": "true or false",
    "int": "a whole number of at least 1",
    "str": "a non-empty string",
    "list": "a list of non-empty strings (comma-separated on the command line)",
}
