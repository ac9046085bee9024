"""Cline's own engines: ``cline-mcp``, ``cline-hooks``, ``cline-workflows`` and ``cline-agents``.

Each follows what the 3.0.65 bundle does with the files it reads.

``cline-mcp`` is ``mcp-json`` (``mcpServers`` in ``cline_mcp_settings.json``) for a harness that
expands nothing in that file and hands a stdio server its own whole environment under the entry's
``env``. An env ``K = "${K}"`` therefore needs no entry: it is left out, and named as a field drop
(the variable reaches the server from cline's environment). Any other ``${VAR}`` (in a command,
an argument, a URL, a header, or an env value of another shape) would reach the server as written,
so the server is dropped by name. On import an entry in cline's other accepted shapes is read too:
the nested ``{"transport": {"type": ..., ...}, ...}``, the older ``transportType`` (``http`` is
streamable HTTP) and a URL without a type, which cline speaks SSE to.

``cline-hooks`` writes one bash script per event, named after it, into a hooks directory. cline
runs every file named after an event (no matcher, no list of commands), so the script holds each
of the event's hooks as one line, ``tackroom_hook NAME TOOLS COMMAND`` (words quoted for the
shell), after a fixed runtime that reads the event's JSON from stdin once, hands it to each hook's
command on its stdin, and runs a tool hook only for the tools it names (``|``-separated, the
names cline's hook payload gives). Import reads those lines back; an event file tackroom did not
write is named, never read into hooks (one not named exactly after its event, ``pretooluse.sh``,
is not even opened). cline reads one control line from a hook file (the last
``HOOK_CONTROL<tab>`` line of its output), so a second inject at the same event is dropped by
name, and it gives a hook file no time limit of its own (the tool events are given 120 s), so a
hook's timeout is a field drop.

``cline-workflows`` writes commands as workflows. cline expands ``/<name> args`` to the workflow's
text, trimmed, followed by the prompt's `` args``; it substitutes nothing. A neutral body ending
in ``$ARGUMENTS`` and a newline (its only ``$ARGUMENTS``) is written without it, the file marked
``tackroom-arguments: appended`` so import gives the placeholder back; any other body is written
as it is (a ``$ARGUMENTS`` elsewhere stays literal text, the arguments still coming after the
text). A body with positional arguments, a shell command or a file include, a namespaced name, or
no text besides the arguments (cline loads no workflow without one) is dropped by name.

``cline-agents`` is ``dir`` for subagents as cline reads them: ``*.yaml`` or ``*.yml`` files of
YAML frontmatter and a system prompt. cline loads no agent without a description or a prompt, so
such an agent is dropped by name.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from tackroom.profile.engines import tree
from tackroom.profile.engines.base import Context, Engine, Kind, Output
from tackroom.profile.engines.files import (
    Dir,
    _description,
    _fit_name,
    _markdown,
    _text,
    frontmatter,
    parse_body,
    render_body,
)
from tackroom.profile.engines.settings import (
    HOOK_MARK,
    McpJson,
    hook_entry,
    mcp_entry,
    parse_hook,
    server_table,
)
from tackroom.profile.model import ARGUMENTS, Agent, Command, Hook, McpServer

# --- MCP ---------------------------------------------------------------------------------------

_REF = re.compile(r"\$\{[^}]*\}")
_TYPES = {"stdio": "stdio", "sse": "sse", "streamableHttp": "streamableHttp", "http": "streamableHttp"}
"""cline's spellings of a transport (``type`` or the older ``transportType``) -> the one it writes."""


class ClineMcp(McpJson):
    name = "cline-mcp"

    def render(self, ctx: Context, items: Sequence[McpServer]) -> list[Output]:
        servers = server_table(ctx, items, server_entry)
        return [Output(ctx.path, data={self.key: servers}, format="json", merge=True)] if servers else []

    def written(self, entry: Any) -> Any:
        return flat_entry(entry)


