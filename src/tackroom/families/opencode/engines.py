"""Engines ``opencode-json`` (MCP servers) and ``opencode-plugin`` (hooks as one generated plugin).

``opencode-json`` merges ``mcp.<name>`` entries into a config file shared with
every other setting, the user's keys untouched::

    "mcp": {"name": {"type": "local", "command": [cmd, *args], "enabled": true, "environment": {...}},
            "web": {"type": "remote", "url": "...", "enabled": true, "headers": {...}}}

The format substitutes ``{env:VAR}`` (and ``{file:path}``) anywhere in the
file's text, and expands no ``${VAR}``: a profile's ``${VAR}`` is written
``{env:VAR}`` and read back as ``${VAR}``. A server using what that spelling
cannot say (a ``${VAR:-default}``, or a literal ``{env:`` / ``{file:``) is
dropped by name.

``opencode-plugin`` renders every hook into one JavaScript module that
exports a plugin. Its hooks live in a JSON manifest, a constant in the module,
which the module's fixed runtime reads and ``parse`` reads back. The manifest
is the Claude-style hook document (event -> groups of matcher and commands,
built by :func:`~tackroom.profile.engines.settings.hook_entry`), so inject and
refuse hooks are the adapter's templates, and an absent template or event
drops the hook by name. The adapter's data is the whole contract:

- ``events`` values are plugin hook names (``tool.execute.before``), each
  called with ``(input, output)``; ``event:<type>`` names a bus event, which a
  plugin sees through its ``event`` hook as ``{event}``.
- ``fields`` are property paths into those arguments; ``tool-name`` is where
  the plugin finds the tool a matcher is checked against.
- Each command runs with ``sh -c`` in the project directory, the handler's
  arguments as JSON on stdin (``{"input": ..., "output": ...}`` or
  ``{"event": ...}``). Exit 2 throws the command's stderr, which is the only
  way a plugin speaks before a tool runs: it blocks the tool and the message
  becomes the tool's result. Any other exit lets the tool run.
- What a command prints on stdout (exit 0) is added, where the hook's ``output`` holds the
  message's ``parts`` (``chat.message``: the user message, saved after its hooks ran), as a
  synthetic text part, which reaches the model with the prompt: that is how an inject hook
  speaks (1.18.33; kilo 7.7.7 calls the hook the same way). No other hook has that channel.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from tackroom.families.opencode.config import (
    OpencodeAgents,
    OpencodeCommands,
    OpencodePermissions,
    OpencodeSettings,
    is_number,
)
from tackroom.profile.engines.base import Context, Engine, Kind, Output
from tackroom.profile.engines.settings import (
    TOOL_MOMENTS,
    hook_entry,
    hook_groups,
    manifest_hooks,
    read_json,
    server_table,
)
from tackroom.profile.model import Hook, McpServer

KEY = "mcp"
_REF = re.compile(r"\$\{([^}]*)\}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ENV = re.compile(r"\{env:([A-Za-z_][A-Za-z0-9_]*)\}")
# opencode rewrites these in the config text before parsing it (1.18.33).
_SUBSTITUTED = ("{env:", "{file:")


class OpencodeJson(Engine):
    name = "opencode-json"
    kinds: frozenset[Kind] = frozenset({"mcp"})

    def render(self, ctx: Context, items: Sequence[McpServer]) -> list[Output]:
        servers = server_table(ctx, items, server_entry)
        return [Output(ctx.path, data={KEY: servers}, format="json", merge=True)] if servers else []

    def parse(self, ctx: Context) -> list[McpServer]:
        entries = read_json(ctx.path).get(KEY, {})
        if not isinstance(entries, dict):
            ctx.drop("MCP server", KEY, f"{ctx.path}: mcp is not a map of servers")
            return []
        found = (server_from_entry(ctx, str(name), entry) for name, entry in sorted(entries.items()))
        return [s for s in found if s is not None]


def server_entry(ctx: Context, server: McpServer) -> dict[str, Any] | None:
    """One ``mcp.<name>`` entry, or None after dropping the server by name."""
    problem = _unexpressible(server)
    if problem is not None:
        ctx.drop("MCP server", server.name, problem)
        return None
    for field, why in _UNSAID:
        if getattr(server, field):
            ctx.drop("MCP server", server.name, why, field)
    if server.transport == "sse":
        ctx.drop("MCP server", server.name, "a remote server negotiates HTTP, then SSE", "transport")
    entry: dict[str, Any]
    if server.url is not None:
        entry = {"type": "remote", "url": _to_env(server.url), "enabled": not server.disabled}
        entry |= {"headers": _env_map(server.headers)} if server.headers else {}
    else:
        command = [_to_env(part) for part in (server.command or "", *server.args)]
        entry = {"type": "local", "command": command, "enabled": not server.disabled}
        entry |= {"environment": _env_map(server.env)} if server.env else {}
    if server.timeout is not None:
        ms = server.timeout * 1000  # opencode's timeout is in milliseconds
        entry["timeout"] = int(ms) if float(ms).is_integer() else ms
    return entry


_UNSAID = (
    ("tool_timeout", "opencode has one timeout, for listing the tools"),
    ("auto_approve", "opencode approves MCP tools through permission, not the server"),
    ("cwd", "opencode starts a local server in the project directory"),
)
_LOCAL_KEYS = frozenset({"type", "command", "environment", "enabled", "timeout"})
_REMOTE_KEYS = frozenset({"type", "url", "headers", "enabled", "timeout"})


def _unexpressible(server: McpServer) -> str | None:
    texts = [server.command or "", *server.args, server.url or ""]
    texts += [v for _, v in (*server.env, *server.headers)]
    for text in texts:
        if any(mark in text for mark in _SUBSTITUTED):
            return "opencode would substitute the {env:...} or {file:...} in it"
        if any(not _NAME.fullmatch(ref) for ref in _REF.findall(text)):
            return "opencode's {env:VAR} has no ${VAR:-default}"
    return None


def _to_env(text: str) -> str:
    return _REF.sub(lambda m: f"{{env:{m.group(1)}}}", text)


def _from_env(text: str) -> str:
    return _ENV.sub(lambda m: f"${{{m.group(1)}}}", text)


def _env_map(pairs: Sequence[tuple[str, str]]) -> dict[str, str]:
    return {key: _to_env(value) for key, value in pairs}


def _pairs(mapping: Any) -> tuple[tuple[str, str], ...]:
    items = mapping.items() if isinstance(mapping, dict) else ()
    return tuple(sorted((str(k), _from_env(str(v))) for k, v in items))


def server_from_entry(ctx: Context, name: str, entry: Any) -> McpServer | None:
    """The neutral server an entry describes; None after dropping one it cannot read, by name."""
    if not isinstance(entry, dict):
        ctx.drop("MCP server", name, f"mcp.{name} is not an object")
        return None
    enabled = entry.get("enabled", True)
    timeout = entry.get("timeout")
    if not isinstance(enabled, bool) or not (timeout is None or (is_number(timeout) and timeout > 0)):
        ctx.drop("MCP server", name, "enabled is not true or false, or timeout not milliseconds")
        return None
    common: dict[str, Any] = {"disabled": not enabled, "timeout": timeout / 1000 if timeout else None}
    kind = entry.get("type")
    if kind == "remote" and isinstance(entry.get("url"), str):
        _drop_unknown(ctx, name, entry, _REMOTE_KEYS)
        return McpServer(name, url=_from_env(entry["url"]), headers=_pairs(entry.get("headers")), **common)
    command = entry.get("command")
    if kind != "local" or not isinstance(command, list) or not command:
        ctx.drop("MCP server", name, "neither a local command list nor a remote url")
        return None
    _drop_unknown(ctx, name, entry, _LOCAL_KEYS)
    words = [_from_env(str(word)) for word in command]
    return McpServer(
        name, command=words[0], args=tuple(words[1:]), env=_pairs(entry.get("environment")), **common
    )


def _drop_unknown(ctx: Context, name: str, entry: dict[str, Any], known: frozenset[str]) -> None:
    for key in sorted(set(entry) - known):
        ctx.drop("MCP server", name, f"opencode's {key!r} has no neutral form", key)


# opencode-plugin

MANIFEST = "const HOOKS = "
TOOL_NAME = "tool-name"
_PLACEHOLDER = re.compile("__MANIFEST__|__TOOL_NAME__")

_RUNTIME = """\
// Generated by tackroom from a profile's hooks; `tackroom profile render` rewrites it.
// HOOKS maps an opencode plugin hook (or "event:<bus event type>") to groups of
// commands; a group's matcher lists tool names ("*" for any).
import { spawn } from "node:child_process";

