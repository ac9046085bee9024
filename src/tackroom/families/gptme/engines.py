"""gptme's MCP servers and hooks in its TOML: ``~/.config/gptme/config.toml``, a project's ``gptme.toml``.

Both files are shared with every other setting gptme has, so both engines merge (the user's keys
stay, only tackroom's own list items are replaced). What gptme 0.35.1 reads (``config/models.py``,
``config/user.py``, ``mcp/client.py``, ``hooks/script.py``):

- ``gptme-mcp``: ``[mcp]`` with ``enabled = true`` (without it gptme starts no server at all, and a
  project's ``[mcp]`` decides that for the user's servers too) and ``[[mcp.servers]]`` tables of
  ``name``, ``enabled``, ``command``, ``args``, ``env``, ``url``, ``headers``. A server with a URL
  is spoken to over streamable HTTP (there is no SSE), and gptme expands no ``${VAR}``: it hands a
  stdio server its own whole environment over the table's ``env``, so ``KEY = "${KEY}"`` is what
  it does anyway (not written, said), while any other reference would reach the server literally
  (the server is dropped by name). A key gptme does not know makes it skip the entry (the whole
  project file fails), so one is dropped by name on import.
- ``gptme-hooks``: ``[[hooks.scripts]]`` tables of ``event`` (only ``session.start`` and
  ``session.end``), ``command`` (run by a shell, in the workspace), ``timeout`` (whole seconds,
  1..300, default 30) and ``priority``. A hook is named by the ``# tackroom:hook <name>`` comment
  ending its command; one without it is named after its event and place. ``priority`` orders
  hooks and has no neutral form: a hook that sets it is imported, the field dropped by name.
  Every other moment is open only to a Python plugin: the engine writes one
  (:mod:`tackroom.families.gptme.plugin`, ``plugins/tackroom_hooks`` beside the user's config, a
  project's in ``.gptme/plugins``) and names it in ``[plugins] paths``, and in ``enabled`` when
  that allowlist already names other plugins (an empty one means all, so it is left alone).
  Import reads the generated plugin's manifest back; any other plugin the config names is code
  with no neutral form, and is dropped by name (the merge keeps it in the file).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from tackroom._toml import tomllib
from tackroom.families.gptme.plugin import INIT, MODULE, PACKAGE, plugin_source, read_manifest
from tackroom.profile.engines.base import Context, Engine, Kind, Output
from tackroom.profile.engines.settings import (
    HOOK_MARK,
    BadEntry,
    hook_command,
    hook_entry,
    hook_groups,
    manifest_hooks,
    mcp_entry,
    mcp_from_entry,
    named_apart,
)
from tackroom.profile.engines.tree import refused
from tackroom.profile.model import Hook, McpServer

MCP = "mcp"
SERVERS = "servers"
HOOKS = "hooks"
SCRIPTS = "scripts"
SERVER_KEYS = frozenset({"name", "enabled", "command", "args", "env", "url", "headers"})
"""The fields of gptme's ``MCPServerConfig``: an entry holding any other is skipped by gptme."""
SCRIPT_KEYS = frozenset({"event", "command", "timeout", "priority"})
SCRIPT_EVENTS = frozenset({"session.start", "session.end"})
"""The only events gptme 0.35.1 runs a ``[[hooks.scripts]]`` command at; the rest go to the plugin."""
PLUGINS = "plugins"
USER_CONFIG = "config.toml"
PROJECT_PLUGINS = ".gptme/plugins"
MAX_TIMEOUT = 300
"""gptme's longest hook timeout, in seconds (``MAX_SCRIPT_HOOK_TIMEOUT``)."""
_REF = re.compile(r"\$\{[^}]*\}")


def read_toml(path: Path) -> dict[str, Any]:
    """The TOML at ``path`` (empty when there is no file)."""
    if not path.is_file():
        return {}
    return tomllib.loads(path.read_bytes().decode("utf-8"))


def _list(ctx: Context, data: dict[str, Any], table: str, key: str, kind: str) -> list[Any]:
    """``data[table][key]`` when it is a list (else dropped by name, as gptme refuses it)."""
    section = data.get(table)
    if section is None:
        return []
    if not isinstance(section, dict):
        ctx.drop(kind, table, f"{ctx.path}: [{table}] is not a table (gptme refuses the file)")
        return []
    found = section.get(key, [])
    if not isinstance(found, list):
        ctx.drop(kind, f"{table}.{key}", f"{ctx.path}: {table}.{key} is not a list (gptme refuses the file)")
        return []
    return found


