"""Scripts for the mock model: a sequence of turns, built in Python or read from TOML/JSON.

Turn *n* answers any request whose conversation already holds *n* assistant turns,
so the server keeps no state between requests (see :mod:`tackroom.mock.plan`).

A script file holds ``turns``, a list of tables with exactly one of ``text``,
``tool`` or ``error``::

    [[turns]]
    tool = "shell"
    args = { command = "echo hi > out.txt" }
    usage = { input = 10, output = 2 }

    [[turns]]
    error = 529
    message = "overloaded"
    delay_s = 0.5

    [[turns]]
    text = "all done"
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

from tackroom.errors import MockScriptError
from tackroom.mock.vocabulary import NEUTRAL_TOOLS, read_problem

MOCK_PREFIX = "MOCK"
"""Every text the mock makes up itself starts with this."""
DEFAULT_TEXT = "MOCK-REPLY-OK"
"""What the server answers when it has no script."""
SIDE_TEXT = "MOCK-SIDE-REPLY"
"""What a side request (no tools offered: titles, memory extraction) gets instead of a tool call."""

MAX_DELAY_S = 3600.0
"""The longest scripted delay: an hour is longer than any client waits (inf would never answer)."""

DEFAULT_INPUT_TOKENS = 1234
DEFAULT_OUTPUT_TOKENS = 56
DEFAULT_CACHE_READ_TOKENS = 78
DEFAULT_CACHE_WRITE_TOKENS = 9
DEFAULT_REASONING_TOKENS = 0

TurnKind = Literal["text", "tool", "error"]


def done_text(tool_calls: int) -> str:
    """The answer to any request past the last turn of a script."""
    return f"MOCK-DONE after {tool_calls} tool call(s)"


@dataclass(frozen=True)
class Usage:
    """Token figures reported for one answer, each put verbatim in the wire's own field.

    ``input`` goes unchanged into ``input_tokens``/``prompt_tokens``/``promptTokenCount``:
    the mock does no arithmetic, so every figure stays easy to find in a transcript.
    """

    input: int = DEFAULT_INPUT_TOKENS
    output: int = DEFAULT_OUTPUT_TOKENS
    cache_read: int = DEFAULT_CACHE_READ_TOKENS
    cache_write: int = DEFAULT_CACHE_WRITE_TOKENS
    reasoning: int = DEFAULT_REASONING_TOKENS

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise MockScriptError(f"usage.{f.name}: must be a non-negative integer, got {value!r}")


DEFAULT_USAGE = Usage()


@dataclass(frozen=True)
class Turn:
    """One scripted model answer: a text, a tool call or an HTTP error.

    >>> import tackroom
    >>> call = tackroom.Turn.call("shell", {"command": "ls"})
    >>> call.kind, call.tool, tackroom.Turn.reply("done").text
    ('tool', 'shell', 'done')
    """

    kind: TurnKind
    text: str = ""
    tool: str = ""
    """Neutral tool name, ``mcp:<server>/<tool>`` or ``raw:<HarnessName>``."""
    args: Mapping[str, Any] = field(default_factory=dict)
    status: int = 0
    message: str = ""
    usage: Usage = DEFAULT_USAGE
    delay_s: float = 0.0
    """Seconds to wait before the first byte of the answer."""
    disconnect_after: int | None = None
    """Drop the connection after this many SSE events (non-streaming: right after the headers)."""

    def __post_init__(self) -> None:
        problem = _turn_problem(self)
        if problem:
            raise MockScriptError(problem)

    @classmethod
    def reply(cls, text: str, **options: Any) -> Turn:
        """A text answer."""
        return cls("text", text=text, **options)

    @classmethod
    def call(cls, tool: str, args: Mapping[str, Any] | None = None, **options: Any) -> Turn:
        """A call of one tool by neutral name, with neutral arguments."""
        return cls("tool", tool=tool, args=dict(args or {}), **options)

    @classmethod
    def error(cls, status: int, message: str = "mock error", **options: Any) -> Turn:
        """An HTTP error in the wire's native error shape."""
        return cls("error", status=status, message=message, **options)