__MANIFEST__
const TOOL_NAME = __TOOL_NAME__;
const BUS_EVENT = "event:";
const PART = "prt_";
const OUTPUT_LIMIT = 65536;

function field(args, path) {
  return path.split(".").reduce((value, key) => (value == null ? undefined : value[key]), args);
}

function applies(matcher, args) {
  if (matcher === undefined || matcher === "*") return true;
  return TOOL_NAME !== null && matcher.split("|").includes(field(args, TOOL_NAME));
}

function payload(args) {
  try {
    return JSON.stringify(args);
  } catch {
    return "{}"; // a circular or BigInt value: the hook still runs, without its payload
  }
}

function run(command, args, cwd) {
  return new Promise((resolve) => {
    const child = spawn("sh", ["-c", command], { cwd, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    // Kept to their first OUTPUT_LIMIT characters, whatever a hook prints.
    child.stdout.on("data", (chunk) => (stdout = (stdout + chunk).slice(0, OUTPUT_LIMIT)));
    child.stderr.on("data", (chunk) => (stderr = (stderr + chunk).slice(0, OUTPUT_LIMIT)));
    child.on("error", (error) => resolve({ code: null, stdout: "", stderr: String(error) }));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.on("error", () => {});
    child.stdin.end(payload(args));
  });
}

function partID(parts) {
  // Past every id the message's parts have ("prt_" + time + random), so the text follows them.
  const ids = parts.map((part) => part?.id).filter((id) => typeof id === "string" && id.startsWith(PART));
  return (ids.sort().at(-1) ?? PART + Date.now().toString(16).padStart(12, "0")) + "0";
}

function addParts(output, texts) {
  // chat.message hands over the user message's parts, saved after the hooks ran: a text part
  // added there reaches the model with the prompt. Other hooks have no parts, and no such channel.
  const parts = output?.parts;
  if (!Array.isArray(parts)) return;
  const message = output.message ?? {};
  for (const text of texts) {
    parts.push({
      id: partID(parts),
      sessionID: message.sessionID,
      messageID: message.id,
      type: "text",
      text,
      synthetic: true,
    });
  }
}

async function fire(name, args, cwd) {
  const said = [];
  for (const group of HOOKS[name] ?? []) {
    if (!applies(group.matcher, args)) continue;
    for (const hook of group.hooks) {
      const result = await run(hook.command, args, cwd);
      // Exit 2 blocks: throwing is how a plugin refuses, and the message becomes the tool result.
      if (result.code === 2) throw new Error(result.stderr.trim() || `blocked by ${name} hook`);
      if (result.code === 0 && result.stdout.trim()) said.push(result.stdout.trim());
    }
  }
  if (said.length > 0) addParts(args.output, said);
}

export const TackroomHooks = async ({ directory }) => {
  const handlers = {};
  for (const name of Object.keys(HOOKS)) {
    if (name.startsWith(BUS_EVENT)) continue;
    handlers[name] = (input, output) => fire(name, { input, output }, directory);
  }
  if (Object.keys(HOOKS).some((name) => name.startsWith(BUS_EVENT))) {
    handlers.event = ({ event }) => fire(BUS_EVENT + event.type, { event }, directory);
  }
  return handlers;
};
"""


class OpencodePlugin(Engine):
    name = "opencode-plugin"
    kinds: frozenset[Kind] = frozenset({"hooks"})

    def render(self, ctx: Context, items: Sequence[Hook]) -> list[Output]:
        events = hook_groups(ctx, items, entry=self._entry)
        return [Output(ctx.path, plugin_source(ctx, events))] if events else []

    def _entry(self, ctx: Context, hook: Hook) -> tuple[str, dict[str, Any]] | None:
        # The plugin checks matchers itself, so it must know where the tool name is.
        if hook.moment in TOOL_MOMENTS and hook.matcher and _tool_name_path(ctx) is None:
            ctx.drop("hook", hook.name, f"no {TOOL_NAME} field to match tools with")
            return None
        found = hook_entry(ctx, hook)
        if found is not None and hook.timeout is not None:
            ctx.drop("hook", hook.name, "the plugin gives a command no time limit", "timeout")
        return found

    def parse(self, ctx: Context) -> list[Hook]:
        events = read_manifest(ctx.path.read_text(encoding="utf-8")) if ctx.path.is_file() else {}
        return sorted((hook for _, hook, _ in manifest_hooks(ctx, events)), key=lambda h: h.name)


def _tool_name_path(ctx: Context) -> str | None:
    fields: dict[str, str] = getattr(ctx.capability, "fields", {})
    return fields.get(TOOL_NAME)


def plugin_source(ctx: Context, events: dict[str, list[dict[str, Any]]]) -> str:
    """The plugin module: the runtime with the manifest (one line of JSON) and the tool-name path."""
    # JSON is a JavaScript expression; sort_keys keeps a re-render byte-identical.
    values = {
        "__MANIFEST__": MANIFEST + json.dumps(events, sort_keys=True, ensure_ascii=True) + ";",
        "__TOOL_NAME__": json.dumps(_tool_name_path(ctx)),
    }
    # One pass, so a command that spells a placeholder is never substituted into.
    return _PLACEHOLDER.sub(lambda m: values[m.group(0)], _RUNTIME)


def read_manifest(source: str) -> dict[str, list[dict[str, Any]]]:
    """The hooks a generated plugin holds; empty for a plugin tackroom did not write."""
    for line in source.splitlines():
        if line.startswith(MANIFEST) and line.endswith(";"):
            try:
                data = json.loads(line[len(MANIFEST) : -1])
            except json.JSONDecodeError:
                return {}
            return data if isinstance(data, dict) else {}
    return {}


ENGINES: list[Engine] = [
    OpencodeJson(),
    OpencodePlugin(),
    OpencodePermissions(),
    OpencodeAgents(),
    OpencodeCommands(),
    OpencodeSettings(),
]