# --- MCP ---------------------------------------------------------------------------------------


class GptmeMcp(Engine):
    """MCP servers as ``[[mcp.servers]]`` tables, with ``[mcp] enabled = true``."""

    name = "gptme-mcp"
    kinds: frozenset[Kind] = frozenset({"mcp"})

    def render(self, ctx: Context, items: Sequence[McpServer]) -> list[Output]:
        servers = [e for e in (_server_entry(ctx, s) for s in items) if e is not None]
        if not servers:
            return []
        return [Output(ctx.path, data={MCP: {"enabled": True, SERVERS: servers}}, format="toml", merge=True)]

    def parse(self, ctx: Context) -> list[McpServer]:
        data = read_toml(ctx.path)
        entries = _list(ctx, data, MCP, SERVERS, "MCP server")
        found: list[McpServer] = []
        for n, entry in enumerate(entries, start=1):
            server = _imported(ctx, n, entry)
            if server is not None:
                found.append(server)
        if not found:
            return []
        enabled = data[MCP].get("enabled", False)
        if enabled is not True:
            for server in found:
                ctx.drop(
                    "MCP server",
                    server.name,
                    f"{ctx.path}: [mcp] enabled is {str(enabled).lower()} there, so gptme starts none",
                )
            return []
        for key in sorted(set(data[MCP]) - {"enabled", SERVERS}):
            ctx.drop("native setting", f"{MCP}.{key}", f"{ctx.path}: {MCP}.{key} has no neutral form")
        return sorted(found, key=lambda s: s.name)


def _server_entry(ctx: Context, server: McpServer) -> dict[str, Any] | None:
    """One ``[[mcp.servers]]`` table, or None after dropping the server by name."""
    if server.kind == "sse":
        ctx.drop("MCP server", server.name, "gptme speaks streamable HTTP to a server URL, not SSE")
        return None
    literal = [server.command or "", *server.args, server.url or "", *(v for _, v in server.headers)]
    if any(_REF.search(text) for text in literal):
        ctx.drop("MCP server", server.name, "gptme expands no ${VAR} in a command, args, URL or header")
        return None
    passed = [k for k, v in server.env if v == f"${{{k}}}"]
    if any(_REF.search(v) for k, v in server.env if k not in passed):
        ctx.drop(
            "MCP server",
            server.name,
            'gptme passes env values literally; only KEY = "${KEY}" (its own environment) reaches a server',
        )
        return None
    if passed:
        ctx.drop(
            "MCP server",
            server.name,
            f"gptme hands a server its own environment, so {', '.join(passed)} reach it from there when set",
            "env",
        )
    kept = tuple((k, v) for k, v in server.env if k not in passed)
    entry = mcp_entry(replace(server, env=kept), ctx)
    if server.kind == "stdio" and not entry.get("env"):
        entry.pop("env", None)
    return {"name": server.name, **entry}


def _imported(ctx: Context, n: int, entry: Any) -> McpServer | None:
    """One ``[[mcp.servers]]`` table read for import; what cannot be read is dropped by name."""
    where = f"{ctx.path}: mcp.servers[{n}]"
    if not isinstance(entry, dict):
        ctx.drop("MCP server", f"mcp.servers[{n}]", f"{where} is not a table (gptme refuses the file)")
        return None
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        ctx.drop("MCP server", f"mcp.servers[{n}]", f"{where} has no name (gptme skips it)")
        return None
    unknown = sorted(set(entry) - SERVER_KEYS)
    if unknown:
        shown = ", ".join(repr(k)[:60] for k in unknown[:4])
        ctx.drop("MCP server", name, f"{where}: gptme skips an entry with keys it does not know ({shown})")
        return None
    url = entry.get("url", "")
    if url and not (isinstance(url, str) and url.startswith(("http://", "https://"))):
        ctx.drop("MCP server", name, f"{where}: url is not http(s), so gptme runs its command instead")
        return None
    # gptme's defaults ("", [], {}) say nothing; a URL wins over a command (mcp/client.py).
    rest = {k: v for k, v in entry.items() if k != "name" and v not in ("", [], {})}
    if url and "command" in rest:
        ctx.drop("MCP server", name, f"{where}: gptme uses the url and never runs the command", "command")
        rest = {k: v for k, v in rest.items() if k not in ("command", "args", "env")}
    try:
        return mcp_from_entry(name, rest, ctx)
    except BadEntry as exc:
        ctx.drop("MCP server", name, f"{where}: {exc}")
        return None


