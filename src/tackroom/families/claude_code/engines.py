"""Claude Code's settings file: hooks, permissions, the session env and native passthrough.

Engines:

- ``claude-settings``: hooks in Claude Code's settings shape, event -> groups
  ``{matcher, hooks: [{type, command, timeout}]}``. The same shape serves
  Codex's ``hooks.json`` and Qwen Code's settings, whose adapters name this
  engine too. Import reads every hook the user wrote, not only tackroom's
  (marked ``# tackroom:hook <name>``): a handler the neutral profile cannot
  say (an event with no moment here, a ``prompt`` handler, a matcher on a
  non-tool event) is dropped by name with the reason.
- ``claude-permissions``: ``permissions.{allow, ask, deny}`` rules
  (``Bash(git push:*)``, ``Read(./src/**)``, ``WebFetch(domain:x)``,
  ``mcp__server__tool``) as tool references; the other ``permissions`` keys
  (``defaultMode``, ``additionalDirectories``) are native passthrough.
- ``claude-env``: the ``env`` object of the settings file.
- ``claude-native``: every other top-level settings key, and the files under
  the settings directory tackroom has no word for (``output-styles/``), kept
  as the harness wrote them and merged back into the same places.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import Any, ClassVar

from tackroom.profile.engines import tree
from tackroom.profile.engines.base import Context, Engine, Kind, Output
from tackroom.profile.engines.settings import HOOK_MARK, hook_command, hook_groups, parse_hook, read_json
from tackroom.profile.model import Hook, Native, Permissions
from tackroom.profile.tools import BadReference, parse_tool
from tackroom.redact import inline_secret, is_secret_name
from tackroom.vocabulary import SESSION_SOURCES

TOOL_MOMENTS = ("before-tool", "after-tool", "after-tool-failure", "permission-request")
"""Moments whose matcher selects tools (elsewhere a matcher selects a source, an agent type...)."""
_PLAIN = re.compile(r"^[A-Za-z0-9_]+$")
_ANCHORED_WORDS = re.compile(r"\^\(\?:([\w|]*)\)\$|\^([\w|]*)\$")
_MCP_ALL = re.compile(r"^mcp__([A-Za-z0-9_.@-]+?)__\.?\*$")
_ENV_REF = re.compile(r"\$\{[^}]*\}")


# --- hooks -------------------------------------------------------------------------------------


class ClaudeSettings(Engine):
    """Hooks in Claude Code's settings shape (also Codex's hooks.json and Qwen's settings)."""

    name = "claude-settings"
    kinds: frozenset[Kind] = frozenset({"hooks"})
    sources = True

    def render(self, ctx: Context, items: Sequence[Hook]) -> list[Output]:
        events = hook_groups(ctx, items, entry=hook_entry)
        return [Output(ctx.path, data={"hooks": events}, format="json", merge=True)] if events else []

    def parse(self, ctx: Context) -> list[Hook]:
        return parse_hooks(ctx, read_json(ctx.path).get("hooks"))


def hook_entry(ctx: Context, hook: Hook) -> tuple[str, dict[str, Any]] | None:
    """(event name, the settings group) for one hook, or None after dropping it by name."""
    events: dict[str, str] = getattr(ctx.capability, "events", {})
    event = events.get(hook.moment)
    if event is None:
        ctx.drop("hook", hook.name, f"{hook.moment} unsupported")
        return None
    if hook.matcher and hook.moment not in TOOL_MOMENTS:
        ctx.drop("hook", hook.name, f"a tool matcher at {hook.moment}, which is not a tool moment")
        return None
    matcher = matcher_text(ctx, hook) if hook.moment in TOOL_MOMENTS else None
    if hook.moment in TOOL_MOMENTS and matcher is None:
        return None
    if hook.source:
        matcher = source_matcher(ctx, hook)
        if matcher is None:
            return None
    command = hook_command(ctx, hook, event)
    if command is None:
        return None
    handler: dict[str, Any] = {"type": "command", "command": command}
    if hook.timeout is not None:
        handler["timeout"] = int(hook.timeout) if float(hook.timeout).is_integer() else hook.timeout
    group: dict[str, Any] = {"hooks": [handler]}
    return event, ({"matcher": matcher, **group} if matcher is not None else group)


