"""What every renderer engine is: render items to outputs, and parse the native files back.

Engines are generic code selected by adapter data (``render = "concat"``); the
adapter supplies paths, tool names, event names and templates. ``parse`` is the
exact inverse of ``render`` on what ``render`` kept: a property test holds
every engine to ``parse(render(items)) == items``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from tackroom.adapters.adapter import Adapter
    from tackroom.adapters.spec import Capability

Kind = Literal[
    "rules",
    "skills",
    "mcp",
    "commands",
    "subagents",
    "hooks",
    "scoped_rules",
    "permissions",
    "env",
    "settings",
]


@dataclass(frozen=True)
class Output:
    """One file an engine produces.

    ``text``/``data`` is the whole file (tackroom owns it), or with ``merge``
    the keys to merge into a file the harness shares with other settings.
    """

    path: Path
    text: str | bytes | None = None
    data: Mapping[str, Any] | None = None
    format: Literal["text", "json", "toml"] = "text"
    merge: bool = False
    base: bytes | None = None
    """With ``merge``: the native file as it was imported, merged into when the file does not exist yet
    (so a settings file whose entries did not change is written back as it was)."""


@dataclass(frozen=True)
class Drop:
    """A profile item (or one field of it) a harness cannot express, by name and reason.

    On import, a native item that could not be read into the profile, with why.
    """

    harness: str
    kind: str
    name: str
    reason: str
    field: str | None = None
    """Set when only this field of the item was left out (the item itself was rendered)."""

    def __str__(self) -> str:
        if self.field is not None:
            return f"{self.harness}: dropped {self.field} of {self.kind} {self.name!r} ({self.reason})"
        return f"{self.harness}: dropped {self.kind} {self.name!r} ({self.reason})"


@dataclass(frozen=True)
class Passthrough:
    """On import: a native item with no neutral form, kept under ``native/<harness>/``."""

    harness: str
    kind: str
    name: str


@dataclass(frozen=True)
class Context:
    """What an engine knows while it renders one capability of one adapter."""

    adapter: Adapter
    kind: Kind
    capability: Capability
    path: Path
    """The capability's target path, resolved for this render."""
    drops: list[Drop] = field(default_factory=list)
    passed: list[Passthrough] = field(default_factory=list)
    """Import: what went to native passthrough."""
    native_settings: dict[str, Any] = field(default_factory=dict)
    """Import: settings keys kept for ``native/<harness>/settings.json``."""
    native_files: dict[str, bytes] = field(default_factory=dict)
    """Import: files kept for ``native/<harness>/files/`` (relative to the settings directory)."""
    root: Path | None = None
    """Import: the tree being imported; a link out of it is never followed (:mod:`.tree`)."""
    refused: set[Path] = field(default_factory=set)
    """Import: entries already dropped for being a link out, a loop or a special file."""
    origins: dict[str, Path] = field(default_factory=dict)
    """Import: the file each kept settings key was read from (a second file's same key is dropped)."""
    came_from: list[tuple[Any, Path]] = field(default_factory=list)
    """Import: (item, the file it was read from) for items of a directory (a file's items come from it)."""
    scope: Literal["home", "project"] = "home"
    """Render: whether ``path`` is the harness's home place or a project's."""

    def drop(self, kind: str, name: str, reason: str, field: str | None = None) -> None:
        self.drops.append(Drop(self.adapter.harness, kind, name, reason, field))

    def read_from(self, item: Any, *paths: Path) -> Any:
        """Import: note the files ``item`` was read from (for writing them back as they were); ``item``."""
        self.came_from.extend((item, path) for path in paths)
        return item

    def keep_setting(self, kind: str, key: str, value: Any) -> None:
        """Import: keep a settings key tackroom has no word for, to be written back as it was.

        One already kept from another file (opencode's ``opencode.json`` and ``.opencode/opencode.json``)
        is not merged: the first is kept, and this one, when it differs, dropped by name. A value the
        profile's ``settings.json`` cannot hold (a TOML date or time, NaN) is dropped by name.
        """
        import json

        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError, RecursionError):
            self.drop(
                kind, key, f"{self.path}: {key}: holds what JSON cannot (a TOML date), so it cannot be kept"
            )
            return
        first = self.origins.setdefault(key, self.path)
        if first != self.path:
            if self.native_settings.get(key) != value:  # the same value twice loses nothing
                self.drop(kind, key, f"{self.path}: {key} is also set in {first}: kept that one")
            return
        self.native_settings[key] = value
        self.passed.append(Passthrough(self.adapter.harness, kind, key))

    def keep_file(self, kind: str, rel: str, content: bytes) -> None:
        """Import: keep a file tackroom has no word for (``rel`` under the settings directory)."""
        self.native_files[rel] = content
        self.passed.append(Passthrough(self.adapter.harness, kind, rel))

    def model(self, ref: str | None, kind: str, name: str) -> str | None:
        """This harness's model for a model reference, or None (after dropping the field by name)."""
        from tackroom.profile.tools import BadReference, parse_model

        if ref is None:
            return None
        try:
            parsed = parse_model(ref)
        except BadReference as exc:
            self.drop(kind, name, str(exc), "model")
            return None
        if parsed.harness is not None:
            if parsed.harness == self.adapter.harness:
                return parsed.model
            self.drop(kind, name, f"model {ref!r} is {parsed.harness}'s own", "model")
            return None
        native = self.adapter.spec.models.get(parsed.alias or "")
        if native is None:
            self.drop(kind, name, f"no model for {ref!r} here (the adapter's [models] table)", "model")
        return native

    def neutral_model(self, native: str | None) -> str | None:
        """Import: the model reference for this harness's model name (an alias when the adapter maps it)."""
        if native is None or not str(native).strip():
            return None
        alias = next((a for a, m in sorted(self.adapter.spec.models.items()) if m == native), None)
        return alias or f"{self.adapter.harness}:{native}"

    def tool_name(self, neutral: str) -> str | None:
        """This harness's name for a neutral tool, or None when it has none."""
        from tackroom.adapters.spec import ToolSpec

        entry = getattr(self.adapter.spec.tools, neutral, None)
        if entry is None:
            return None
        return entry.name if isinstance(entry, ToolSpec) else str(entry)

    def hook_tool_name(self, neutral: str) -> str | None:
        """The name this harness's hooks see for a neutral tool (it may differ from the model's)."""
        names: dict[str, str] = getattr(self.capability, "tool_names", {})
        return names.get(neutral) or self.tool_name(neutral)

    def hook_neutral_tool(self, name: str) -> str | None:
        names: dict[str, str] = getattr(self.capability, "tool_names", {})
        return next((n for n, v in names.items() if v == name), None) or self.neutral_tool(name)

    def neutral_tool(self, name: str) -> str | None:
        """The neutral name of one of this harness's tools (the reverse of :meth:`tool_name`)."""
        from tackroom.vocabulary import NEUTRAL_TOOLS

        return next((n for n in NEUTRAL_TOOLS if self.tool_name(n) == name), None)

    def tool_ref(self, name: str) -> str:
        """Import: the tool reference for one of this harness's tool names; never a guess.

        A name the adapter maps is its neutral tool; an MCP tool name (by the
        adapter's ``mcp`` pattern) is ``mcp("server/tool")``; anything else stays
        this harness's own (``claude-code:NotebookEdit``), as does every name where the
        pattern has no ``{server}`` (a bare MCP tool name says no server to read back).
        """
        neutral = self.neutral_tool(name)
        if neutral is not None:
            return neutral
        pattern = self.adapter.spec.tools.mcp
        if pattern and "{server}" in pattern and "{tool}" in pattern:
            head, _, rest = pattern.partition("{server}")
            middle, _, tail = rest.partition("{tool}")
            if name.startswith(head) and name.endswith(tail) and middle and middle in name[len(head) :]:
                inner = name[len(head) : len(name) - len(tail) if tail else None]
                server, _, tool = inner.partition(middle)
                if server and tool and "/" not in server:
                    return f'mcp("{server}/{tool}")'
            if head and name.startswith(head) and not tail and middle not in name[len(head) :]:
                server = name[len(head) :]
                if server and all(c.isalnum() or c in "_.-@" for c in server):
                    return f'mcp("{server}")'
        return f"{self.adapter.harness}:{name}"

    def bare_mcp(self, ref: str) -> str:
        """What a drop's reason adds for an MCP reference where this harness names MCP tools
        without their server (why it has no name here); ``""`` for any other reference or adapter."""
        pattern = self.adapter.spec.tools.mcp
        if not pattern or "{server}" in pattern or not ref.startswith("mcp("):
            return ""
        return (
            f" ({self.adapter.harness} names an MCP tool without its server, so it cannot say which server's)"
        )

    def native_tool(self, ref: str) -> str | None:
        """This harness's name for a tool reference without a pattern (None: it has none).

        A harness's own reference is its name only for that harness; ``mcp("s/t")``
        uses the adapter's ``mcp`` pattern. Patterns are the family engine's to spell.
        A pattern without ``{server}`` (a harness that offers an MCP tool under its bare name)
        names none: import could not tell ``t`` back to its server, so the reference is refused
        (and dropped by name by the caller) rather than written as a name that does not round-trip.
        """
        from tackroom.profile.tools import BadReference, parse_tool

        try:
            parsed = parse_tool(ref)
        except BadReference:
            return None
        if parsed.harness is not None:
            return parsed.tool if parsed.harness == self.adapter.harness else None
        if parsed.tool == "mcp":
            pattern = self.adapter.spec.tools.mcp
            if not pattern or parsed.mcp_tool is None or "{server}" not in pattern:
                return None
            return pattern.replace("{server}", parsed.server or "").replace("{tool}", parsed.mcp_tool)
        if parsed.pattern is not None:
            return None
        return self.tool_name(parsed.tool)


class Engine:
    """Renders profile items of the kinds it serves, and parses them back.

    An engine declares what it serves: the capability kinds (``kinds``) and
    the item formats an adapter may ask of it (``formats``; empty = the
    engine takes no ``format``). Loading an adapter checks every capability
    against the engine it names, so a renderer on the wrong capability is a
    load error, never a crash half-way through a render.
    """

    name: str = ""
    kinds: frozenset[Kind] = frozenset()
    """The capability kinds this engine renders."""
    formats: frozenset[str] = frozenset()
    """The values of a capability's ``format`` this engine understands; empty = none may be set."""
    sources: bool = False
    """Hooks: whether it writes a hook's ``source`` (the session starts it is for); without it, such a
    hook is dropped by name before the engine sees it (it would run on every start)."""
    tool_events: bool = False
    """Hooks: whether it hooks tools through events of their own (Cursor's ``beforeShellExecution``),
    so tool moments are hooked even where the adapter's ``[tools]`` names no tool."""

    def render(self, ctx: Context, items: Sequence[Any]) -> list[Output]:
        raise NotImplementedError

    def parse(self, ctx: Context) -> list[Any]:
        """The items the native files at ``ctx.path`` hold (empty when there are none)."""
        raise NotImplementedError
