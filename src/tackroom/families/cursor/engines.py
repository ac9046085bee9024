"""Engines ``cursor-permissions`` and ``cursor-settings``: the Cursor CLI config (``.cursor/cli.json``).

UNVERIFIED (no installable binary): from cursor.com/docs/cli/reference/permissions.
``permissions`` is ``{"allow": [token, ...], "deny": [token, ...]}``, deny
winning over allow, with no ask. The tokens and their neutral references:

- ``Shell(git)``: a command's first word, so ``shell("git:*")`` (a neutral prefix
  of one word); ``Shell(*)`` is every command (``shell``).
- ``Read(src/**)`` is ``read_file("src/**")``; ``Write(src/**)`` covers writing
  and editing, so it is said only for a ``write_file`` rule with its
  ``edit_file`` twin, and reads back as both. ``Read(**)`` / ``Write(**)`` are the bare tools.
- ``WebFetch(docs.example.com)`` is ``web_fetch("domain:docs.example.com")``.
- ``Mcp(server:tool)`` is ``mcp("server/tool")``; ``Mcp(server:*)`` is ``mcp("server")``.

A token of another shape stays native passthrough; a rule cursor cannot say
(any ask, a multi-word shell prefix) is dropped by name. Every other key of
the file (``version``, ``editor``, ``model``, ...) is kept by ``cursor-settings``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from tackroom.profile.engines.base import Context, Engine, Kind, Output
from tackroom.profile.engines.settings import native_outputs, read_json
from tackroom.profile.model import Native, Permissions
from tackroom.profile.tools import BadReference, parse_tool

KEY = "permissions"
VERDICTS = ("allow", "deny")
_TOKEN = re.compile(r"^(Shell|Read|Write|WebFetch|Mcp)\((.+)\)$")
_EVERYTHING = {"Shell": "*", "Read": "**", "Write": "**"}
_EDITS = ("write_file", "edit_file")


def token_for(ctx: Context, verdict: str, ref: str, rules: tuple[str, ...]) -> str | None:
    """Cursor's token for one rule; None after dropping it by name (or for an ``edit_file`` twin)."""
    name = f"{verdict} {ref}"
    try:
        parsed = parse_tool(ref)
    except BadReference as exc:
        ctx.drop("permission rule", name, str(exc))
        return None
    pattern = parsed.pattern
    if parsed.tool == "shell" and parsed.harness is None:
        if pattern is None:
            return "Shell(*)"
        if pattern.endswith(":*") and " " not in pattern[:-2] and pattern[:-2]:
            return f"Shell({pattern[:-2]})"
    elif parsed.tool == "read_file" and parsed.harness is None:
        return f"Read({pattern or '**'})"
    elif parsed.tool in _EDITS and parsed.harness is None:
        other = _EDITS[1 - _EDITS.index(parsed.tool)]
        if ref.replace(parsed.tool, other, 1) not in rules:
            ctx.drop("permission rule", name, f"cursor's Write covers {other} too")
            return None
        return f"Write({pattern or '**'})" if parsed.tool == "write_file" else None
    elif parsed.tool == "web_fetch" and pattern is not None and pattern.startswith("domain:"):
        return f"WebFetch({pattern.removeprefix('domain:')})"
    elif parsed.tool == "mcp" and parsed.server:
        return f"Mcp({parsed.server}:{parsed.mcp_tool or '*'})"
    elif parsed.harness == ctx.adapter.harness:
        return parsed.tool
    ctx.drop("permission rule", name, "no cursor permission token says it")
    return None


def refs_for(token: str) -> list[str] | None:
    """The neutral references a token says; None for one kept native."""
    found = _TOKEN.match(token)
    if found is None:
        return None
    kind, inner = found.groups()
    if kind in _EVERYTHING and inner == _EVERYTHING[kind]:
        return {"Shell": ["shell"], "Read": ["read_file"], "Write": list(_EDITS)}[kind]
    quoted = '"' + inner.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if kind == "Shell":
        return [f'shell("{inner}:*")'] if re.fullmatch(r"[\w.+-]+", inner) else None
    if kind == "Read":
        return [f"read_file({quoted})"]
    if kind == "Write":
        return [f"{tool}({quoted})" for tool in _EDITS]
    if kind == "WebFetch":
        return [f'web_fetch("domain:{inner}")'] if re.fullmatch(r"[\w.*-]+", inner) else None
    server, _, tool = inner.partition(":")
    if not re.fullmatch(r"[\w.@-]+", server) or not re.fullmatch(r"[\w.*-]+", tool or "*"):
        return None
    return [f'mcp("{server}")' if tool in ("", "*") else f'mcp("{server}/{tool}")']


class CursorPermissions(Engine):
    name = "cursor-permissions"
    kinds: frozenset[Kind] = frozenset({"permissions"})

    def render(self, ctx: Context, items: Sequence[Permissions]) -> list[Output]:
        lists: dict[str, list[str]] = {}
        for permissions in items:
            for ref in permissions.ask:
                ctx.drop("permission rule", f"ask {ref}", "cursor has allow and deny, no ask")
            for verdict in VERDICTS:
                rules = getattr(permissions, verdict)
                for ref in rules:
                    token = token_for(ctx, verdict, ref, rules)
                    if token is not None:
                        lists.setdefault(verdict, []).append(token)
        return [Output(ctx.path, data={KEY: lists}, format="json", merge=True)] if lists else []

    def parse(self, ctx: Context) -> list[Permissions]:
        table = read_json(ctx.path).get(KEY)
        if table is None:
            return []
        if not isinstance(table, dict):
            ctx.keep_setting("permission rule", KEY, table)
            return []
        found: dict[str, list[str]] = {v: [] for v in VERDICTS}
        kept: dict[str, Any] = {k: v for k, v in table.items() if k not in VERDICTS}
        for verdict in VERDICTS:
            tokens = table.get(verdict, [])
            if not isinstance(tokens, list):
                kept[verdict] = tokens
                continue
            for token in tokens:
                refs = refs_for(token) if isinstance(token, str) else None
                if refs is None:
                    kept.setdefault(verdict, []).append(token)
                else:
                    found[verdict] += [r for r in refs if r not in found[verdict]]
        if kept:
            ctx.keep_setting("permission rule", KEY, kept)
        permissions = Permissions(allow=tuple(found["allow"]), deny=tuple(found["deny"]))
        return [permissions] if permissions else []


class CursorSettings(Engine):
    """Every key of the CLI config but ``permissions``, kept and merged back as written."""

    name = "cursor-settings"
    kinds: frozenset[Kind] = frozenset({"settings"})

    def render(self, ctx: Context, items: Sequence[Native]) -> list[Output]:
        return native_outputs(ctx, items)

    def parse(self, ctx: Context) -> list[Native]:
        for key, value in read_json(ctx.path).items():
            if key != KEY:
                ctx.keep_setting("native setting", key, value)
        return []


ENGINES: list[Engine] = [CursorPermissions(), CursorSettings()]
