"""Engines for the rest of ``opencode.json``: permissions, agents, commands and passthrough settings.

opencode keeps almost everything in one config file (``opencode.json``), read
as JSON with comments; agents and commands may also be Markdown files.

- ``opencode-permissions`` (kind ``permissions``) merges ``permission.<tool>``
  entries. A value is ``"allow" | "ask" | "deny"`` or an object of wildcard
  patterns, the **last** matching pattern winning. tackroom writes each tool's
  rules allow first, then ask, then deny, which is the neutral precedence
  (deny over ask over allow). A neutral ``shell("git push:*")`` (a command
  prefix) is opencode's ``"git push*"``; ``edit`` covers writing and editing
  alike, so a rule on ``write_file`` or ``edit_file`` is said only when both
  carry it. What has no neutral form (``external_directory``, ``doom_loop``,
  an object whose order gives another precedence) stays native passthrough.
- ``opencode-agents`` (kind ``subagents``) reads agent Markdown files (the
  capability's directories) and ``opencode.json``'s ``agent.<name>`` (an
  ``also`` location that is a file). ``tools: {write: false}`` is a denied
  tool, never an allowed one; an agent-level ``permission`` deny is a denied
  tool too. Primary agents and built-in overrides (``build``, ``plan``)
  are not subagents: in the config file they stay native passthrough.
- ``opencode-commands`` (kind ``commands``) is the generic ``dir`` engine for
  command files, and reads ``command.<name>`` entries of ``opencode.json``.
- ``opencode-settings`` (kind ``settings``) keeps every top-level key no
  capability reads (``theme``, ``model``, ``provider``, ``plugin``, ...) and
  merges them back.

Verified against the opencode 1.18.33 documentation (opencode.ai/v1/docs:
agents, permissions, commands, config).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from tackroom.profile.engines import tree
from tackroom.profile.engines.base import Context, Engine, Kind, Output
from tackroom.profile.engines.settings import native_outputs, read_json
from tackroom.profile.model import Agent, Command, Native, Permissions
from tackroom.profile.tools import BadReference, parse_tool

PERMISSION = "permission"
AGENT = "agent"
COMMAND = "command"
CLAIMED = frozenset({"mcp", PERMISSION, AGENT, COMMAND})
"""Top-level keys a capability reads; every other key is passthrough."""
VERDICTS = ("allow", "ask", "deny")
BUILT_IN_AGENTS = frozenset({"build", "plan", "general", "explore", "compaction", "title", "summary"})
EDIT = "edit"
EDITS = ("write_file", "edit_file")
"""The neutral tools opencode's ``edit`` permission covers together."""


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


# -- permissions ----------------------------------------------------------------------------------


def pattern_to_native(pattern: str) -> str | None:
    """opencode's wildcard for a neutral command pattern (``git push:*`` -> ``git push*``)."""
    if pattern.endswith(":*"):
        return pattern[:-2] + "*"
    if pattern.endswith("*"):
        return None  # "x*" would read back as the prefix rule "x:*"
    return pattern


def pattern_from_native(pattern: str) -> str:
    return pattern[:-1] + ":*" if pattern.endswith("*") else pattern


