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
    from tackroom.adapters.resolve import Adapter
    from tackroom.adapters.schema import Capability

Kind = Literal["rules", "skills", "mcp", "commands", "subagents", "hooks"]


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


@dataclass(frozen=True)
class Drop:
    """A profile item a harness cannot express, by name and reason."""

    harness: str
    kind: str
    name: str
    reason: str

    def __str__(self) -> str:
        return f"{self.harness}: dropped {self.kind} {self.name!r} ({self.reason})"


@dataclass(frozen=True)
class Context:
    """What an engine knows while it renders one capability of one adapter."""

    adapter: Adapter
    kind: Kind
    capability: Capability
    path: Path
    """The capability's target path, resolved for this render."""
    drops: list[Drop] = field(default_factory=list)

    def drop(self, kind: str, name: str, reason: str) -> None:
        self.drops.append(Drop(self.adapter.harness, kind, name, reason))

    def tool_name(self, neutral: str) -> str | None:
        """This harness's name for a neutral tool, or None when it has none."""
        from tackroom.adapters.schema import ToolSpec

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

    def render(self, ctx: Context, items: Sequence[Any]) -> list[Output]:
        raise NotImplementedError

    def parse(self, ctx: Context) -> list[Any]:
        """The items the native files at ``ctx.path`` hold (empty when there are none)."""
        raise NotImplementedError