def server_entry(ctx: Context, server: McpServer) -> dict[str, Any] | None:
    """cline's entry for one server, or None after dropping it by name."""
    literal = [server.command or "", *server.args, server.url or "", *(v for _, v in server.headers)]
    if any(_REF.search(text) for text in literal):
        why = "cline expands no ${VAR} in a command, args, URL or header (it would be passed as written)"
        ctx.drop("MCP server", server.name, why)
        return None
    if server.kind != "stdio":  # a remote server has no environment (mcp_entry drops it by name)
        return mcp_entry(server, ctx)
    inherited = [key for key, value in server.env if value == f"${{{key}}}"]
    other = [key for key, value in server.env if _REF.search(value) and key not in inherited]
    if other:
        why = (
            f'env {", ".join(other)}: cline expands no ${{VAR}}; only K = "${{K}}" can come from its own '
            "environment, which a server inherits"
        )
        ctx.drop("MCP server", server.name, why)
        return None
    if inherited:
        why = (
            f"{', '.join(inherited)} is not written: cline hands a server its own environment, where "
            "the variable comes from"
        )
        ctx.drop("MCP server", server.name, why, "env")
        server = replace(server, env=tuple((k, v) for k, v in server.env if k not in inherited))
    return mcp_entry(server, ctx)


def flat_entry(entry: Any) -> Any:
    """An entry in cline's flat shape, whichever of its accepted shapes it was written in."""
    if not isinstance(entry, dict):
        return entry
    flat = dict(entry)
    transport = flat.get("transport")
    if isinstance(transport, dict) and "command" not in flat and "url" not in flat:
        del flat["transport"]
        flat = {**transport, **flat}
    spelled = flat.pop("transportType", None)
    if "type" not in flat and isinstance(spelled, str) and spelled in _TYPES:
        flat["type"] = _TYPES[spelled]
    elif "type" not in flat and spelled is not None:
        flat["transportType"] = spelled  # not cline's either: named as a field tackroom cannot read
    if "type" not in flat and "url" in flat:
        flat["type"] = "sse"  # cline's default for a URL
    return flat


# --- hooks -------------------------------------------------------------------------------------

HOOKS_MARK = "# tackroom:hooks (name, tools, command)"
"""The line after which a hook file tackroom wrote lists its hooks."""
CALL = "tackroom_hook"
_NOT_OURS = "a hook script tackroom did not write (cline runs it as it is)"
_EXTENSIONS = ("", ".sh", ".bash", ".zsh", ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".py", ".ps1")
"""The endings cline runs a hook file with (3.0.65)."""
_RUNTIME = """\
#!/usr/bin/env bash
# Written by tackroom: the profile's hooks at cline's {event} event. cline runs this file with the
# event's JSON on stdin; each hook below gets that JSON on its own stdin, in turn, and a tool hook
# runs only for the tools it names (cline's names, |-separated).
tackroom_payload=$(cat)
{tool}{call}() {{
  case "|$2|" in
    "||"{match}) printf '%s' "$tackroom_payload" | bash -c "$3" ;;
  esac
}}
{mark}
"""
_TOOL = (
    "tackroom_tool=$(printf '%s' \"$tackroom_payload\" | "
    "jq -r '(.tool_call // .tool_result).name // empty' 2>/dev/null)\n"
)


class ClineHooks(Engine):
    """One bash script per event in a hooks directory (see the module's docstring)."""

    name = "cline-hooks"
    kinds: frozenset[Kind] = frozenset({"hooks"})

    def render(self, ctx: Context, items: Sequence[Hook]) -> list[Output]:
        events: dict[str, list[tuple[str, str, str]]] = {}
        injects: dict[str, str] = {}
        for hook in items:
            found = _hook_line(ctx, hook)
            if found is None:
                continue
            event, line = found
            if hook.action == "inject" and injects.setdefault(event, hook.name) != hook.name:
                why = (
                    f"cline reads one control line from its {event} file: {injects[event]!r} already injects"
                )
                ctx.drop("hook", hook.name, why)
                continue
            if hook.timeout is not None:
                ctx.drop("hook", hook.name, "cline gives a hook file, not one hook, its time", "timeout")
            events.setdefault(event, []).append(line)
        return [
            Output(ctx.path / event, hook_script(event, lines)) for event, lines in sorted(events.items())
        ]

    def parse(self, ctx: Context) -> list[Hook]:
        if not ctx.path.is_dir():
            return []
        hooks: list[Hook] = []
        events = {e.lower(): e for e in getattr(ctx.capability, "events", {}).values()}
        for path in tree.entries(ctx, ctx.path, "hook"):
            event = _event_of(path.name, events)
            if path.is_dir() or event is None:
                what = "a folder" if path.is_dir() else "not named after a hook event tackroom maps"
                ctx.drop("hook", path.name, f"{path}: {what}, so tackroom reads no hook from it")
                continue
            if path.name != event:  # tackroom writes the bare name: any other is not opened
                ctx.drop("hook", path.name, f"{path}: {_NOT_OURS}")
                continue
            text = _text(ctx, "hook", path.name, path)
            if text is not None:
                hooks += _read_script(ctx, path, event, text)
        return sorted(hooks, key=lambda h: h.name)