def _turn_problem(turn: Turn) -> str | None:
    if turn.kind not in ("text", "tool", "error"):
        return f"kind: must be text, tool or error, got {turn.kind!r}"
    if turn.kind == "tool" and (problem := _tool_problem(turn.tool)):
        return problem
    if turn.kind == "error" and not 400 <= turn.status <= 599:
        return f"error: HTTP status must be 400-599, got {turn.status!r}"
    if not 0 <= turn.delay_s <= MAX_DELAY_S:  # also refuses nan, which compares false to everything
        return f"delay_s: must be 0-{MAX_DELAY_S:g} seconds, got {turn.delay_s!r}"
    if turn.disconnect_after is not None and turn.disconnect_after < 0:
        return f"disconnect_after: must be >= 0, got {turn.disconnect_after!r}"
    return None


def _tool_problem(tool: str) -> str | None:
    if tool.startswith("raw:"):
        return None if tool != "raw:" else "tool: raw: needs a name"
    if tool.startswith("mcp:"):
        server, _, name = tool.removeprefix("mcp:").partition("/")
        return None if server and name else f"tool: {tool!r} is not mcp:<server>/<tool>"
    if tool not in NEUTRAL_TOOLS:
        return f"tool: unknown neutral tool {tool!r} (known: {', '.join(sorted(NEUTRAL_TOOLS))})"
    return None


@dataclass(frozen=True, init=False)
class Script:
    """The turns the mock model plays, in order.

    >>> import tackroom
    >>> turns = [tackroom.Turn.call("shell", {"command": "ls"}), tackroom.Turn.reply("done")]
    >>> script = tackroom.Script(turns)
    >>> [turn.kind for turn in script.turns]
    ['tool', 'text']
    """

    turns: tuple[Turn, ...]

    def __init__(self, turns: Iterable[Turn] = ()) -> None:
        object.__setattr__(self, "turns", tuple(turns))

    @classmethod
    def text(cls, text: str) -> Script:
        """A script of one text answer."""
        return cls([Turn.reply(text)])

    @property
    def tool_calls(self) -> int:
        """How many turns are tool calls."""
        return sum(1 for t in self.turns if t.kind == "tool")


_TURN_KEYS = frozenset({"text", "tool", "args", "error", "message", "usage", "delay_s", "disconnect_after"})
_USAGE_KEYS = frozenset(f.name for f in fields(Usage))


def load_script(path: str | Path) -> Script:
    """Read a ``.toml`` or ``.json`` script strictly; every problem is reported in one error."""
    path = Path(path)
    return parse_script(_read(path), str(path))


def parse_script(data: Any, where: str = "script") -> Script:
    """A script from its data (``{"turns": [...]}`` or the list of turns), as a script file holds it;
    every problem is reported in one error, each prefixed with ``where``."""
    problems: list[str] = []
    if isinstance(data, dict):
        problems += [f"unknown key {k!r}" for k in data if k != "turns"]
        data = data.get("turns", [])
    if not isinstance(data, list):
        problems.append("turns: must be a list of tables")
        data = []
    turns = [_parse_turn(i, raw, problems) for i, raw in enumerate(data)]
    if problems:
        raise MockScriptError("\n".join(f"{where}: {p}" for p in problems))
    return Script(t for t in turns if t is not None)


def script_data(script: Script) -> dict[str, Any]:
    """``script`` as a script file's data: :func:`parse_script` reads it back to an equal script."""
    return {"turns": [_turn_data(turn) for turn in script.turns]}


