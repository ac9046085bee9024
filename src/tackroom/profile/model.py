"""The profile: the harness-neutral setup a user writes once.

Rules, skills, subagents, commands, MCP servers, hooks, permissions and the
session environment, in tackroom's own vocabulary (neutral tool names and tool
patterns, neutral hook moments, neutral model aliases: see
:mod:`tackroom.profile.tools`). Every item may name the harnesses it applies
to; an empty tuple means all. What has no neutral form is kept as native
passthrough (:class:`Native`), re-emitted for its own harness alone. Values are
frozen and sorted by name, so two profiles compare equal exactly when they say
the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeVar

HookAction = Literal["command", "inject", "refuse"]
McpTransport = Literal["stdio", "sse", "http"]


@dataclass(frozen=True)
class Rule:
    """One section of the rules document (``rules/<name>.md``), or a path-scoped rule.

    A rule with ``globs`` applies only while the harness works on a file
    matching one of them (Claude's ``.claude/rules`` ``paths``, Cursor's
    ``globs``, Copilot's ``applyTo``, Kiro's ``fileMatchPattern``); a harness
    without path-scoped rules drops it by name (it is never made always-on).
    """

    name: str
    text: str
    harnesses: tuple[str, ...] = ()
    globs: tuple[str, ...] = ()
    description: str | None = None


@dataclass(frozen=True)
class Skill:
    """An Agent Skills directory: ``skills/<name>/SKILL.md`` plus its other files."""

    name: str
    description: str
    body: str
    files: tuple[tuple[str, bytes], ...] = ()
    """Other files of the skill, as (path relative to the skill dir, content)."""
    harnesses: tuple[str, ...] = ()
    allowed_tools: tuple[str, ...] | None = None
    """Tool patterns the skill may use without asking (None: not said)."""
    model: str | None = None
    argument_hint: str | None = None


@dataclass(frozen=True)
class Agent:
    """A subagent (``agents/<name>.md``): its prompt is the body."""

    name: str
    description: str
    body: str
    tools: tuple[str, ...] = ()
    """Tools it may use (tool references, :mod:`tackroom.profile.tools`); empty = the harness's default."""
    model: str | None = None
    """A model reference: a neutral alias (``sonnet``) or ``<harness>:<model>``."""
    harnesses: tuple[str, ...] = ()
    disallowed_tools: tuple[str, ...] = ()
    """Tools it must not use; a harness that cannot deny them drops the agent (never widens)."""
    reasoning: str | None = None
    temperature: float | None = None


@dataclass(frozen=True)
class Command:
    """A slash command (``commands/<name>.md``; ``commands/git/commit.md`` is ``git:commit``).

    The body is a neutral template: ``$ARGUMENTS`` (all arguments), ``$1``..``$9``
    (positional), ``!{cmd}`` (a shell command's output) and ``@{path}`` (a file's
    content), rendered into each harness's own syntax or dropped by name.
    """

    name: str
    description: str
    body: str
    harnesses: tuple[str, ...] = ()
    allowed_tools: tuple[str, ...] | None = None
    model: str | None = None
    argument_hint: str | None = None


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
    transport: McpTransport | None = None
    """``stdio`` (a command), ``sse`` or ``http`` (streamable HTTP); None: stdio or http by what is set."""
    timeout: float | None = None
    """Seconds to wait for the server to start (``startup_timeout_sec``, ``timeout``)."""
    tool_timeout: float | None = None
    """Seconds to wait for one tool call."""
    auto_approve: tuple[str, ...] = ()
    """Tools of this server run without asking (``*`` = all of them: Gemini's ``trust``)."""
    disabled: bool = False
    cwd: str | None = None

    @property
    def kind(self) -> McpTransport:
        """The transport this server really uses."""
        return self.transport or ("stdio" if self.command is not None else "http")


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
    """Tool references the hook applies to (tool moments); empty = every tool.

    A neutral tool (``shell``), ``mcp(server)`` / ``mcp(server.tool)``, or a
    harness's own name or regular expression as ``<harness>:<pattern>``."""
    harnesses: tuple[str, ...] = ()
    timeout: float | None = None
    """Seconds the harness gives the command before it stops it."""
    source: tuple[str, ...] = ()
    """``session-start`` only: the starts that fire it (``startup``, ``resume``, ``clear``,
    ``compact``); empty = every start."""


@dataclass(frozen=True)
class Permissions:
    """``permissions.toml``: allow / ask / deny rules over tool patterns (``shell("git push:*")``)."""

    allow: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    harnesses: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.allow or self.ask or self.deny)