def matcher_text(ctx: Context, hook: Hook) -> str | None:
    """The matcher regex for a hook's tool references (``*`` for every tool), or None after a drop."""
    names: list[str] = []
    for ref in hook.matcher:
        name = _matcher_name(ctx, ref)
        if name is None:
            ctx.drop("hook", hook.name, f"no tool {ref} in hook matchers here{ctx.bare_mcp(ref)}")
            return None
        names.append(name)
    return "|".join(names) if names else "*"


def source_matcher(ctx: Context, hook: Hook) -> str | None:
    """The session-start matcher for the starts a hook is for, or None after dropping it by name."""
    sources: dict[str, str] = getattr(ctx.capability, "sources", {})
    missing = [s for s in hook.source if s not in sources]
    if missing:
        ctx.drop(
            "hook",
            hook.name,
            f"cannot run it only on {', '.join(missing)} here (it would run on every start)",
        )
        return None
    return "|".join(sources[s] for s in hook.source)


def _sources(ctx: Context, matcher: str) -> tuple[str, ...] | None:
    """The starts a session-start matcher selects (empty: every one); None when it selects others.

    An anchored alternation (``^(?:startup|resume)$``, as codex's docs write it) is its words; a
    neutral start this harness never reports (codex has no ``compact``) selects nothing here.
    """
    matcher = matcher.strip()
    anchored = _ANCHORED_WORDS.fullmatch(matcher)
    words = (anchored.group(1) or anchored.group(2)) if anchored else matcher
    if words in ("", "*"):
        return ()
    sources: dict[str, str] = getattr(ctx.capability, "sources", {})
    spelled = {v: k for k, v in sources.items()}
    parts = words.split("|")
    if len(set(parts)) != len(parts):
        return None
    found = [spelled.get(part) for part in parts if not (part in SESSION_SOURCES and part not in sources)]
    if None in found:
        return None
    return () if set(found) == set(sources) else tuple(str(s) for s in found)


def _matcher_name(ctx: Context, ref: str) -> str | None:
    try:
        parsed = parse_tool(ref)
    except BadReference:
        return None
    if parsed.harness is not None:
        return parsed.tool if parsed.harness == ctx.adapter.harness else None
    if parsed.tool == "mcp":
        pattern = ctx.adapter.spec.tools.mcp
        if parsed.mcp_tool is None and pattern and "{server}" in pattern and pattern.endswith("{tool}"):
            return pattern.replace("{server}", parsed.server or "").replace("{tool}", ".*")
        return ctx.native_tool(ref)
    return ctx.hook_tool_name(parsed.tool) if parsed.pattern is None else None


def matcher_refs(ctx: Context, matcher: str) -> tuple[str, ...]:
    """The tool references a tool matcher names: neutral where the adapter maps a name, else the
    harness's own (a regex stays whole: ``claude-code:Notebook.*``)."""
    if matcher.strip() in ("", "*"):
        return ()
    parts = matcher.split("|")
    if not all(_PLAIN.match(p) or _MCP_ALL.match(p) for p in parts):
        return (f"{ctx.adapter.harness}:{matcher}",)
    refs = []
    for part in parts:
        every = _MCP_ALL.match(part)
        if every is not None:
            refs.append(f'mcp("{every.group(1)}")')
        else:
            refs.append(ctx.hook_neutral_tool(part) or ctx.tool_ref(part))
    return tuple(refs)