def _turn_data(turn: Turn) -> dict[str, Any]:
    data: dict[str, Any]
    if turn.kind == "text":
        data = {"text": turn.text}
    elif turn.kind == "tool":
        data = {"tool": turn.tool, "args": dict(turn.args)}
    else:
        data = {"error": turn.status, "message": turn.message}
    if turn.usage != DEFAULT_USAGE:
        data["usage"] = {f.name: getattr(turn.usage, f.name) for f in fields(Usage)}
    if turn.delay_s:
        data["delay_s"] = turn.delay_s
    if turn.disconnect_after is not None:
        data["disconnect_after"] = turn.disconnect_after
    return data


def _read(path: Path) -> Any:
    from tackroom._toml import tomllib  # a script file's, not a run's with a text answer

    try:
        text = path.read_text(encoding="utf-8")
        return json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    # TOMLDecodeError, JSONDecodeError and UnicodeDecodeError are ValueErrors; deep nesting recurses.
    except (OSError, ValueError, RecursionError) as exc:
        raise MockScriptError(f"{path}: {read_problem(exc)}") from exc


def _parse_turn(index: int, raw: Any, problems: list[str]) -> Turn | None:
    where = f"turns[{index}]"
    if not isinstance(raw, dict):
        problems.append(f"{where}: must be a table")
        return None
    before = len(problems)
    problems += [f"{where}: unknown key {k!r}" for k in raw if k not in _TURN_KEYS]
    kinds = [k for k in ("text", "tool", "error") if k in raw]
    if len(kinds) != 1:
        problems.append(f"{where}: needs exactly one of text, tool, error (got {kinds or 'none'})")
    problems += _misplaced(where, kinds, raw)
    usage = _parse_usage(where, raw.get("usage", {}), problems)
    if len(problems) > before or usage is None:
        return None
    try:
        return _build_turn(kinds[0], raw, usage)
    except (MockScriptError, TypeError) as exc:
        problems.append(f"{where}: {exc}")
        return None


def _misplaced(where: str, kinds: Sequence[str], raw: Mapping[str, Any]) -> list[str]:
    allowed = {"tool": {"args"}, "error": {"message"}}
    extra = {"args", "message"} & raw.keys()
    return [
        f"{where}: key {k!r} does not belong to a {kinds[0]} turn"
        for k in sorted(extra)
        if kinds and k not in allowed.get(kinds[0], set())
    ]


def _parse_usage(where: str, raw: Any, problems: list[str]) -> Usage | None:
    if not isinstance(raw, dict):
        problems.append(f"{where}.usage: must be a table")
        return None
    unknown = [k for k in raw if k not in _USAGE_KEYS]
    problems += [f"{where}.usage: unknown key {k!r}" for k in unknown]
    if unknown:
        return None
    try:
        return Usage(**raw)
    except MockScriptError as exc:
        problems.append(f"{where}.{exc}")
        return None


def _build_turn(kind: str, raw: Mapping[str, Any], usage: Usage) -> Turn:
    options: dict[str, Any] = {"usage": usage}
    if "delay_s" in raw:
        options["delay_s"] = _number(raw["delay_s"], "delay_s")
    if "disconnect_after" in raw:
        options["disconnect_after"] = _integer(raw["disconnect_after"], "disconnect_after")
    if kind == "text":
        return Turn.reply(_string(raw["text"], "text"), **options)
    if kind == "tool":
        args = raw.get("args", {})
        if not isinstance(args, dict):
            raise MockScriptError("args: must be a table")
        return Turn.call(_string(raw["tool"], "tool"), args, **options)
    message = _string(raw.get("message", "mock error"), "message")
    return Turn.error(_integer(raw["error"], "error"), message, **options)


def _string(value: Any, key: str) -> str:
    if not isinstance(value, str):
        raise MockScriptError(f"{key}: must be a string, got {value!r}")
    return value


def _integer(value: Any, key: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise MockScriptError(f"{key}: must be an integer, got {value!r}")
    return value


def _number(value: Any, key: str) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise MockScriptError(f"{key}: must be a number, got {value!r}")
    return float(value)
