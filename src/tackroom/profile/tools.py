"""Tool references and model references: how a profile names tools and models in its own words.

A **tool reference** names a tool an agent, command or skill may use, a
permission rule, or a hook matcher::

    shell                       a neutral tool (tackroom.vocabulary.NEUTRAL_TOOLS)
    shell("git push:*")         a neutral tool with an argument pattern (a command
    write_file("src/**")        prefix for shell, a path glob for files, a domain
    web_fetch("domain:x.org")   for web_fetch: each harness spells it its own way)
    mcp("github")               every tool of one MCP server
    mcp("github/create_issue")  one MCP tool
    claude-code:NotebookEdit    a harness's own name (or hook matcher pattern), for it alone

A harness's own name is kept as written, for that harness alone: import never
guesses what an unknown tool is, so it is never read as allowed elsewhere.

A **model reference** is a neutral alias (``sonnet``, ``gpt-5``; the
vocabulary's ``MODEL_ALIASES``), which each adapter's ``[models]`` table maps,
or ``<harness>:<model>``, a model one harness names its own way.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from tackroom.vocabulary import MODEL_ALIASES, NEUTRAL_TOOLS

_CALL = re.compile(r'^([a-z_]+)\(("(?:[^"\\]|\\.)*")\)$')
_NATIVE = re.compile(r"^([a-z0-9][a-z0-9._-]*):(\S.*)$")
_MCP = re.compile(r"^[A-Za-z0-9_.@-]+(?:/[A-Za-z0-9_.*-]+)?$")


@dataclass(frozen=True)
class ToolRef:
    """One parsed tool reference."""

    tool: str
    """A neutral tool name, ``mcp``, or (with ``harness``) the harness's own name or pattern."""
    pattern: str | None = None
    """The argument pattern (``git push:*``); for ``mcp``, ``server`` or ``server/tool``."""
    harness: str | None = None
    """Set for a harness's own name: the reference means something to that harness alone."""

    @property
    def native(self) -> bool:
        return self.harness is not None

    @property
    def server(self) -> str | None:
        return self.pattern.split("/", 1)[0] if self.tool == "mcp" and self.pattern else None

    @property
    def mcp_tool(self) -> str | None:
        if self.tool != "mcp" or not self.pattern or "/" not in self.pattern:
            return None
        return self.pattern.split("/", 1)[1]

    def __str__(self) -> str:
        if self.harness is not None:
            return f"{self.harness}:{self.tool}"
        if self.pattern is None:
            return self.tool
        return f"{self.tool}({json.dumps(self.pattern, ensure_ascii=False)})"


class BadReference(ValueError):
    """A tool or model reference that does not parse; the message says what is allowed."""


def parse_tool(text: str) -> ToolRef:
    """The reference ``text`` spells, or :class:`BadReference` saying what a reference may be."""
    if not isinstance(text, str) or not text.strip() or len(text) > 4096:
        raise BadReference("a tool reference is a non-empty string")
    text = text.strip()
    if text in NEUTRAL_TOOLS:
        return ToolRef(text)
    call = _CALL.match(text)
    if call is not None:
        tool, quoted = call.groups()
        try:
            pattern = json.loads(quoted)
        except ValueError as exc:
            raise BadReference(f"{text!r}: the pattern is not a quoted string") from exc
        if tool == "mcp":
            if not _MCP.match(pattern):
                raise BadReference(f'{text!r}: mcp("server") or mcp("server/tool")')
            return ToolRef("mcp", pattern)
        if tool not in NEUTRAL_TOOLS:
            raise BadReference(f"{text!r}: {tool!r} is not a neutral tool ({', '.join(NEUTRAL_TOOLS)})")
        return ToolRef(tool, pattern)
    native = _NATIVE.match(text)
    if native is not None:
        return ToolRef(native.group(2), harness=native.group(1))
    raise BadReference(
        f"{text!r} is not a tool reference: a neutral tool ({', '.join(NEUTRAL_TOOLS)}), "
        'tool("pattern"), mcp("server[/tool]"), or <harness>:<its own name>'
    )


def check_tools(texts: tuple[str, ...] | list[str], harnesses: set[str] | None = None) -> list[str]:
    """The problems with a list of tool references (empty when every one parses)."""
    problems = []
    for text in texts:
        try:
            ref = parse_tool(text)
        except BadReference as exc:
            problems.append(str(exc))
            continue
        if ref.harness is not None and harnesses is not None and ref.harness not in harnesses:
            problems.append(f"{text!r}: unknown harness {ref.harness!r}")
    return problems


@dataclass(frozen=True)
class ModelRef:
    alias: str | None = None
    harness: str | None = None
    model: str | None = None


def parse_model(text: str) -> ModelRef:
    """A neutral alias, or ``<harness>:<model>``; anything else is :class:`BadReference`."""
    if not isinstance(text, str) or not text.strip():
        raise BadReference("a model is a non-empty string")
    if text in MODEL_ALIASES:
        return ModelRef(alias=text)
    native = _NATIVE.match(text)
    if native is not None:
        return ModelRef(harness=native.group(1), model=native.group(2))
    raise BadReference(
        f"model {text!r} is neither a neutral alias ({', '.join(MODEL_ALIASES)}) nor "
        "<harness>:<model> (a model one harness names its own way)"
    )