def parse_hooks(ctx: Context, table: Any) -> list[Hook]:
    """Every hook a settings ``hooks`` object holds; what has no neutral form is dropped by name."""
    if table is None:
        return []
    if not isinstance(table, dict):
        ctx.drop("hook", "hooks", f"{ctx.path}: 'hooks' is not an object of events")
        return []
    events: dict[str, str] = getattr(ctx.capability, "events", {})
    moments = {e: m for m, e in events.items()}
    found: list[Hook] = []
    unnamed: list[tuple[str, Hook]] = []
    for event, groups in table.items():
        base = _kebab(str(event))
        for n, (group, handler) in enumerate(_handlers(groups), start=1):
            label = f"{base}-{n}"
            hook = _hook(ctx, str(event), moments.get(str(event)), group, handler, label)
            if hook is None:
                continue
            if hook.name == label and HOOK_MARK not in str(handler.get("command", "")):
                unnamed.append((label, hook))
            else:
                found.append(hook)
    taken = {h.name for h in found}
    for label, hook in unnamed:
        name, k = label, 1
        while name in taken:
            k += 1
            name = f"{label}-{k}"
        taken.add(name)
        found.append(
            Hook(
                name,
                hook.moment,
                hook.action,
                hook.command,
                hook.text,
                hook.matcher,
                (),
                hook.timeout,
                hook.source,
            )
        )
    return sorted(found, key=lambda h: h.name)


class _Shapeless(str):
    """A group that holds no handler list: why the harness runs nothing of it (dropped by name)."""


def _handlers(groups: Any) -> list[tuple[dict[str, Any], Any]]:
    """(group, handler) pairs, tolerating a single group or handler list written as an object.

    A group without a ``hooks`` list (a handler written where a group belongs, or one object in
    place of the event's list of groups) yields a :class:`_Shapeless` in place of its handler, so
    it is dropped by name rather than lost unsaid.
    """
    alone = isinstance(groups, dict)
    if alone:
        groups = [groups]
    pairs: list[tuple[dict[str, Any], Any]] = []
    for group in groups if isinstance(groups, list) else [groups]:
        if not isinstance(group, dict):
            pairs.append(({}, group))
            continue
        if "hooks" not in group:
            where = "one object in place of the list" if alone else "an entry of the list"
            pairs.append(
                ({}, _Shapeless(f"{where} has no 'hooks' list: a group is {{matcher, hooks: [...]}}"))
            )
            continue
        handlers = group.get("hooks", [])
        if isinstance(handlers, dict):
            handlers = [handlers]
        if not isinstance(handlers, list):
            handlers = [handlers]
        pairs += [(group, h) for h in handlers]
    return pairs


def _hook(
    ctx: Context, event: str, moment: str | None, group: dict[str, Any], handler: Any, label: str
) -> Hook | None:
    where = f"{event} in {ctx.path}"
    if isinstance(handler, _Shapeless):
        harness = ctx.adapter.harness
        ctx.drop(
            "hook", label, f"{where}: {handler}; {harness} does not run it (fix its shape there to import it)"
        )
        return None
    if not isinstance(handler, dict):
        ctx.drop("hook", label, f"{where}: a hook handler is an object with type and command")
        return None
    kind = handler.get("type", "command")
    command = handler.get("command")
    marked = isinstance(command, str) and HOOK_MARK in command
    name = command.rpartition(HOOK_MARK)[2] if marked and isinstance(command, str) else label
    if moment is None:
        ctx.drop("hook", name, f"{where}: event {event} has no neutral moment here")
        return None
    if kind != "command":
        ctx.drop("hook", name, f"{where}: a {kind!r} handler has no neutral form (only shell commands)")
        return None
    if not isinstance(command, str) or not command.strip():
        ctx.drop("hook", name, f"{where}: a command handler without a command")
        return None
    matcher = group.get("matcher")
    if matcher is not None and not isinstance(matcher, str):
        ctx.drop("hook", name, f"{where}: the matcher is not a string")
        return None
    refs: tuple[str, ...] = ()
    source: tuple[str, ...] = ()
    if matcher and moment == "session-start":
        starts = _sources(ctx, matcher)
        if starts is None:
            known = ", ".join(getattr(ctx.capability, "sources", {}).values()) or "none"
            ctx.drop(
                "hook", name, f"{where}: matcher {matcher!r} selects starts no neutral hook names ({known})"
            )
            return None
        source = starts
    elif matcher and matcher.strip() not in ("", "*"):
        if moment not in TOOL_MOMENTS:
            ctx.drop("hook", name, f"{where}: matcher {matcher!r} selects what no neutral hook can")
            return None
        refs = matcher_refs(ctx, matcher)
    timeout = handler.get("timeout")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout < 0
    ):
        ctx.drop("hook", name, f"{where}: timeout {timeout!r} is not a number of seconds", "timeout")
        timeout = None
    seconds = float(timeout) if timeout is not None else None
    if marked:
        ours = parse_hook(ctx, event, None, command)
        if ours is not None:
            return Hook(ours.name, moment, ours.action, ours.command, ours.text, refs, (), seconds, source)
    return Hook(name, moment, "command", command=command, matcher=refs, timeout=seconds, source=source)


