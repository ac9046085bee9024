"""The profile: the harness-neutral setup a user writes once.

Rules, skills, subagents, commands, MCP servers and hooks, in tackroom's own
vocabulary (neutral tool names, neutral hook moments). Every item may name the
harnesses it applies to; an empty tuple means all. Values are frozen and
sorted by name, so two profiles compare equal exactly when they say the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal, TypeVar

HookAction = Literal["command", "inject", "refuse"]


@dataclass(frozen=True)
class Rule:
    """One section of the rules document (``rules/<name>.md``)."""

    name: str
    text: str
    harnesses: tuple[str, ...] = ()


@dataclass(frozen=True)
class Skill:
    """An Agent Skills directory: ``skills/<name>/SKILL.md`` plus its other files."""

    name: str
    description: str
    body: str
    files: tuple[tuple[str, bytes], ...] = ()
    """Other files of the skill, as (path relative to the skill dir, content)."""
    harnesses: tuple[str, ...] = ()


@dataclass(frozen=True)
class Agent:
    """A subagent (``agents/<name>.md``): its prompt is the body."""

    name: str
    description: str
    body: str
    tools: tuple[str, ...] = ()
    """Tools it may use, in the neutral vocabulary; empty = the harness's default."""
    model: str | None = None
    harnesses: tuple[str, ...] = ()


@dataclass(frozen=True)
class Command:
    """A slash command (``commands/<name>.md``); ``$ARGUMENTS`` marks where arguments go."""

    name: str
    description: str
    body: str
    harnesses: tuple[str, ...] = ()


ARGUMENTS = "$ARGUMENTS"


@dataclass(frozen=True)
class McpServer:
    """An MCP server: a stdio command or a URL; secrets only as ``${VAR}`` references."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    harnesses: tuple[str, ...] = ()


@dataclass(frozen=True)
class Hook:
    """Something to do at a moment: run a command, inject advisory text, or refuse a tool call."""

    name: str
    moment: str
    action: HookAction
    command: str | None = None
    """The shell command (action ``command``)."""
    text: str | None = None
    """The advisory text (``inject``) or the reason (``refuse``)."""
    matcher: tuple[str, ...] = ()
    """Neutral tool names the hook applies to (tool moments); empty = every tool."""
    harnesses: tuple[str, ...] = ()


@dataclass(frozen=True)
class Profile:
    """Everything a profile holds, each kind sorted by name."""

    rules: tuple[Rule, ...] = ()
    skills: tuple[Skill, ...] = ()
    agents: tuple[Agent, ...] = ()
    commands: tuple[Command, ...] = ()
    mcp: tuple[McpServer, ...] = ()
    hooks: tuple[Hook, ...] = ()
    sources: tuple[str, ...] = field(default=(), compare=False)
    """The directories it was read from, in layering order."""
    withheld: tuple[str, ...] = field(default=(), compare=False)
    """Items left out for want of the user's trust, each with why and the fix (see ``tackroom.trust``)."""

    def for_harness(self, harness: str) -> Profile:
        """Only the items that apply to ``harness``, with their harness lists cleared."""

        def pick(items: tuple[_T, ...]) -> tuple[_T, ...]:
            return tuple(replace(i, harnesses=()) for i in items if not i.harnesses or harness in i.harnesses)

        return Profile(
            pick(self.rules),
            pick(self.skills),
            pick(self.agents),
            pick(self.commands),
            pick(self.mcp),
            pick(self.hooks),
            self.sources,
            self.withheld,
        )

    def __bool__(self) -> bool:
        return any((self.rules, self.skills, self.agents, self.commands, self.mcp, self.hooks))


_T = TypeVar("_T", Rule, Skill, Agent, Command, McpServer, Hook)
