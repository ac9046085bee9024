"""The checks that render a generated profile into a temp directory and read it back."""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tackroom.conformance.findings import Raw
from tackroom.conformance.static import TOOL_MOMENTS, tool_names
from tackroom.errors import TackroomError
from tackroom.vocabulary import MOMENTS

if TYPE_CHECKING:
    from tackroom.adapters.adapter import Adapter
    from tackroom.adapters.spec import HooksCapability
    from tackroom.profile.model import Hook, Profile

Scope = Literal["home", "project"]
SCOPES: tuple[Scope, ...] = ("home", "project")


def generated_profile(adapter: Adapter) -> Profile:
    """A profile with every kind of item, in words this adapter has: its tools, its hook moments and channels.

    Texts carry quotes, an apostrophe and non-ASCII letters, so an engine
    that escapes badly does not read them back.
    """
    from tackroom.profile.model import Agent, Command, McpServer, Profile, Rule, Skill

    tools = tuple(tool_names(adapter))
    return Profile(
        rules=(
            Rule("conformance", "Follow the conformance rules.\n"),
            Rule("unicode", "Ünïcode — “quoted” ✓\n"),
        ),
        skills=(
            Skill(
                "conformance-skill",
                "Checks conformance",
                "Run the checks.\n",
                (("ref/notes.md", b"notes\n"),),
            ),
        ),
        agents=(
            Agent("conformance-agent", "Reviews a change", "You review changes.\n", tools[:2]),
            Agent("plain-agent", "Answers questions", "You answer questions.\n"),
        ),
        commands=(
            Command("conformance-command", "Runs a conformance check", "Check $ARGUMENTS carefully.\n"),
        ),
        mcp=(
            McpServer("conformance-http", url="https://mcp.example.test/mcp"),
            McpServer(
                "conformance-stdio", command="python3", args=("-m", "server"), env=(("LOG_LEVEL", "debug"),)
            ),
        ),
        hooks=tuple(sorted(_generated_hooks(adapter, tools), key=lambda h: h.name)),
    )


def _generated_hooks(adapter: Adapter, tools: Sequence[str]) -> Iterator[Any]:
    from tackroom.profile.model import Hook

    hooks = adapter.spec.capabilities.hooks
    if hooks is None:
        return
    for moment in MOMENTS:
        if moment not in hooks.events:
            continue
        yield Hook(f"run-{moment}", moment, "command", command="echo 'conformance' >> hooks.log")
        for action in ("inject", "refuse"):
            template = getattr(hooks, action)
            if template is not None and (template.moments is None or moment in template.moments):
                yield Hook(f"{action}-{moment}", moment, action, text="Conformance: don't stop, it's “fine”.")
        if moment in TOOL_MOMENTS and tools:
            yield Hook(f"match-{moment}", moment, "command", command="true", matcher=(tools[0],))


def check_round_trip(adapter: Adapter) -> list[Raw]:
    """Every engine imports back exactly what it rendered of a generated profile, home and project."""
    profile = generated_profile(adapter)
    scopes: dict[Raw, list[str]] = {}
    with tempfile.TemporaryDirectory(prefix="tackroom-conformance-") as tmp:
        for scope in SCOPES:
            root = Path(tmp) / scope
            root.mkdir()
            for raw in _round_trip(adapter, profile, root, scope):
                scopes.setdefault(raw, []).append(scope)
    # The same problem in the home and in the project is one finding.
    return [(key, f"{message} ({' and '.join(where)})") for (key, message), where in scopes.items()]


def _round_trip(adapter: Adapter, profile: Profile, root: Path, scope: Scope) -> list[Raw]:
    from tackroom.profile.render import KINDS, import_profile, item_names, kind_items, plan_render, write

    try:
        rendered = write(plan_render(profile, adapter, root=root, scope=scope, workdir=root))
        back = import_profile(adapter, root=root, scope=scope, workdir=root)
    except Exception as exc:  # engine code, possibly a third party's: any failure is the finding
        return [(("capabilities",), f"a generated profile cannot be rendered and imported: {_why(exc)}")]
    mine = profile.for_harness(adapter.harness)
    dropped = {d.name: d.reason for d in rendered.drops}
    found: list[Raw] = []
    for kind in KINDS:
        capability = getattr(adapter.spec.capabilities, kind)
        if capability is None or (capability.project if scope == "project" else capability.path) is None:
            continue  # no location at this scope: the harness reads none there (Cursor's rules: no home)
        items = kind_items(mine, kind)
        kept = [i for i in items if not dropped.keys() & set(item_names(kind, i))]
        key = ("capabilities", kind)
        if items and not kept:
            names = {n for i in items for n in item_names(kind, i)}
            reasons = "; ".join(sorted({dropped[n] for n in names if n in dropped}))
            found.append((key, f"drops every generated {kind} item: {reasons}"))
        problem = _compare(kept, kind_items(back, kind))
        if problem:
            found.append((key, f"{capability.render!r} does not read back what it wrote: {problem}"))
    return found