def _kebab(event: str) -> str:
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", event).lower()
    cleaned = re.sub(r"[^a-z0-9]+", "-", words).strip("-")
    return cleaned or "hook"


# --- permissions -------------------------------------------------------------------------------

_RULE = re.compile(r"^([A-Za-z][A-Za-z0-9_]*)(?:\((.*)\))?$", re.DOTALL)
_FILE_TOOLS = ("read_file", "write_file", "edit_file")
_PATTERN_TOOLS = ("shell", "web_fetch", *_FILE_TOOLS)
VERDICTS = ("allow", "ask", "deny")


class ClaudePermissions(Engine):
    """``permissions.{allow, ask, deny}`` of Claude Code's settings."""

    name = "claude-permissions"
    kinds: frozenset[Kind] = frozenset({"permissions"})

    def render(self, ctx: Context, items: Sequence[Permissions]) -> list[Output]:
        table: dict[str, list[str]] = {}
        for permissions in items:
            for verdict in VERDICTS:
                for ref in getattr(permissions, verdict):
                    rule = self.rule(ctx, ref)
                    if rule is None:
                        why = f"no spelling of {ref} in this harness's permission rules"
                        if verdict == "deny":
                            why += "; this deny is not enforced here"
                        ctx.drop("permission rule", f"{verdict} {ref}", why)
                    elif rule not in table.setdefault(verdict, []):
                        table[verdict].append(rule)
        table = {k: v for k, v in table.items() if v}
        return [Output(ctx.path, data={"permissions": table}, format="json", merge=True)] if table else []

    def rule(self, ctx: Context, ref: str) -> str | None:
        """The native rule for a tool reference (None: it has none)."""
        return claude_rule(ctx, ref)

    def ref(self, ctx: Context, rule: str) -> str:
        """The tool reference for a native rule."""
        return rule_ref(ctx, rule)

    def parse(self, ctx: Context) -> list[Permissions]:
        data = read_json(ctx.path).get("permissions")
        if data is None:
            return []
        if not isinstance(data, dict):
            ctx.drop("permission rule", "permissions", f"{ctx.path}: 'permissions' is not an object")
            return []
        found: dict[str, list[str]] = {}
        for verdict in VERDICTS:
            rules = data.get(verdict, [])
            for rule in rules if isinstance(rules, list) else [rules]:
                if not isinstance(rule, str) or not rule.strip():
                    ctx.drop("permission rule", f"{verdict} {rule!r}", f"{ctx.path}: a rule is a string")
                    continue
                ref = self.ref(ctx, rule)
                if ref not in found.setdefault(verdict, []):
                    found[verdict].append(ref)
        rest = {k: v for k, v in data.items() if k not in VERDICTS}
        if rest:
            ctx.keep_setting("native setting", "permissions", rest)
        permissions = Permissions(*(tuple(found.get(v, ())) for v in VERDICTS))
        return [permissions] if permissions else []