# --- hooks -------------------------------------------------------------------------------------


class GptmeHooks(Engine):
    """Hooks as ``[[hooks.scripts]]`` (session start and end) and a generated plugin (the rest)."""

    name = "gptme-hooks"
    kinds: frozenset[Kind] = frozenset({"hooks"})

    def render(self, ctx: Context, items: Sequence[Hook]) -> list[Output]:
        events: dict[str, str] = getattr(ctx.capability, "events", {})
        scripts: list[dict[str, Any]] = []
        plugged: list[Hook] = []
        for hook in items:
            if events.get(hook.moment) in SCRIPT_EVENTS:
                entry = _script(ctx, hook)
                if entry is not None:
                    scripts.append(entry)
            else:
                plugged.append(hook)
        groups = hook_groups(ctx, plugged, entry=_plugin_entry)
        data: dict[str, Any] = {HOOKS: {SCRIPTS: scripts}} if scripts else {}
        outputs: list[Output] = []
        if groups:
            where, named = _plugin_place(ctx)
            plugins: dict[str, Any] = {"paths": [named]}
            if _others_enabled(ctx):  # a non-empty allowlist: the plugin must be on it to load
                plugins["enabled"] = [PACKAGE]
            data[PLUGINS] = plugins
            outputs += [
                Output(where / "__init__.py", INIT),
                Output(where / "hooks" / MODULE, plugin_source(groups)),
            ]
        if data:
            outputs.insert(0, Output(ctx.path, data=data, format="toml", merge=True))
        return outputs

    def parse(self, ctx: Context) -> list[Hook]:
        data = read_toml(ctx.path)
        entries = _list(ctx, data, HOOKS, SCRIPTS, "hook")
        events: dict[str, str] = getattr(ctx.capability, "events", {})
        moments = {e: m for m, e in events.items() if e in SCRIPT_EVENTS}
        found = _plugin_hooks(ctx, data)
        unnamed: list[Hook] = []
        for n, entry in enumerate(entries, start=1):
            hook = _hook(ctx, moments, n, entry)
            if hook is None:
                continue
            (found if HOOK_MARK in str(entry.get("command", "")) else unnamed).append(hook)
        return named_apart(found, unnamed)


def _plugin_entry(ctx: Context, hook: Hook) -> tuple[str, dict[str, Any]] | None:
    """One hook's group in the plugin's manifest (its timeout kept: the plugin enforces it)."""
    found = hook_entry(ctx, hook)
    if found is not None and hook.timeout is not None:
        found[1]["hooks"][0]["timeout"] = hook.timeout
    return found


def _plugin_place(ctx: Context) -> tuple[Path, str]:
    """Where the plugin is written, and how the config beside it names it to gptme.

    The user's config.toml is always ``~/.config/gptme/config.toml`` and gptme expands ``~`` in
    its plugin paths; a project's relative paths are read from the workspace (gptme.toml's dir).
    """
    if ctx.path.name == USER_CONFIG:
        return ctx.path.parent / "plugins" / PACKAGE, f"~/.config/gptme/plugins/{PACKAGE}"
    return ctx.path.parent / PROJECT_PLUGINS / PACKAGE, f"{PROJECT_PLUGINS}/{PACKAGE}"


def _others_enabled(ctx: Context) -> bool:
    """Whether the config already holds a plugin allowlist naming other plugins (empty = all)."""
    try:
        section = read_toml(ctx.path).get(PLUGINS)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False  # the merge reads it again, and names what is wrong with it
    enabled = section.get("enabled") if isinstance(section, dict) else None
    return isinstance(enabled, list) and any(e != PACKAGE for e in enabled)