class OpencodePermissions(Engine):
    name = "opencode-permissions"
    kinds: frozenset[Kind] = frozenset({"permissions"})

    def render(self, ctx: Context, items: Sequence[Permissions]) -> list[Output]:
        table: dict[str, list[tuple[str, str]]] = {}  # key -> [(pattern or "*", verdict)]
        for permissions in items:
            for verdict in VERDICTS:
                rules = getattr(permissions, verdict)
                for ref in rules:
                    found = self._rule(ctx, verdict, ref, rules)
                    if found is not None:
                        table.setdefault(found[0], []).append((found[1], verdict))
        entries: dict[str, Any] = {}
        for key, rules in table.items():
            if len(rules) == 1 and rules[0][0] == "*":
                entries[key] = rules[0][1]
            else:
                entries[key] = dict(rules)
        return [Output(ctx.path, data={PERMISSION: entries}, format="json", merge=True)] if entries else []

    def _rule(self, ctx: Context, verdict: str, ref: str, rules: tuple[str, ...]) -> tuple[str, str] | None:
        name = f"{verdict} {ref}"
        try:
            parsed = parse_tool(ref)
        except BadReference as exc:
            ctx.drop("permission rule", name, str(exc))
            return None
        if parsed.harness is not None:
            if parsed.harness != ctx.adapter.harness:
                ctx.drop("permission rule", name, f"{parsed.harness}'s own tool")
                return None
            return parsed.tool, "*"
        if parsed.tool in EDITS:
            other = EDITS[1 - EDITS.index(parsed.tool)]
            twin = ref.replace(parsed.tool, other, 1)
            if twin not in rules:
                ctx.drop("permission rule", name, f"opencode's edit permission covers {other} too")
                return None
            if parsed.tool == "edit_file":
                return None  # said once, with its write_file twin
            key = EDIT
        elif parsed.tool == "mcp":
            native = ctx.native_tool(ref if parsed.mcp_tool else f'mcp("{parsed.server}/*")')
            if native is None:
                ctx.drop("permission rule", name, "no MCP tool naming here")
                return None
            return native, "*"
        else:
            key = ctx.tool_name(parsed.tool) or ""
            if not key:
                ctx.drop("permission rule", name, f"no tool {parsed.tool} here")
                return None
        if parsed.pattern is None:
            return key, "*"
        native_pattern = pattern_to_native(parsed.pattern) if parsed.tool == "shell" else parsed.pattern
        if native_pattern is None:
            ctx.drop("permission rule", name, "opencode's wildcard would read it as a prefix rule")
            return None
        return key, native_pattern

    def parse(self, ctx: Context) -> list[Permissions]:
        table = read_json(ctx.path).get(PERMISSION)
        if table is None:
            return []
        if not isinstance(table, dict):
            ctx.keep_setting("permission rule", PERMISSION, table)
            return []
        found: dict[str, list[str]] = {v: [] for v in VERDICTS}
        kept: dict[str, Any] = {}
        for key, value in table.items():
            rules = self._read(ctx, str(key), value)
            if rules is None:
                kept[str(key)] = value
                continue
            for verdict, ref in rules:
                found[verdict].append(ref)
        if kept:
            ctx.keep_setting("permission rule", PERMISSION, kept)
        permissions = Permissions(*(tuple(sorted(set(found[v]))) for v in VERDICTS))
        return [permissions] if permissions else []

    def _read(self, ctx: Context, key: str, value: Any) -> list[tuple[str, str]] | None:
        """(verdict, tool reference) rules for one ``permission`` entry; None keeps it native."""
        tools = self._tools(ctx, key, value)
        if tools is None:
            return None
        if isinstance(value, str):
            return [(value, t) for t in tools] if value in VERDICTS else None
        if not isinstance(value, dict) or not value:
            return None
        ranks = [VERDICTS.index(v) if v in VERDICTS else -1 for v in value.values()]
        if min(ranks) < 0 or ranks != sorted(ranks):
            return None  # a later, weaker rule would win there: no neutral precedence says that
        rules = []
        for pattern, verdict in value.items():
            for tool in tools:
                if pattern == "*":
                    rules.append((str(verdict), tool))
                else:
                    native = pattern_from_native(str(pattern)) if tool == "shell" else str(pattern)
                    rules.append((str(verdict), f"{tool}({json.dumps(native)})"))
        return rules

    def _tools(self, ctx: Context, key: str, value: Any) -> list[str] | None:
        if key == EDIT:
            return list(EDITS)
        ref = ctx.tool_ref(key)
        if ref.startswith(f"{ctx.adapter.harness}:"):
            return None  # external_directory, doom_loop, ...: kept as opencode wrote it
        if ref.startswith("mcp("):
            if not isinstance(value, str):
                return None  # an MCP tool's argument patterns have no neutral form
            return [ref.replace('/*")', '")')]
        return [ref]


# -- agents ---------------------------------------------------------------------------------------


_AGENT_KEYS = frozenset({"description", "prompt", "model", "tools", "permission", "temperature", "mode"})


def _tool_map(ctx: Context, agent: Agent) -> dict[str, bool] | None:
    tools: dict[str, bool] = {}
    for refs, allowed in ((agent.tools, True), (agent.disallowed_tools, False)):
        for ref in refs:
            native = ctx.native_tool(ref)
            if native is None:
                ctx.drop("subagent", agent.name, f"no tool {ref} here")
                return None
            tools[native] = allowed
    if agent.tools:
        tools = {"*": False, **tools}  # only the listed tools: opencode enables every other by default
    return tools


def _agent_head(ctx: Context, agent: Agent) -> dict[str, Any] | None:
    tools = _tool_map(ctx, agent)
    if tools is None:
        return None
    head: dict[str, Any] = {"description": agent.description, "mode": "subagent"}
    model = ctx.model(agent.model, "subagent", agent.name)
    if model is not None:
        head["model"] = model
    if agent.temperature is not None:
        head["temperature"] = agent.temperature
    if tools:
        head["tools"] = tools
    if agent.reasoning is not None:
        ctx.drop("subagent", agent.name, "opencode has no portable reasoning setting", "reasoning")
    return head