def _hook_line(ctx: Context, hook: Hook) -> tuple[str, tuple[str, str, str]] | None:
    """(event, (name, tools, command)) for one hook, or None after dropping it by name."""
    found = hook_entry(ctx, hook)
    if found is None:
        return None
    event, group = found
    command = group["hooks"][0]["command"].rpartition(" " + HOOK_MARK)[0]
    tools = group.get("matcher", "*")
    return event, (hook.name, "" if tools == "*" else tools, command)


def hook_script(event: str, lines: Sequence[tuple[str, str, str]]) -> str:
    """The hook file of one event: the runtime, then one quoted call per hook."""
    tools = any(t for _, t, _ in lines)
    head = _RUNTIME.format(
        event=event,
        tool=_TOOL if tools else "",
        call=CALL,
        match=' | *"|$tackroom_tool|"*' if tools else "",
        mark=HOOKS_MARK,
    )
    calls = "".join(f"{CALL} {shlex.quote(n)} {shlex.quote(t)} {shlex.quote(c)}\n" for n, t, c in lines)
    return head + calls


def _event_of(name: str, events: dict[str, str]) -> str | None:
    """The event a file of this name runs at, as cline reads names (case and ending aside)."""
    stem, dot, ending = name.rpartition(".")
    if not dot or f".{ending.lower()}" not in _EXTENSIONS:
        stem = name
    return events.get(stem.lower())


def _read_script(ctx: Context, path: Path, event: str, text: str) -> list[Hook]:
    """The hooks of one file tackroom wrote (none, after naming it, for any other)."""
    _, mark, calls = text.partition(HOOKS_MARK + "\n")
    if not mark:
        ctx.drop("hook", path.name, f"{path}: {_NOT_OURS}")
        return []
    try:
        words = shlex.split(calls)
    except ValueError as exc:
        ctx.drop("hook", path.name, f"{path}: its hooks cannot be read back ({exc})")
        return []
    if len(words) % 4 or any(w != CALL for w in words[::4]):
        ctx.drop("hook", path.name, f"{path}: its hooks are not as tackroom wrote them")
        return []
    hooks = []
    for index in range(0, len(words), 4):
        name, tools, command = words[index + 1 : index + 4]
        hook = parse_hook(ctx, event, tools or None, f"{command} {HOOK_MARK}{name}")
        if hook is None:
            ctx.drop("hook", name, f"{path}: no neutral hook at {event}")
        else:
            hooks.append(ctx.read_from(hook, path))
    return hooks


# --- commands ----------------------------------------------------------------------------------

APPENDED = "tackroom-arguments"
"""The frontmatter key marking a workflow whose neutral body ended in ``$ARGUMENTS``."""
_WORKFLOW_ENDINGS = (".md", ".markdown", ".txt")
_KNOWN = {"description", "name", APPENDED}


