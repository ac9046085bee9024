"""Neutral tool names and the vocabulary that translates them to one harness's names.

A script says ``shell`` or ``write_file``; each harness calls those tools something
else (and names their arguments differently). The run layer builds a
:class:`ToolVocabulary` from adapter data, so this module knows no harness: it only
defines the neutral names and how a translation is expressed and loaded.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tackroom.errors import MockScriptError
from tackroom.vocabulary import NEUTRAL_TOOLS as _NEUTRAL

NEUTRAL_TOOLS: frozenset[str] = frozenset(_NEUTRAL)
"""Tool names a script may use; MCP tools are ``mcp:<server>/<tool>`` and ``raw:<Name>`` is verbatim."""

DEFAULT_MCP_PATTERN = "mcp__{server}__{tool}"


def read_problem(exc: BaseException) -> str:
    """Why a script or vocabulary file could not be read, in words for its author."""
    if isinstance(exc, OSError):
        return f"cannot read: {exc.strerror or exc}"
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 (byte {exc.object[exc.start]:#04x} at offset {exc.start}); save it as UTF-8"
    if isinstance(exc, RecursionError):
        return "arrays or tables nested too deeply"
    return str(exc)


@dataclass(frozen=True)
class ToolName:
    """One harness's name for a neutral tool, and its renames of neutral argument names."""

    name: str
    args: Mapping[str, str] = field(default_factory=dict)
    """neutral argument name -> harness argument name; unlisted arguments keep their name."""
    wrap: Mapping[str, str] | None = None
    """The arguments that carry the call instead, ``{arguments}`` standing for the script's as JSON."""


@dataclass(frozen=True)
class ToolVocabulary:
    """Translation of neutral tool names for one harness; an untranslated name is used as is."""

    tools: Mapping[str, ToolName] = field(default_factory=dict)
    mcp: str = DEFAULT_MCP_PATTERN
    """How the harness names an MCP tool; ``{server}`` and ``{tool}`` are filled in. A pattern of
    ``{tool}`` without ``{server}`` is a harness that offers an MCP tool under its own name. A ``*``
    stands for what the harness adds that only it knows (gptme 0.35 ends the name with a hash of
    it): the call goes to the one offered tool whose name matches (:func:`named`)."""
    mcp_call: ToolName | None = None
    """An MCP call made through another tool: its name, and ``wrap`` with ``{server}``/``{tool}``."""
    text_call: ToolName | None = None
    """A text answer given through a tool call, for a harness that ends only that way: the tool's
    name, and ``wrap`` with ``{text}`` standing for the text; None = text is plain text."""

    def __post_init__(self) -> None:
        problems = [f"tools.{k}: not a neutral tool name" for k in self.tools if k not in NEUTRAL_TOOLS]
        problems += _pattern_problems(self.mcp)
        answer = self.text_call
        if answer is not None and not any("{text}" in v for v in (answer.wrap or {}).values()):
            problems.append("text_call: its arguments never use {text}: the answer would be lost")
        if problems:
            raise MockScriptError("tool vocabulary: " + "; ".join(problems))

    def translate(self, tool: str) -> ToolName:
        """The harness name (and argument renames) for a script's tool reference."""
        if tool.startswith("raw:"):
            return ToolName(tool.removeprefix("raw:"))
        if tool.startswith("mcp:"):
            server, _, name = tool.removeprefix("mcp:").partition("/")
            if self.mcp_call is not None and self.mcp_call.wrap is not None:
                wrap = self.mcp_call.wrap.items()
                fill = {k: v.replace("{server}", server).replace("{tool}", name) for k, v in wrap}
                return ToolName(self.mcp_call.name, wrap=fill)
            return ToolName(self.mcp.format(server=server, tool=name))
        return self.tools.get(tool, ToolName(tool))

    def text_as_call(self, text: str) -> ToolName | None:
        """The tool call that carries ``text`` as the answer, when this harness needs one."""
        if self.text_call is None or self.text_call.wrap is None:
            return None
        fill = {k: v.replace("{text}", text) for k, v in self.text_call.wrap.items()}
        return ToolName(self.text_call.name, wrap=fill)