def agent_from(ctx: Context, name: str, data: dict[str, Any], body: str) -> Agent | None:
    """The neutral agent one opencode agent definition says; None after dropping it (or a field) by name."""
    if data.get("disable") is True:
        ctx.drop("subagent", name, "disabled (disable: true)")
        return None
    for key in sorted(set(data) - _AGENT_KEYS - {"name", "disable"}):
        ctx.drop("subagent", name, f"opencode's {key!r} has no neutral form", key)
    tools: list[str] = []
    disallowed: list[str] = []
    raw_tools = data.get("tools", {})
    if not isinstance(raw_tools, dict):
        ctx.drop("subagent", name, "tools is not a map of tool names to true or false")
        return None
    for tool, enabled in raw_tools.items():
        if not isinstance(enabled, bool):
            ctx.drop("subagent", name, f"tools.{tool} is not true or false")
            return None
        if tool == "*" and (enabled or any(raw_tools.values())):
            continue  # "*": false beside enabled tools is how opencode says "only these"
        if enabled and raw_tools.get("*") is not False:
            continue  # enabled already (opencode's default): a list of these would narrow the agent
        (tools if enabled else disallowed).append(ctx.tool_ref(str(tool)))
    denied = _denied(ctx, name, data.get("permission"))
    if denied is None:
        return None
    temperature = data.get("temperature")
    if temperature is not None and not is_number(temperature):
        ctx.drop("subagent", name, "temperature is not a number")
        return None
    model = data.get("model")
    return Agent(
        name,
        str(data.get("description") or ""),
        body,
        tuple(dict.fromkeys(tools)),
        ctx.neutral_model(model) if isinstance(model, str) else None,
        disallowed_tools=tuple(dict.fromkeys([*disallowed, *denied])),
        temperature=float(temperature) if temperature is not None else None,
    )


def _denied(ctx: Context, name: str, permission: Any) -> list[str] | None:
    """The tools an agent-level ``permission`` denies outright; its other rules are dropped by name."""
    if permission is None:
        return []
    if not isinstance(permission, dict):
        ctx.drop("subagent", name, "permission is not a map of tools to allow, ask or deny")
        return None
    denied = []
    for key, value in permission.items():
        tool = list(EDITS) if key == EDIT else [ctx.tool_ref(str(key))]
        if value == "deny":
            denied += tool
            continue
        verdicts = list(value.values()) if isinstance(value, dict) else [value]
        if any(v in ("deny", "ask") for v in verdicts):
            # Patterns or an ask have no agent-level neutral form; without them the tool would run
            # unasked (wider), so the agent is kept without the tool at all (narrower), and says so.
            denied += tool
            ctx.drop(
                "subagent",
                name,
                f"permission.{key} {_shown(value)} has no neutral form: kept without {key} at all",
                "permission",
            )
        else:
            ctx.drop("subagent", name, f"permission.{key} other than a plain deny", "permission")
    return denied


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=True) if isinstance(value, dict | list) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


class OpencodeAgents(Engine):
    """Agent Markdown files in a directory; ``agent.<name>`` entries when the path is a config file."""

    name = "opencode-agents"
    kinds: frozenset[Kind] = frozenset({"subagents"})

    def render(self, ctx: Context, items: Sequence[Agent]) -> list[Output]:
        from tackroom.profile.engines.files import frontmatter

        out = []
        for agent in items:
            head = _agent_head(ctx, agent)
            if head is not None:
                out.append(Output(ctx.path / f"{agent.name}.md", frontmatter(head, agent.body)))
        return out

    def parse(self, ctx: Context) -> list[Agent]:
        if ctx.path.is_file():
            return self._parse_config(ctx)
        if not ctx.path.is_dir():
            return []
        from tackroom.profile import frontmatter

        agents = []
        for path in (p for p in tree.entries(ctx, ctx.path, "subagent") if p.is_file() and p.suffix == ".md"):
            name = path.stem
            try:
                data, body = frontmatter.read(path.read_bytes().decode("utf-8"))
            except UnicodeDecodeError:
                ctx.drop("subagent", name, f"{path} is not UTF-8")
                continue
            except frontmatter.FrontmatterError as exc:
                ctx.drop("subagent", name, f"{path}:{exc.line}: {exc.message}")
                continue
            if data.get("mode") == "primary":
                ctx.drop("subagent", name, f"{path}: a primary agent, not a subagent")
                continue
            data.pop("mode", None)
            agent = agent_from(ctx, name, data, body)
            if agent is not None:
                agents.append(ctx.read_from(agent, path))
        return agents

    def _parse_config(self, ctx: Context) -> list[Agent]:
        table = read_json(ctx.path).get(AGENT)
        if table is None:
            return []
        if not isinstance(table, dict):
            ctx.drop("subagent", AGENT, f"{ctx.path}: agent is not a map of agents")
            return []
        agents, kept = [], {}
        for name, entry in table.items():
            if not isinstance(entry, dict):
                ctx.drop("subagent", str(name), f"{ctx.path}: agent.{name} is not an object")
                continue
            if (
                name in BUILT_IN_AGENTS
                or entry.get("mode") == "primary"
                or not (entry.get("prompt") or entry.get("description"))
            ):
                kept[name] = entry  # a primary agent or an override of a built-in: opencode's alone
                continue
            data = {k: v for k, v in entry.items() if k not in ("prompt", "mode")}
            prompt = entry.get("prompt", "")
            if not isinstance(prompt, str):
                ctx.drop("subagent", str(name), f"{ctx.path}: agent.{name}.prompt is not text")
                continue
            agent = agent_from(ctx, str(name), data, prompt)
            if agent is not None:
                agents.append(agent)
        if kept:
            ctx.keep_setting("subagent", AGENT, kept)
        return agents