class ClineWorkflows(Dir):
    """Commands as cline's workflows (see the module's docstring)."""

    name = "cline-workflows"
    kinds: frozenset[Kind] = frozenset({"commands"})
    formats = frozenset({"markdown"})

    def _render_commands(self, ctx: Context, command: Command) -> list[Output]:
        if ":" in command.name:
            ctx.drop("command", command.name, "cline reads no workflow from a subfolder (no namespaces)")
            return []
        body, problem = render_body(ctx, command.body)
        text, appended = _written_body(command.body)
        if body is None or not text.strip():
            ctx.drop("command", command.name, problem or "cline loads no workflow without text")
            return []
        head: dict[str, Any] = {"description": command.description}
        if appended:
            head[APPENDED] = "appended"
        head |= self._optional(ctx, "command", command, self._COMMAND_FIELDS)
        return [Output(ctx.path / f"{command.name}.md", frontmatter(head, text))]

    def _parse_commands(self, ctx: Context, directory: Path | None = None, prefix: str = "") -> list[Command]:
        commands = []
        for path in tree.entries(ctx, ctx.path, "command"):
            stem, ending = _split(path.name)
            if path.is_dir() or ending not in _WORKFLOW_ENDINGS or not stem:
                what = "a folder" if path.is_dir() else f"not a {'/'.join(_WORKFLOW_ENDINGS)} file"
                ctx.drop("command", path.name, f"{path}: {what}, so cline reads no workflow from it")
                continue
            command = self._workflow(ctx, path, stem)
            if command is not None:
                commands.append(ctx.read_from(command, path))
        return commands

    def _workflow(self, ctx: Context, path: Path, stem: str) -> Command | None:
        parsed = _markdown(ctx, "command", stem, path)
        if parsed is None:
            return None
        data, text = parsed
        named = data.get("name")
        name = named if isinstance(named, str) and named else stem  # cline names it so, else by file
        if not _fit_name(ctx, "command", name, path):
            return None
        if data.get("disabled") is True or data.get("enabled") is False:
            ctx.drop("command", name, f"{path}: disabled in cline")
            return None
        self._unknown(ctx, "command", name, path, data, _KNOWN | {"disabled", "enabled"})
        if data.get(APPENDED) == "appended":
            text = text.removesuffix("\n") + ARGUMENTS + "\n"
        body = parse_body(ctx, text)
        again, problem = render_body(ctx, body)
        if again is None:
            ctx.drop("command", name, f"{path}: {problem}")
            return None
        return Command(name, _description(ctx, "command", name, path, data), body)


def _written_body(body: str) -> tuple[str, bool]:
    """(the workflow's text, whether cline's appending stands for a final ``$ARGUMENTS``)."""
    ending = ARGUMENTS + "\n"
    if body.endswith(ending) and body.count(ARGUMENTS) == 1:
        return body.removesuffix(ending) + "\n", True
    return body, False


def _split(name: str) -> tuple[str, str]:
    stem, dot, ending = name.rpartition(".")
    return (stem, f".{ending.lower()}") if dot else (name, "")


# --- subagents ---------------------------------------------------------------------------------

_AGENT_ENDINGS = (".yaml", ".yml")


class ClineAgents(Dir):
    """Subagents as cline reads them (see the module's docstring)."""

    name = "cline-agents"
    kinds: frozenset[Kind] = frozenset({"subagents"})
    formats = frozenset({"markdown"})

    def _render_subagents(self, ctx: Context, agent: Agent) -> list[Output]:
        if not agent.description.strip() or not agent.body.strip():
            what = "a description" if not agent.description.strip() else "a system prompt"
            ctx.drop("subagent", agent.name, f"cline loads no subagent without {what}")
            return []
        return super()._render_subagents(ctx, agent)

    def _agent_files(self, ctx: Context, directory: Path, depth: int = 0) -> Iterator[tuple[str, Path]]:
        for path in tree.entries(ctx, directory, "subagent"):
            stem, ending = _split(path.name)
            if path.is_file() and ending in _AGENT_ENDINGS and stem:
                yield stem, path
            else:
                what = "a folder" if path.is_dir() else "not a .yaml or .yml file"
                ctx.drop("subagent", path.name, f"{path}: {what}, so cline reads no subagent from it")


ENGINES: list[Engine] = [ClineMcp(), ClineHooks(), ClineWorkflows(), ClineAgents()]