def _why(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, TackroomError) else f"{type(exc).__name__}: {exc}"


def _compare(wrote: Sequence[Any], read: Sequence[Any]) -> str | None:
    """How the items read back differ from those written, for people; None when they are equal."""
    if list(wrote) == list(read):
        return None
    before = {i.name: i for i in wrote}
    after = {i.name: i for i in read}
    parts = []
    if missing := sorted(before.keys() - after.keys()):
        parts.append(f"missing {', '.join(map(repr, missing))}")
    if extra := sorted(after.keys() - before.keys()):
        parts.append(f"unexpected {', '.join(map(repr, extra))}")
    changed = [n for n in sorted(before.keys() & after.keys()) if before[n] != after[n]]
    parts += [f"{name!r} comes back with {_differences(before[name], after[name])}" for name in changed[:3]]
    if len(changed) > 3:
        parts.append(f"and {len(changed) - 3} more changed")
    return "; ".join(parts) or "a different order"


def _differences(wrote: Any, read: Any) -> str:
    """The fields of one item that differ, as ``field <read> instead of <wrote>``."""
    fields = [f.name for f in dataclasses.fields(wrote) if getattr(wrote, f.name) != getattr(read, f.name)]
    return "; ".join(f"{f} {_short(getattr(read, f))} instead of {_short(getattr(wrote, f))}" for f in fields)


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_hooks_load(adapter: Adapter) -> list[Raw]:
    """Hooks rendered into a temp home are read back, all of them, by the hooks engine's own parser."""
    from tackroom.profile.model import Profile

    hooks = adapter.spec.capabilities.hooks
    if hooks is None:
        return []
    profile = Profile(hooks=generated_profile(adapter).hooks)
    key = ("capabilities", "hooks")
    if not profile.hooks:
        return [((*key, "events"), "no hook can be rendered: hooks.events maps no moment")]
    with tempfile.TemporaryDirectory(prefix="tackroom-conformance-") as tmp:
        try:
            wrote, read, files, dropped = _render_and_read(adapter, hooks, profile, Path(tmp))
        except Exception as exc:  # engine code, possibly a third party's: any failure is the finding
            return [(key, f"hooks cannot be rendered into a home and read back: {_why(exc)}")]
    if not wrote:
        return [(key, f"every generated hook was dropped: {dropped}")]
    if not read:
        return [(key, f"{len(wrote)} hooks were written to {files}, and {hooks.render!r} read none back")]
    problem = _compare(wrote, sorted(read, key=lambda h: h.name))
    return [(key, f"{hooks.render!r} does not read back the hooks it wrote: {problem}")] if problem else []


def _render_and_read(
    adapter: Adapter, hooks: HooksCapability, profile: Profile, root: Path
) -> tuple[list[Hook], list[Hook], str, str]:
    """Render ``profile`` into ``root`` and read it back: (written, read back, files, why dropped)."""
    from tackroom.profile.engines import engine
    from tackroom.profile.engines.base import Context
    from tackroom.profile.render import _target, plan_render, write

    rendered = write(plan_render(profile, adapter, root=root))
    dropped = {d.name for d in rendered.drops}
    wrote = [h for h in profile.hooks if h.name not in dropped]
    reasons = "; ".join(sorted({d.reason for d in rendered.drops}))
    path = _target(hooks, "home", root, root, adapter)  # where the render put them, as the engine sees it
    assert path is not None  # a capability always has a home path
    read = engine(hooks.render).parse(Context(adapter, "hooks", hooks, path))
    files = ", ".join(str(o.path.relative_to(root)) for o in rendered.outputs)
    return wrote, list(read), files, reasons