@dataclass(frozen=True)
class Native:
    """Passthrough for one harness: what has no neutral form, kept as the harness wrote it.

    ``settings`` are top-level keys of the harness's main settings file (a
    status line, output style, plugins, attribution, any key tackroom has no
    word for), merged back into that file; ``files`` are other files under its
    configuration root (relative path, content), written back as they were.
    """

    harness: str
    settings: tuple[tuple[str, Any], ...] = ()
    files: tuple[tuple[str, bytes], ...] = ()

    @property
    def name(self) -> str:
        return self.harness


@dataclass(frozen=True)
class Patch:
    """A file's bytes as the lines that differ from what tackroom renders for its items."""

    edits: tuple[tuple[int, int, tuple[str, ...]], ...]
    """(first, end, lines): rendered lines ``first:end`` (LF-split) replaced by ``lines``."""
    sha256: str
    """The file's digest: a patch that does not give it back (the render changed since) is not used."""
    bom: bool = False
    crlf: bool = False


@dataclass(frozen=True)
class Origin:
    """Import: one native file as it was, for rendering the same items back into it unchanged.

    What the neutral model does not carry (the file's own path, its frontmatter's
    key order and quoting, its line ends, a settings file's layout) is kept here.
    A render for the same adapter and scope writes the file (``data``, or
    ``patch`` applied to what its items render to, or, with neither, what it
    renders anyway, which was the same bytes) at ``path`` as long as every item in
    ``items`` is still there and unchanged; otherwise the items render as usual.
    """

    adapter: str
    harness: str
    scope: str
    path: str
    """The file, relative to the root imported (and rendered into), with ``/``."""
    items: tuple[tuple[str, str, str], ...]
    """(profile attribute, item name, digest of the item) of each item read from it."""
    data: bytes | None = None
    """The file's bytes, kept when the usual render would write other bytes (and no patch says them)."""
    patch: Patch | None = None
    """The file's bytes as a difference from what its items render to, where that is smaller."""


@dataclass(frozen=True)
class Profile:
    """Everything a profile holds, each kind sorted by name.

    >>> import tackroom
    >>> from tackroom.profile.model import Rule
    >>> profile = tackroom.Profile(rules=(Rule("style", "Prefer small functions.\\n"),))
    >>> [rule.name for rule in profile.rules], profile.hooks
    (['style'], ())
    """

    rules: tuple[Rule, ...] = ()
    skills: tuple[Skill, ...] = ()
    agents: tuple[Agent, ...] = ()
    commands: tuple[Command, ...] = ()
    mcp: tuple[McpServer, ...] = ()
    hooks: tuple[Hook, ...] = ()
    permissions: Permissions = Permissions()
    env: tuple[tuple[str, str], ...] = ()
    """Session environment (``env.toml``): set for the harness and everything it starts."""
    native: tuple[Native, ...] = ()
    sources: tuple[str, ...] = field(default=(), compare=False)
    """The directories it was read from, in layering order."""
    withheld: tuple[str, ...] = field(default=(), compare=False)
    """Items left out for want of the user's trust, each with why and the fix (see ``tackroom.trust``)."""
    origins: tuple[Origin, ...] = field(default=(), compare=False)
    """Import: the native files the items were read from (:class:`Origin`); not what the profile says."""

    def for_harness(self, harness: str) -> Profile:
        """Only the items that apply to ``harness``, with their harness lists cleared."""

        def pick(items: tuple[_T, ...]) -> tuple[_T, ...]:
            return tuple(replace(i, harnesses=()) for i in items if not i.harnesses or harness in i.harnesses)

        permissions = self.permissions
        if permissions.harnesses and harness not in permissions.harnesses:
            permissions = Permissions()
        return Profile(
            pick(self.rules),
            pick(self.skills),
            pick(self.agents),
            pick(self.commands),
            pick(self.mcp),
            pick(self.hooks),
            replace(permissions, harnesses=()),
            self.env,
            tuple(n for n in self.native if n.harness == harness),
            self.sources,
            self.withheld,
            self.origins,
        )

    def __bool__(self) -> bool:
        return any(
            (
                self.rules,
                self.skills,
                self.agents,
                self.commands,
                self.mcp,
                self.hooks,
                self.permissions,
                self.env,
                self.native,
            )
        )


_T = TypeVar("_T", Rule, Skill, Agent, Command, McpServer, Hook)