def rule_ref(ctx: Context, rule: str) -> str:
    """The tool reference for one Claude permission rule; an unknown one stays Claude's own."""
    text = rule.strip()
    own = f"{ctx.adapter.harness}:{text}"
    found = _RULE.match(text)
    if found is None:
        return own
    name, pattern = found.groups()
    if name.startswith("mcp__"):
        if pattern is not None:
            return own
        every = _MCP_ALL.match(name)
        ref = f'mcp("{every.group(1)}")' if every else ctx.tool_ref(name)
        return ref if _parses(ref) else own
    neutral = ctx.neutral_tool(name)
    if neutral is None:
        return own
    if pattern is None:
        return neutral
    if neutral not in _PATTERN_TOOLS or not pattern.strip():
        return own
    if neutral in _FILE_TOOLS:
        glob = _neutral_glob(pattern)
        if glob is None:
            return own
        pattern = glob
    ref = f"{neutral}({_quote(pattern)})"
    return ref if _parses(ref) else own


def claude_rule(ctx: Context, ref: str) -> str | None:
    """The Claude permission rule for a tool reference (None: it has none)."""
    try:
        parsed = parse_tool(ref)
    except BadReference:
        return None
    if parsed.harness is not None:
        return parsed.tool if parsed.harness == ctx.adapter.harness else None
    if parsed.tool == "mcp":
        return f"mcp__{parsed.server}" if parsed.mcp_tool is None else ctx.native_tool(ref)
    name = ctx.tool_name(parsed.tool)
    if name is None or parsed.pattern is None:
        return name
    if parsed.tool not in _PATTERN_TOOLS:
        return None
    pattern = parsed.pattern
    if parsed.tool in _FILE_TOOLS:
        if pattern.startswith(("/", "~")) or ".." in PurePosixPath(pattern).parts:
            return None
        pattern = "./" + pattern
    return f"{name}({pattern})"


def _neutral_glob(pattern: str) -> str | None:
    """A Claude (gitignore-style) path pattern as a glob relative to the project, or None.

    ``./x`` and ``a/b`` are relative to the working directory; a pattern with no
    slash matches at any depth (``*.env`` is ``**/*.env``); ``/x`` (relative to
    the settings file), ``//x`` and ``~/x`` have no neutral form.
    """
    if pattern.startswith(("/", "~")):
        return None
    if pattern.startswith("./"):
        return pattern[2:] or None
    return pattern if "/" in pattern.rstrip("/") else f"**/{pattern}"


def _quote(pattern: str) -> str:
    import json

    return json.dumps(pattern, ensure_ascii=False)


def _parses(ref: str) -> bool:
    try:
        parse_tool(ref)
    except BadReference:
        return False
    return True


# --- env ---------------------------------------------------------------------------------------


class ClaudeEnv(Engine):
    """The ``env`` object of Claude Code's settings: set for the session and everything it starts."""

    name = "claude-env"
    kinds: frozenset[Kind] = frozenset({"env"})

    def render(self, ctx: Context, items: Sequence[tuple[str, str]]) -> list[Output]:
        env: dict[str, str] = {}
        for key, value in items:
            if _ENV_REF.search(value):
                ctx.drop("env variable", key, "settings env values are set literally (no ${VAR} expansion)")
            else:
                env[key] = value
        return [Output(ctx.path, data={"env": env}, format="json", merge=True)] if env else []

    def parse(self, ctx: Context) -> list[tuple[str, str]]:
        data = read_json(ctx.path).get("env")
        if data is None:
            return []
        if not isinstance(data, dict):
            ctx.drop("env variable", "env", f"{ctx.path}: 'env' is not an object")
            return []
        found = []
        for key, value in sorted(data.items()):
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key) or not isinstance(value, str):
                ctx.drop("env variable", str(key), f'{ctx.path}: each entry is NAME: "value" (a string)')
            elif _ENV_REF.search(value):
                # Claude sets it literally: the value is the text "${VAR}", which a profile's env
                # would read as a reference to the user's variable. Not the same; said, not guessed.
                ctx.drop(
                    "env variable",
                    key,
                    f"{ctx.path}: claude sets {value[:80]!r} literally, and a profile's ${{VAR}} is a "
                    "reference: set the value itself in the profile's env.toml",
                )
            elif is_secret_name(key) or inline_secret(value):
                ctx.drop(
                    "env variable",
                    key,
                    f"{ctx.path}: a secret written inline (a profile keeps none; set it in the environment)",
                )
            else:
                found.append((key, value))
        return found