def named(name: str, pattern: str) -> bool:
    """Whether a tool ``name`` is one a filled-in MCP ``pattern`` names (a ``*`` there: any text)."""
    if "*" not in pattern:
        return name == pattern
    head, *middle, tail = pattern.split("*")
    if len(name) < len(head) + len(tail) or not name.startswith(head) or not name.endswith(tail):
        return False
    at, end = len(head), len(name) - len(tail)
    for part in middle:
        found = name.find(part, at, end)
        if found < 0:
            return False
        at = found + len(part)
    return True


def _pattern_problems(pattern: str) -> list[str]:
    try:
        fields = {f for _, f, _, _ in string.Formatter().parse(pattern) if f is not None}
    except ValueError as exc:
        return [f"mcp: bad pattern {pattern!r}: {exc}"]
    if fields not in ({"server", "tool"}, {"tool"}):
        return [f"mcp: pattern {pattern!r} must use {{tool}}, and no field but {{server}}"]
    return []


def load_vocabulary(path: str | Path) -> ToolVocabulary:
    """Read a vocabulary TOML file: ``mcp = "..."`` plus ``[tools.<neutral>]`` ``name``/``args``.

    ``shell = "Bash"`` under ``[tools]`` is short for a name with no argument renames.
    ``[text_call]`` ``tool``/``args`` gives text answers through that tool, ``{text}`` in its
    arguments standing for the text (a harness that ends only through a tool call).
    """
    from tackroom._toml import tomllib  # a vocabulary file's: a run's own vocabulary is in code

    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:  # unreadable, not UTF-8, not TOML, too deep
        raise MockScriptError(f"{path}: {read_problem(exc)}") from exc
    problems = [f"{path}: unknown key {k!r}" for k in data if k not in {"mcp", "tools", "text_call"}]
    tools: dict[str, ToolName] = {}
    for neutral, spec in _table(data.get("tools", {}), f"{path}: tools", problems).items():
        entry = _tool_name(spec, f"{path}: tools.{neutral}", problems)
        if entry is not None:
            tools[neutral] = entry
    mcp = data.get("mcp", DEFAULT_MCP_PATTERN)
    if not isinstance(mcp, str):
        problems.append(f"{path}: mcp: must be a string")
    text_call = _text_call(data["text_call"], f"{path}: text_call", problems) if "text_call" in data else None
    if problems:
        raise MockScriptError("\n".join(problems))
    try:
        return ToolVocabulary(tools=tools, mcp=mcp, text_call=text_call)
    except MockScriptError as exc:
        raise MockScriptError(f"{path}: {exc}") from exc


def _text_call(spec: Any, where: str, problems: list[str]) -> ToolName | None:
    found = _named(_table(spec, where, problems), "tool", where, problems)
    return None if found is None else ToolName(found[0], wrap=found[1])


def _named(
    table: dict[str, Any], key: str, where: str, problems: list[str]
) -> tuple[str, dict[str, str]] | None:
    """A table's name (under ``key``) and its string ``args``; None, the problems said, if either is wrong."""
    problems.extend(f"{where}: unknown key {k!r}" for k in table if k not in {key, "args"})
    name, args = table.get(key), _table(table.get("args", {}), f"{where}.args", problems)
    if not isinstance(name, str) or not name:
        problems.append(f"{where}.{key}: required string")
        return None
    if not all(isinstance(v, str) for v in args.values()):
        problems.append(f"{where}.args: values must be strings")
        return None
    return name, dict(args)


def _table(value: Any, where: str, problems: list[str]) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    problems.append(f"{where}: must be a table")
    return {}


def _tool_name(spec: Any, where: str, problems: list[str]) -> ToolName | None:
    if isinstance(spec, str):
        return ToolName(spec)
    found = _named(_table(spec, where, problems), "name", where, problems)
    return None if found is None else ToolName(*found)