def _plugin_hooks(ctx: Context, data: dict[str, Any]) -> list[Hook]:
    """The hooks of the generated plugin the config names; every other plugin dropped by name."""
    paths = _list(ctx, data, PLUGINS, "paths", "hook")
    enabled = data.get(PLUGINS, {}).get("enabled", []) if isinstance(data.get(PLUGINS), dict) else []
    where, named = _plugin_place(ctx)
    hooks: list[Hook] = []
    for path in paths:
        if path != named:
            ctx.drop(
                "plugin",
                str(path)[:200],
                f"{ctx.path}: a gptme plugin is Python code; tackroom reads only its own ({named})",
            )
            continue
        module = where / "hooks" / MODULE
        if refused(ctx, "hook", module):  # a link out of the tree, a FIFO: never opened
            continue
        events = None
        if module.is_file():
            events = read_manifest(module.read_text(encoding="utf-8", errors="replace"))
        if events is None:
            ctx.drop("plugin", named, f"{module}: not the plugin tackroom generates")
            continue
        if isinstance(enabled, list) and enabled and PACKAGE not in enabled:
            ctx.drop("plugin", named, f"{ctx.path}: [plugins] enabled leaves it out, so gptme loads none")
            continue
        hooks += _manifest_hooks(ctx, events)
    return hooks


def _manifest_hooks(ctx: Context, events: dict[str, Any]) -> list[Hook]:
    hooks = []
    for event, hook, handler in manifest_hooks(ctx, events):
        if event in SCRIPT_EVENTS:
            continue
        timeout = handler.get("timeout")
        if isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0:
            hook = replace(hook, timeout=float(timeout))
        hooks.append(hook)
    return hooks


def _script(ctx: Context, hook: Hook) -> dict[str, Any] | None:
    """One ``[[hooks.scripts]]`` table, or None after dropping the hook by name."""
    event = getattr(ctx.capability, "events", {}).get(hook.moment)
    if event is None:
        ctx.drop("hook", hook.name, f"{hook.moment} unsupported")
        return None
    command = hook_command(ctx, hook, event)
    if command is None:
        return None
    entry: dict[str, Any] = {"event": event, "command": command}
    if hook.timeout is not None:
        if float(hook.timeout).is_integer() and 0 < hook.timeout <= MAX_TIMEOUT:
            entry["timeout"] = int(hook.timeout)
        else:
            ctx.drop(
                "hook", hook.name, f"gptme's hook timeout is whole seconds, 1 to {MAX_TIMEOUT}", "timeout"
            )
    return entry


def _hook(ctx: Context, moments: dict[str, str], n: int, entry: Any) -> Hook | None:
    """The hook one ``[[hooks.scripts]]`` table holds (None, dropped by name, when gptme runs none)."""
    where = f"{ctx.path}: hooks.scripts[{n}]"
    label = f"hooks.scripts[{n}]"
    if not isinstance(entry, dict):
        ctx.drop("hook", label, f"{where} is not a table (gptme refuses the file)")
        return None
    event, command = entry.get("event"), entry.get("command")
    moment = moments.get(event) if isinstance(event, str) else None
    if moment is None:
        ctx.drop(
            "hook", label, f"{where}: event {str(event)[:40]!r} is none gptme runs (it refuses the file)"
        )
        return None
    if not isinstance(command, str) or not command.strip():
        ctx.drop("hook", label, f"{where}: no command (gptme refuses the file)")
        return None
    unknown = sorted(set(entry) - SCRIPT_KEYS)
    if unknown:
        shown = ", ".join(repr(k)[:60] for k in unknown[:4])
        ctx.drop("hook", label, f"{where}: keys gptme does not know ({shown})")
        return None
    timeout = entry.get("timeout")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int) or not 0 < timeout <= MAX_TIMEOUT
    ):
        ctx.drop(
            "hook",
            label,
            f"{where}: timeout is not whole seconds from 1 to {MAX_TIMEOUT} (gptme refuses the file)",
        )
        return None
    body, mark, name = command.rpartition(" " + HOOK_MARK)
    if not mark:
        body, name = command, f"{moment}-{n}"
    hook = Hook(
        name, moment, "command", command=body, timeout=float(timeout) if timeout is not None else None
    )
    if entry.get("priority", 0) != 0:
        ctx.drop("hook", name, f"{where}: priority orders gptme's hooks and has no neutral form", "priority")
    return hook


ENGINES: list[Engine] = [GptmeMcp(), GptmeHooks()]