# --- native passthrough ------------------------------------------------------------------------

KEPT_DIRS = ("output-styles", "hooks", "scripts", "statusline")
"""Directories under the settings directory whose files are kept as native passthrough."""
KEPT_SUFFIXES = (".sh", ".py", ".js", ".mjs", ".ts", ".md", ".txt")
"""Top-level files of the settings directory kept too (a status line script, a context note);
never a dot-file, state or a credential: only these kinds of file, and not CLAUDE.md."""


def kept_file(rel: str) -> bool:
    """Whether a file under the settings directory is native passthrough (read and written back)."""
    parts = PurePosixPath(rel).parts
    if not parts or rel.startswith("/") or ".." in parts or any(p.startswith(".") for p in parts):
        return False
    if len(parts) == 1:
        return parts[0].endswith(KEPT_SUFFIXES) and parts[0] != "CLAUDE.md"
    return parts[0] in KEPT_DIRS


class ClaudeNative(Engine):
    """Settings keys and files under the settings directory that no other capability reads."""

    name = "claude-native"
    kinds: frozenset[Kind] = frozenset({"settings"})
    read_by: ClassVar[dict[str, str]] = {"hooks": "hooks", "permissions": "permissions", "env": "env"}
    """Top-level key -> the capability kind that reads it (when the adapter has it at this file)."""

    def render(self, ctx: Context, items: Sequence[Native]) -> list[Output]:
        outputs: list[Output] = []
        for native in items:
            if native.settings:
                outputs.append(Output(ctx.path, data=dict(native.settings), format="json", merge=True))
            for rel, content in native.files:
                if not kept_file(rel):
                    ctx.drop(
                        "native setting",
                        rel,
                        f"only scripts and notes, and files under {', '.join(KEPT_DIRS)}/, are written back",
                    )
                    continue
                outputs.append(Output(ctx.path.parent / rel, text=content))
        return outputs

    def parse(self, ctx: Context) -> list[Native]:
        data = read_json(ctx.path)
        caps = ctx.adapter.spec.capabilities
        for key, value in data.items():
            kind = self.read_by.get(key)
            cap = getattr(caps, kind) if kind is not None else None
            if cap is not None and (cap.path, cap.project) == (ctx.capability.path, ctx.capability.project):
                continue
            ctx.keep_setting("native setting", key, value)
        base = ctx.path.parent
        if not base.is_dir():
            return []
        # Only what is kept is examined: a home's .claude holds much else (projects/, todos/).
        listed = tree.entries(ctx, base, "native file", wanted=lambda n: kept_file(n) or n in KEPT_DIRS)
        tops = [p for p in listed if p.is_file()]
        deep = [p for d in listed if d.is_dir() for p in tree.files_below(ctx, d, "native file")]
        for path in (*tops, *deep):
            rel = path.relative_to(base).as_posix()
            if kept_file(rel) and path != ctx.path:
                ctx.keep_file("native file", rel, path.read_bytes())
        return []


ENGINES: list[Engine] = [ClaudeSettings(), ClaudePermissions(), ClaudeEnv(), ClaudeNative()]