# -- commands -------------------------------------------------------------------------------------


_SHELL_NATIVE = re.compile(r"!`([^`\n]+)`")
_INCLUDE_NATIVE = re.compile(r"(?<![\w@{])@([\w~./-]*[\w/-])")
_COMMAND_KEYS = frozenset({"template", "description", "model"})


def command_body_from(template: str) -> str | None:
    """The neutral body of an opencode template (``!`cmd``` -> ``!{cmd}``, ``@path`` -> ``@{path}``)."""
    if "!{" in template or "@{" in template:
        return None  # the neutral template would read these as a shell command or an inclusion
    body = _SHELL_NATIVE.sub(lambda m: "!{" + m.group(1) + "}", template)
    return _INCLUDE_NATIVE.sub(lambda m: "@{" + m.group(1) + "}", body)


class OpencodeCommands(Engine):
    """Command files through the generic ``dir`` engine; ``command.<name>`` entries of a config file."""

    name = "opencode-commands"
    kinds: frozenset[Kind] = frozenset({"commands"})
    formats = frozenset({"markdown"})

    def render(self, ctx: Context, items: Sequence[Command]) -> list[Output]:
        from tackroom.profile.engines import engine

        return engine("dir").render(ctx, items)

    def parse(self, ctx: Context) -> list[Command]:
        from tackroom.profile.engines import engine

        if not ctx.path.is_file():
            parsed: list[Command] = engine("dir").parse(ctx)
            return parsed
        table = read_json(ctx.path).get(COMMAND)
        if table is None:
            return []
        if not isinstance(table, dict):
            ctx.drop("command", COMMAND, f"{ctx.path}: command is not a map of commands")
            return []
        commands = []
        for name, entry in table.items():
            command = self._entry(ctx, str(name), entry)
            if command is not None:
                commands.append(command)
        return commands

    def _entry(self, ctx: Context, name: str, entry: Any) -> Command | None:
        if not isinstance(entry, dict) or not isinstance(entry.get("template"), str):
            ctx.drop("command", name, f"{ctx.path}: command.{name} has no template text")
            return None
        body = command_body_from(entry["template"])
        if body is None:
            why = "its template spells !{ or @{, which a neutral template reads as syntax"
            ctx.drop("command", name, f"{ctx.path}: {why}")
            return None
        for key in sorted(set(entry) - _COMMAND_KEYS):
            ctx.drop("command", name, f"opencode's {key!r} has no neutral form", key)
        model = entry.get("model")
        return Command(
            name,
            str(entry.get("description") or ""),
            body,
            model=ctx.neutral_model(model) if isinstance(model, str) else None,
        )


# -- passthrough settings ---------------------------------------------------------------------------


class OpencodeSettings(Engine):
    """The top-level keys of ``opencode.json`` no capability reads, kept and merged back as written."""

    name = "opencode-settings"
    kinds: frozenset[Kind] = frozenset({"settings"})

    def render(self, ctx: Context, items: Sequence[Native]) -> list[Output]:
        return native_outputs(ctx, items)

    def parse(self, ctx: Context) -> list[Native]:
        for key, value in read_json(ctx.path).items():
            if key not in CLAIMED:
                ctx.keep_setting("native setting", key, value)
        return []
