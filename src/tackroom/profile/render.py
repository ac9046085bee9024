"""Render a profile into one harness's native files, and import them back.

Targets: the run's isolated home (default; capability ``path``s under ``~``),
any directory (``--into``: the home layout written under it), or the project
(``scope="project"``: capability ``project`` paths, only when asked). Before
anything is written every target is checked: a file that exists and that
tackroom does not own stops the render with an error and nothing is written.
Ownership is recorded in ``.tackroom-owned.json`` at the target root
(:mod:`tackroom.profile.owned`); files a harness shares with other settings are
merged into, entry by entry (:mod:`tackroom.profile.merge`). No path leaves the
target root. A render follows no link in it; an import reads a link that
resolves inside the tree it imports, and drops by name one that leads out.

A write (:func:`write_all`) makes the target what the renders describe: files
whose bytes would not change are left alone, and what the record says these
adapters wrote before and they no longer produce is removed (unless changed
since, then kept and reported). :func:`check` says what a write would change,
writing nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tackroom.adapters import templates
from tackroom.errors import ProfileError, TackroomError, UnsafePathError
from tackroom.paths import Transaction, inside, read_inside
from tackroom.profile import jsonc, origins
from tackroom.profile.engines import engine, tree
from tackroom.profile.engines.base import Context, Drop, Engine, Kind, Output, Passthrough
from tackroom.profile.load import check_item_name
from tackroom.profile.merge import Settings
from tackroom.profile.model import Hook, Native, Origin, Permissions, Profile
from tackroom.profile.owned import LEGACY, OWNED, Owned, Record, digest, read_record

if TYPE_CHECKING:
    from tackroom.adapters.adapter import Adapter

Scope = Literal["home", "project"]
KINDS: dict[Kind, str] = {
    "rules": "rules",
    "scoped_rules": "rules",
    "skills": "skills",
    "mcp": "mcp",
    "commands": "commands",
    "subagents": "agents",
    "hooks": "hooks",
    "permissions": "permissions",
    "env": "env",
    "settings": "native",
}
"""Each capability kind -> the profile attribute its items come from (and go to on import)."""
_SINGULAR = {
    "rules": "rule",
    "scoped_rules": "path-scoped rule",
    "skills": "skill",
    "mcp": "MCP server",
    "commands": "command",
    "subagents": "subagent",
    "hooks": "hook",
    "permissions": "permission rule",
    "env": "env variable",
    "settings": "native setting",
}


def kind_items(profile: Profile, kind: Kind) -> list[Any]:
    """The items of ``profile`` one capability kind renders.

    Rules without globs are ``rules``, with globs ``scoped_rules``; the
    permissions are one item (when any rule is set); ``env`` items are
    (name, value) pairs; ``settings`` items are the :class:`Native` passthrough.
    """
    if kind == "rules":
        return [r for r in profile.rules if not r.globs]
    if kind == "scoped_rules":
        return [r for r in profile.rules if r.globs]
    if kind == "permissions":
        return [profile.permissions] if profile.permissions else []
    if kind == "env":
        return list(profile.env)
    return list(getattr(profile, KINDS[kind]))


def item_names(kind: Kind, item: Any) -> list[str]:
    """The names a dropped item is reported by (each permission rule; an env variable's name)."""
    if kind == "permissions":
        return [
            f"{verdict} {rule}" for verdict in ("allow", "ask", "deny") for rule in getattr(item, verdict)
        ]
    if kind == "env":
        return [item[0]]
    return [item.name]


@dataclass(frozen=True)
class Rendered:
    """What a render produced: the files, and the items dropped by name."""

    adapter: str
    outputs: tuple[Output, ...]
    drops: tuple[Drop, ...]
    root: Path
    written: tuple[Path, ...] = field(default=())
    """Files written (a file whose bytes would not change is not)."""
    removed: tuple[Path, ...] = field(default=())
    """Files an earlier render wrote that this one no longer produces."""
    kept: tuple[str, ...] = field(default=())
    """What an earlier render wrote, this one no longer produces, and was left: changed since."""

    def to_json(self) -> dict[str, Any]:
        return {
            "adapter": self.adapter,
            "root": str(self.root),
            "files": [str(o.path) for o in self.outputs],
            "dropped": [{"kind": d.kind, "name": d.name, "reason": d.reason} for d in self.drops],
        }


def plan_render(
    profile: Profile, adapter: Adapter, *, root: Path, scope: Scope = "home", workdir: Path | None = None
) -> Rendered:
    """Compute the files and drops of rendering ``profile`` for ``adapter``, writing nothing.

    ``root`` stands for the harness's home (scope ``home``) or the project
    directory (scope ``project``).
    """
    mine = profile.for_harness(adapter.harness)
    _check_names(mine)
    workdir = workdir or root

    def render(part: Profile) -> tuple[list[Output], list[Drop]]:
        return _render(part, adapter, root=root, scope=scope, workdir=workdir)

    own = [o for o in profile.origins if (o.adapter, o.scope) == (adapter.name, scope)]
    if own:
        places = _places(adapter, scope, root, workdir)
        placed = [o for o in own if _placed(o, places, root)]
        # An item one of whose files is not where the adapter reads it renders as usual (kimi's
        # subagent beside its spec): writing back only the rest of its files would lose that one.
        elsewhere = {(a, n) for o in own if o not in placed for a, n, _ in o.items}
        own = [o for o in placed if not any((a, n) in elsewhere for a, n, _ in o.items)]
    outputs, drops = origins.render(mine, own, render, root, _whole) if own else render(mine)
    return Rendered(adapter.name, tuple(outputs), tuple(drops), root)


def _places(adapter: Adapter, scope: Scope, root: Path, workdir: Path) -> dict[str, list[str]]:
    """Per profile attribute: the files and folders ``adapter`` reads its items from (import's places)."""
    caps = adapter.spec.capabilities
    found: dict[str, list[str]] = {}
    for kind, attr in KINDS.items():
        capability = getattr(caps, kind)
        for raw in (
            (capability.path if scope == "home" else capability.project, *capability.also)
            if capability
            else ()
        ):
            path = _target(capability, scope, root, workdir, adapter, raw) if raw else None
            if path is not None:
                found.setdefault(attr, []).append(os.path.normpath(path))
    for place in adapter.spec.reads:
        raw = place.path if scope == "home" else place.project
        path = _target(_place(adapter, place), scope, root, workdir, adapter, raw) if raw else None
        if path is not None and place.reason is None:
            found.setdefault(KINDS[place.kind], []).append(os.path.normpath(path))
    return found


def _placed(origin: Origin, places: dict[str, list[str]], root: Path) -> bool:
    """Whether an origin's file is where the adapter reads each of its items from (never elsewhere)."""
    target = os.path.normpath(root / origin.path)
    return all(
        any(target == p or target.startswith(p.rstrip(os.sep) + os.sep) for p in places.get(attr, ()))
        for attr, _, _ in origin.items
    )


def _render(
    mine: Profile, adapter: Adapter, *, root: Path, scope: Scope, workdir: Path
) -> tuple[list[Output], list[Drop]]:
    """The outputs and drops of rendering ``mine`` (the profile as ``adapter``'s harness sees it)."""
    outputs: list[Output] = []
    drops: list[Drop] = []
    caps = adapter.spec.capabilities
    for kind in KINDS:
        items = kind_items(mine, kind)
        capability = getattr(caps, kind)
        if not items:
            continue
        if capability is None:
            why = f"no {kind.replace('_', '-')} capability"
            drops += [
                Drop(adapter.harness, _SINGULAR[kind], n, why) for i in items for n in item_names(kind, i)
            ]
            continue
        path = _target(capability, scope, root, workdir, adapter)
        if path is None:
            why = f"no {scope}-level {kind.replace('_', '-')}"
            drops += [
                Drop(adapter.harness, _SINGULAR[kind], n, why) for i in items for n in item_names(kind, i)
            ]
            continue
        ctx = Context(adapter, kind, capability, path, drops, scope=scope)
        renderer = engine(capability.render, adapter.family)
        if kind == "hooks" and not renderer.sources:
            items = _every_start(ctx, items)
        outputs += renderer.render(ctx, items)
    return outputs, drops


def _every_start(ctx: Context, hooks: list[Hook]) -> list[Hook]:
    """The hooks an engine that cannot select a session start can write; one for some starts is dropped."""
    for hook in hooks:
        if hook.source:
            why = f"cannot run it only on {', '.join(hook.source)} here (it would run on every start)"
            ctx.drop("hook", hook.name, why)
    return [h for h in hooks if not h.source]


def _check_names(profile: Profile) -> None:
    """Every item name becomes a path: one that is not a profile name is refused before anything else."""
    for kind, attr in KINDS.items():
        if kind in ("permissions", "env", "settings", "scoped_rules"):
            continue
        for item in getattr(profile, attr):
            if not check_item_name(kind, item.name):
                raise ProfileError(
                    f"{_SINGULAR[kind]} name {item.name[:80]!r} cannot be rendered: it becomes a file "
                    "name (lowercase letters, digits, '.', '_' and '-'; at most 128 characters)"
                )


@dataclass(frozen=True)
class Imported:
    """What an import read: the profile, and every native item it did not import, by name.

    Every item found in the native files is exactly one of imported (in
    ``profile``), kept as native passthrough (``passthrough``, in
    ``profile.native``) or left out with the reason (``dropped``).
    """

    adapter: str
    profile: Profile
    dropped: tuple[Drop, ...] = ()
    passthrough: tuple[Passthrough, ...] = ()

    def counts(self) -> dict[str, dict[str, int]]:
        """Per kind: found, imported, passthrough, dropped (items), fields (dropped from imported items)."""
        blank = {"found": 0, "imported": 0, "passthrough": 0, "dropped": 0, "fields": 0}
        table: dict[str, dict[str, int]] = {}
        for kind, attr in KINDS.items():
            if kind in ("scoped_rules", "settings"):
                continue
            if kind == "permissions":
                imported = len(item_names("permissions", self.profile.permissions))
            else:
                imported = len(getattr(self.profile, attr))
            table[_SINGULAR[kind]] = blank | {"found": imported, "imported": imported}
        for what, counted in (("passthrough", self.passthrough), ("dropped", self.dropped)):
            for entry in counted:
                row = table.setdefault(entry.kind, dict(blank))
                if getattr(entry, "field", None) is not None:
                    row["fields"] += 1
                    continue
                row[what] += 1
                row["found"] += 1
        return {k: v for k, v in table.items() if v["found"] or v["fields"]}

    @property
    def lost(self) -> bool:
        """Whether anything found was left out, an item or a field of one (``--strict`` fails on it)."""
        return bool(self.dropped)

    def to_json(self) -> dict[str, Any]:
        return {
            "adapter": self.adapter,
            "counts": self.counts(),
            "dropped": [
                {"kind": d.kind, "name": d.name, "reason": d.reason} | ({"field": d.field} if d.field else {})
                for d in self.dropped
            ],
            "passthrough": [{"kind": p.kind, "name": p.name} for p in self.passthrough],
        }


def import_profile(
    adapter: Adapter, *, root: Path, scope: Scope = "home", workdir: Path | None = None
) -> Profile:
    """Read a harness's native files (under ``root``) into a neutral profile (:func:`import_native`)."""
    return import_native(adapter, root=root, scope=scope, workdir=workdir).profile


def import_native(
    adapter: Adapter, *, root: Path, scope: Scope = "home", workdir: Path | None = None
) -> Imported:
    """Read a harness's native files (under ``root``) back into a neutral profile, accounting for all.

    The files are outside input. A symbolic link that resolves inside ``root``
    is read as the harness reads it; one that leads out of it (or nowhere, or
    loops), and a FIFO, socket or device, is never opened: it is dropped by name
    (its path under ``root``) with the reason (:mod:`~tackroom.profile.engines.tree`).
    Everything else is total too: each
    item found is imported, kept as passthrough, or dropped by name with the
    reason; a file that does not parse or has an unexpected shape is dropped
    with its file (and line) and the import goes on; a name read from the files
    (a frontmatter ``name``, a settings key, a file stem) that cannot be a
    profile name is dropped, since it becomes a path; and each imported item is
    proven to load as a profile item (an inline secret, say, is dropped).
    """
    root = Path(os.path.abspath(root))  # noqa: PTH100 (dropped entries are named relative to it)
    workdir = Path(os.path.abspath(workdir or root))  # noqa: PTH100
    found: dict[str, dict[str, Any]] = {attr: {} for attr in KINDS.values()}
    drops: list[Drop] = []
    passed: list[Passthrough] = []
    settings: dict[str, Any] = {}
    files: dict[str, bytes] = {}
    refused: set[Path] = set()
    kept_from: dict[str, Path] = {}
    read: list[tuple[origins.Key, Path]] = []
    lossy: set[Path] = set()

    def at(kind: Kind, capability: Any, raw: str | None) -> Context | None:
        """The context of reading one place (None: it has no place in this scope)."""
        path = _target(capability, scope, root, workdir, adapter, raw) if raw is not None else None
        if path is None:
            return None
        _under(root, path)
        return Context(
            adapter, kind, capability, path, drops, passed, settings, files, root, refused, kept_from
        )

    gathered: set[Path] = set()  # the files the capabilities read: a named place's own are not named
    for kind, attr in KINDS.items():
        capability = getattr(adapter.spec.capabilities, kind)
        if capability is None:
            continue
        for raw in (capability.path if scope == "home" else capability.project, *capability.also):
            ctx = at(kind, capability, raw)
            if ctx is not None:
                gathered.add(ctx.path)
                _gather(ctx, found[attr], read, lossy)
    for place in adapter.spec.reads:
        ctx = at(place.kind, _place(adapter, place), place.path if scope == "home" else place.project)
        if ctx is not None and place.reason is not None:
            _unread(ctx, place.reason, place.ending, gathered)
        elif ctx is not None:
            _gather(ctx, found[KINDS[place.kind]], read, lossy)

    def pick(attr: str) -> tuple[Any, ...]:
        return tuple(item for _, item in sorted(found[attr].items()))

    permissions = next(iter(found["permissions"].values()), Permissions())
    native = (Native(adapter.harness, tuple(sorted(settings.items())), tuple(sorted(files.items()))),)
    profile = Profile(
        rules=pick("rules"),
        skills=pick("skills"),
        agents=pick("agents"),
        commands=pick("commands"),
        mcp=pick("mcp"),
        hooks=pick("hooks"),
        permissions=permissions,
        env=pick("env"),
        native=native if settings or files else (),
    )
    read += [(("native", key), path) for key, path in kept_from.items() if key in settings]
    profile = _with_origins(
        profile, adapter, root=root, scope=scope, workdir=workdir, read=read, drops=drops, lossy=lossy
    )
    return Imported(adapter.name, profile, tuple(drops), tuple(passed))


def _with_origins(
    profile: Profile,
    adapter: Adapter,
    *,
    root: Path,
    scope: Scope,
    workdir: Path,
    read: list[tuple[origins.Key, Path]],
    drops: list[Drop],
    lossy: set[Path],
) -> Profile:
    """``profile`` with the origins of its items (:mod:`tackroom.profile.origins`)."""
    try:
        usual = plan_render(profile, adapter, root=root, scope=scope, workdir=workdir).outputs
    except TackroomError:
        return profile  # nothing to compare with: the items render as usual
    fresh: dict[str, bytes | None] = {}
    for output in usual:
        rel = os.path.relpath(output.path, root).replace(os.sep, "/")
        fresh[rel] = None if output.merge or rel in fresh else _whole(output)
    found = origins.collect(
        profile,
        adapter=adapter.name,
        harness=adapter.harness,
        scope=scope,
        root=root,
        read=read,
        drops=drops,
        lossy=lossy,
        fresh=fresh,
        render=lambda part: _render(part, adapter, root=root, scope=scope, workdir=workdir),
        whole=_whole,
    )
    return replace(profile, origins=found)


def _gather(
    ctx: Context, found: dict[Any, Any], read: list[tuple[origins.Key, Path]], lossy: set[Path]
) -> None:
    """Read one native location into ``found`` (by item name): a name found before is dropped by name.

    Each item kept is noted in ``read`` with the files it came from; a file that something was
    dropped from while it was read goes in ``lossy``.

    Permission rules from several files (opencode's ``opencode.json`` and ``.opencode/opencode.json``)
    add up: every rule of each is kept (sorted, as one file of them reads back), and deny still wins
    over ask over allow.
    """
    if tree.refused(ctx, _SINGULAR[ctx.kind], ctx.path):
        return
    dropped = len(ctx.drops)
    for item in _parse(ctx, engine(ctx.capability.render, ctx.adapter.family)):
        key = item[0] if ctx.kind == "env" else getattr(item, "name", ctx.kind)
        if ctx.kind == "permissions" and key in found:
            before = found[key]
            found[key] = Permissions(
                *(tuple(sorted({*getattr(before, v), *getattr(item, v)})) for v in ("allow", "ask", "deny"))
            )
        elif key in found:
            ctx.drop(_SINGULAR[ctx.kind], str(key), f"also defined in {ctx.path}: kept the first")
        else:
            found[key] = item
        if ctx.kind == "settings" or (found.get(key) is not item and ctx.kind != "permissions"):
            continue
        paths = [p for i, p in ctx.came_from if i is item] or ([ctx.path] if ctx.path.is_file() else [])
        read += [((KINDS[ctx.kind], str(key)), p) for p in paths]
    if len(ctx.drops) > dropped and ctx.path.is_file():
        lossy.add(ctx.path)


def _place(adapter: Adapter, place: Any) -> Any:
    """The capability an import-only place is read as: the adapter's own of its kind, moved there."""
    from tackroom.adapters.spec import Capability

    known = getattr(adapter.spec.capabilities, place.kind)
    if place.render is None or known is None:
        return Capability(path=place.path, project=place.project, render="unread")
    return known.model_copy(
        update={"render": place.render, "path": place.path, "project": place.project, "also": []}
    )


def _unread(ctx: Context, reason: str, ending: str, gathered: Collection[Path] = ()) -> None:
    """Name each file at a place tackroom does not import (a file, or those in a folder by ending),
    but the ``gathered`` ones a capability reads (Copilot's own hooks file among the others)."""
    kind = _SINGULAR[ctx.kind]
    if tree.refused(ctx, kind, ctx.path):
        return
    if ctx.path.is_dir():
        found = [p for p in tree.files_below(ctx, ctx.path, kind) if p.name.endswith(ending)]
    else:
        found = [ctx.path] if ctx.path.is_file() else []
    for path in found:
        if path not in gathered:
            ctx.drop(kind, tree.name_of(ctx, path), f"{path}: {reason}")


def _under(root: Path, path: Path) -> None:
    """Refuse a capability path that leaves the import's root as written (an operator's absolute path)."""
    base = os.path.abspath(root)  # noqa: PTH100 (lexical: links are the tree module's to judge)
    target = os.path.normpath(path)
    if target != base and not target.startswith(base.rstrip(os.sep) + os.sep):
        raise UnsafePathError(f"{str(path)!r} would leave {base!r}")


def _parse(ctx: Context, renderer: Engine) -> list[Any]:
    """What the engine reads back, each item fit to become a profile file that loads.

    Import is total: a file the engine cannot read is dropped by name with the
    reason (and the import goes on); so is an item whose name cannot be a
    profile name, or one the profile loader would refuse (an inline secret, a
    bad tool reference).
    """
    import yaml

    singular = _SINGULAR[ctx.kind]
    try:
        items = renderer.parse(ctx)
    except (
        TackroomError,
        ValueError,
        TypeError,
        AttributeError,
        KeyError,
        IndexError,
        RecursionError,
        OSError,
        yaml.YAMLError,
    ) as exc:
        why = str(exc) if isinstance(exc, TackroomError) else f"{type(exc).__name__}: {str(exc)[:200]}"
        ctx.drop(singular, ctx.path.name, f"{ctx.path}: not in the shape tackroom reads ({why[:400]})")
        return []
    if ctx.kind == "settings":
        return items
    named = []
    for item in items:
        if ctx.kind in ("permissions", "env") or (
            isinstance(item.name, str) and check_item_name(ctx.kind, item.name)
        ):
            named.append(item)
            continue
        ctx.drop(
            singular,
            str(item.name)[:80],
            f"{ctx.path}: {str(item.name)[:80]!r} cannot be a profile name (lowercase letters, digits, "
            "'.', '_' and '-'; at most 128 characters), since it becomes a file name; rename it there",
        )
    if len(named) > 1 and _loads(ctx, named, report=False):
        return named  # all of them load together: the usual case, one load instead of one per item
    return [item for item in named if _loads(ctx, [item])]


def _loads(ctx: Context, items: list[Any], report: bool = True) -> bool:
    """Whether imported items, written as a profile, load back; else (``report``) each is dropped with why."""
    import tempfile

    from tackroom.errors import ConfigError
    from tackroom.profile.load import load_profile
    from tackroom.profile.write import profile_files

    attr = KINDS[ctx.kind]
    value: Any = items[0] if ctx.kind == "permissions" else tuple(items)
    try:
        files = profile_files(Profile(**{attr: value}))
    except (ValueError, TypeError, AttributeError) as exc:
        problems = [f"cannot be written as a profile ({type(exc).__name__})"]
    else:
        with tempfile.TemporaryDirectory() as tmp:
            try:
                for rel, data in files.items():  # a scratch directory: no fsync, no rollback needed
                    target = inside(Path(tmp), rel)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(data)
                load_profile([Path(tmp)])
                return True
            except (ConfigError, UnsafePathError, OSError) as exc:
                found = getattr(exc, "problems", ())
                problems = [f"{p.key}: {p.message}" if p.key else p.message for p in found] or [str(exc)]
    for item in items if report else ():
        for name in item_names(ctx.kind, item):
            ctx.drop(
                _SINGULAR[ctx.kind], name, f"{ctx.path}: not a profile item: {'; '.join(problems)[:400]}"
            )
    return False


def referenced_variables(profile: Profile) -> list[str]:
    """Variables the profile's MCP servers and hook commands reference as ``${VAR}``."""
    texts = [s.command or "" for s in profile.mcp] + [a for s in profile.mcp for a in s.args]
    texts += [v for s in profile.mcp for _, v in (*s.env, *s.headers)] + [s.url or "" for s in profile.mcp]
    texts += [h.command or "" for h in profile.hooks]
    return sorted({m.group(1) for text in texts for m in templates.ENV_REF.finditer(text)})


def argv_for(
    rendered: Rendered, adapter: Adapter, *, workdir: Path, visible: Callable[[Path], Path]
) -> list[str]:
    """What the harness must be told to read what ``rendered`` wrote into a home: each capability's
    ``argv`` whose file (or a file in whose directory) it wrote, ``{{path}}`` that path as the
    harness sees it (``visible``)."""
    written = [output.path for output in rendered.outputs]
    argv: list[str] = []
    for _kind, capability in adapter.spec.capabilities:
        if capability is None or not capability.argv:
            continue
        path = _target(capability, "home", rendered.root, workdir, adapter)
        if path is not None and any(p == path or path in p.parents for p in written):
            argv += [templates.substitute(e, {"path": str(visible(path))}) for e in capability.argv]
    return argv


def _target(
    capability: Any, scope: Scope, root: Path, workdir: Path, adapter: Adapter, raw: str | None = None
) -> Path | None:
    raw = raw or (capability.path if scope == "home" else capability.project)
    if raw is None:
        return None
    # Relocation variables point at their defaults under the target root, as in an isolated run.
    env = {
        name: str(templates.expand_path(default, env={}, home=str(root), workdir=str(workdir)))
        for name, default in adapter.spec.home.items()
    }
    return templates.expand_path(raw, env=env, home=str(root), workdir=str(workdir))


def write(rendered: Rendered) -> Rendered:
    """Write one render, all of it or none of it (:func:`write_all`)."""
    return write_all([rendered])[0]


def write_all(rendereds: Sequence[Rendered], *, gitignore: bool = False) -> list[Rendered]:
    """Write renders into one root, all of them or none, and make the root what they describe.

    Everything is checked and prepared before the first byte is written: each
    target proven inside the root with no link on the way, each existing file
    read as the harness reads it, each conflict collected (a file or a
    same-name entry tackroom did not write; one file two of the renders, or
    this render and an earlier one for another harness, would write
    differently). A file whose bytes would not change is not rewritten. What
    the ownership record says these adapters wrote before and the renders no
    longer produce is removed: a whole file, or an entry, list item or key of
    a settings file shared with the user, when it is still as tackroom wrote
    it; anything changed since is left where it is and reported in
    :attr:`Rendered.kept` (it is the user's from then on). Directories left
    empty go too. Then every file, and the ownership record, is replaced or
    removed atomically; if one step fails, everything already done is undone.

    ``gitignore`` adds the whole files tackroom owns under the root (and the
    record) to its ``.gitignore``, in a marked block (:func:`gitignore_block`).
    """
    plan = _plan(rendereds, gitignore=gitignore)
    if plan.conflicts:
        raise ProfileError("not writing anything: " + "; ".join(m for _, m in plan.conflicts))
    files = Transaction(plan.root)
    for path, data in plan.puts.items():
        files.put(path, data)
    for path in plan.removes:
        files.remove(path)
    try:
        files.commit()
    except OSError as exc:
        where = exc.filename or plan.root
        raise ProfileError(
            f"could not write {where}: {exc.strerror or exc}; nothing was changed (files already written "
            "were put back)"
        ) from exc
    done = []
    for rendered in rendereds:
        mine = plan.changed.get(rendered.adapter, ([], [], []))
        done.append(
            Rendered(
                rendered.adapter,
                rendered.outputs,
                rendered.drops,
                plan.root,
                tuple(mine[0]),
                tuple(mine[1]),
                tuple(mine[2]),
            )
        )
    return done


Change = Literal["new", "changed", "removed", "conflict"]


@dataclass(frozen=True)
class Difference:
    """One file a render would create, change or remove (or could not write: ``conflict``)."""

    path: Path
    change: Change
    adapter: str
    """The adapter whose render it is ("" for the ownership record and ``.gitignore``)."""
    note: str = ""

    def to_json(self) -> dict[str, str]:
        return {"path": str(self.path), "change": self.change, "adapter": self.adapter, "note": self.note}

    def __str__(self) -> str:
        verb = {"new": "would create", "changed": "would change", "removed": "would remove"}
        said = f"{verb.get(self.change, 'cannot write')} {self.path}"
        return said + (f" ({self.note})" if self.note else "")


def check(rendereds: Sequence[Rendered], *, gitignore: bool = False) -> list[Difference]:
    """What writing ``rendereds`` (:func:`write_all`) would change on disk, writing nothing.

    Empty when the files are in sync. Only content counts: the ownership
    record is not compared, so a checkout that holds the rendered files but no
    record is in sync. A file the render could not write (it is not
    tackroom's) is a ``conflict`` difference, not an error.
    """
    plan = _plan(rendereds, gitignore=gitignore)
    found = [d for d in plan.differences if d.path != inside(plan.root, OWNED)]
    whose = {o.path: r.adapter for r in reversed(rendereds) for o in r.outputs}
    found += [Difference(p, "conflict", whose.get(p, ""), message) for p, message in plan.conflicts]
    return sorted(found, key=lambda d: (str(d.path), d.change))


@dataclass
class _Plan:
    root: Path
    puts: dict[Path, bytes] = field(default_factory=dict)
    removes: list[Path] = field(default_factory=list)
    conflicts: list[tuple[Path, str]] = field(default_factory=list)
    differences: list[Difference] = field(default_factory=list)
    changed: dict[str, tuple[list[Path], list[Path], list[str]]] = field(default_factory=dict)
    """Per adapter: written, removed, kept."""

    def put(self, path: Path, data: bytes, existing: bytes | None, adapter: str) -> None:
        if existing == data:
            return
        self.puts[path] = data
        self.differences.append(Difference(path, "new" if existing is None else "changed", adapter))
        self.changed.setdefault(adapter, ([], [], []))[0].append(path)

    def remove(self, path: Path, adapter: str) -> None:
        self.removes.append(path)
        self.differences.append(Difference(path, "removed", adapter))
        self.changed.setdefault(adapter, ([], [], []))[1].append(path)

    def keep(self, note: str, adapter: str) -> None:
        self.changed.setdefault(adapter, ([], [], []))[2].append(note)


def _plan(rendereds: Sequence[Rendered], *, gitignore: bool) -> _Plan:
    """Everything writing ``rendereds`` does, computed from what is on disk."""
    if not rendereds:
        raise ProfileError("nothing to render")
    root = rendereds[0].root
    if any(inside(r.root) != inside(root) for r in rendereds):
        raise ProfileError("renders written together must share one root")
    names = frozenset(r.adapter for r in rendereds)
    record = read_record(root)
    plan = _Plan(root)
    before = record.all(but=frozenset(record.adapters) - names - {LEGACY})
    others = record.all(but=names | {LEGACY})
    fresh = {name: Owned() for name in names}
    done: set[str] = set()
    by_path: dict[Path, list[tuple[str, Output]]] = {}
    for rendered in rendereds:
        for output in rendered.outputs:
            by_path.setdefault(output.path, []).append((rendered.adapter, output))
    base = inside(root)
    proven: set[str] = set()  # the directories found real (no link) on the way, each looked at once
    for path, outputs in by_path.items():
        target = inside(root, path, proven=proven)
        rel = target.relative_to(base).as_posix()
        done.add(rel)
        existing = read_inside(root, rel, proven=proven)
        if all(o.merge for _, o in outputs):
            settings, native = _merge_into(target, rel, outputs, existing, record, fresh)
            if settings.conflicts:
                plan.conflicts += [(target, f"{target}: {c}") for c in settings.conflicts]
                continue
            if native is not None:
                plan.put(target, native, existing, outputs[0][0])
                continue
            settings.remove_stale(before, _merged(fresh), others)
            _settle(plan, settings, existing, outputs[0][0])
            continue
        problem = _whole_file(plan, record, names, target, rel, outputs, existing)
        if problem is not None:
            plan.conflicts.append((target, problem))
            continue
        for adapter, output in outputs:
            fresh[adapter].files[rel] = digest(_whole(output))
    now = _merged(fresh)
    for rel, recorded in sorted(before.files.items()):
        if rel in now.files or rel in others.files or rel in done:
            continue
        owner = _owner(record, names, rel)
        try:
            existing = read_inside(root, rel)
        except UnsafePathError as exc:
            plan.keep(f"{exc}: left alone, and no longer tackroom's", owner)
            continue
        if existing is None:
            continue
        if digest(existing) != recorded:
            plan.keep(f"{inside(root, rel)} changed since tackroom wrote it: left as it is, now yours", owner)
            continue
        plan.remove(inside(root, rel), owner)
    for rel in sorted(before.merged() - done):
        owner = _owner(record, names, rel)
        try:
            existing = read_inside(root, rel)
        except UnsafePathError as exc:
            plan.keep(f"{exc}: left alone, and no longer tackroom's", owner)
            continue
        if existing is None:
            continue
        target = inside(root, rel)
        settings = Settings.read(target, rel, "toml" if rel.endswith(".toml") else "json", existing)
        settings.remove_stale(before, now, others)
        _settle(plan, settings, existing, owner)
    kept = Record({n: c for n, c in record.adapters.items() if n not in names and n != LEGACY and c})
    kept.adapters.update({n: c for n, c in fresh.items() if c})
    _record(plan, kept)
    if gitignore:
        _gitignore(plan, kept)
    return plan


def _merge_into(
    target: Path,
    rel: str,
    outputs: list[tuple[str, Output]],
    existing: bytes | None,
    record: Record,
    fresh: dict[str, Owned],
) -> tuple[Settings, bytes | None]:
    """A settings file with every output merged in, and the bytes to write in place of its dump.

    Those are the native file the items were imported from (:attr:`Output.base`), when nothing
    else is there yet (or it is as it was): tackroom then claims its entries as they stand there.
    """
    base = outputs[0][1].base
    if base is not None and existing in (None, base) and all(o.base == base for _, o in outputs):
        try:
            data = Settings.read(target, rel, outputs[0][1].format, base).data
        except TackroomError:
            data = None
        if data is not None and _shape(data) == _shape(_union(o.data or {} for _, o in outputs)):
            settings = Settings.read(target, rel, outputs[0][1].format, None)
            settings.merge(data, record.all(), fresh[outputs[0][0]])
            return settings, base
    settings = Settings.read(target, rel, outputs[0][1].format, existing)
    for adapter, output in outputs:
        settings.merge(dict(output.data or {}), record.all(), fresh[adapter])
    return settings, None


def _union(tables: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The keys of several outputs merged into one file, each table's entries together."""
    found: dict[str, Any] = {}
    for table in tables:
        for key, value in table.items():
            old = found.get(key)
            found[key] = {**old, **value} if isinstance(old, dict) and isinstance(value, dict) else value
    return found


def _shape(data: Mapping[str, Any]) -> set[str]:
    """A settings file's keys and its tables' entry names: what a native file written back must hold
    exactly (no hook, server or key that the profile does not, however each is spelled)."""
    return {*data, *(f"{k}.{name}" for k, v in data.items() if isinstance(v, dict) for name in v)}


def _merged(claims: dict[str, Owned]) -> Owned:
    return Record(dict(claims)).all()


def _owner(record: Record, names: frozenset[str], rel: str) -> str:
    """The adapter (of those rendering) a stale claim on ``rel`` is reported under."""
    for name in sorted(names):
        claims = record.adapters.get(name)
        if claims is not None and (rel in claims.files or rel in claims.merged()):
            return name
    return sorted(names)[0]


def _whole_file(
    plan: _Plan,
    record: Record,
    names: frozenset[str],
    target: Path,
    rel: str,
    outputs: list[tuple[str, Output]],
    existing: bytes | None,
) -> str | None:
    """Plan one file tackroom owns whole; the conflict that stops it, if any."""
    if any(o.merge for _, o in outputs):
        merged = sorted({a for a, o in outputs if o.merge})
        whole = sorted({a for a, o in outputs if not o.merge})
        return (
            f"{target}: {', '.join(whole)} would own it whole and {', '.join(merged)} would merge into it; "
            "render them into different roots (--into)"
        )
    datas = {adapter: _whole(output) for adapter, output in outputs}
    if len(set(datas.values())) > 1:
        which = " and ".join(sorted(datas))
        return (
            f"{target} would be written differently for {which}; give them the same content in the "
            "profile (or per-harness items for one), or render them into different roots (--into)"
        )
    data = next(iter(datas.values()))
    if existing is not None and existing != data:
        others = [n for n in record.claimants(rel, but=names) if record.adapters[n].owns_file(rel, existing)]
        if others:
            adapter = next(iter(datas))
            return (
                f"{target} was rendered for {', '.join(others)} with other content; render "
                f"{adapter} and {', '.join(others)} together (`tackroom profile render {adapter} "
                f"{' '.join(others)}`) from a profile that gives both the same"
            )
        if not record.all().owns_file(rel, existing):
            return (
                f"{target} exists and tackroom does not own it (move it aside, or render into an "
                "isolated home or another directory with --into)"
            )
    first, *more = sorted(datas)
    plan.put(target, data, existing, first)
    if existing != data:
        for adapter in more:  # written for each harness that renders it
            plan.changed.setdefault(adapter, ([], [], []))[0].append(target)
    return None


def _settle(plan: _Plan, settings: Settings, existing: bytes | None, adapter: str) -> None:
    """Plan a merged settings file: rewritten when it changes, removed when nothing is left in it."""
    for note in settings.kept:
        plan.keep(note, adapter)
    data = settings.dump()
    if data is None:
        if existing is not None:
            plan.remove(settings.path, adapter)
        return
    plan.put(settings.path, data, existing, adapter)


def _record(plan: _Plan, record: Record) -> None:
    """Plan the ownership record: written when it changes, removed once it claims nothing."""
    target = inside(plan.root, OWNED)
    existing = read_inside(plan.root, OWNED)
    if record.adapters:
        data = record.dump()
        if existing != data:
            plan.puts[target] = data
            plan.differences.append(Difference(target, "new" if existing is None else "changed", ""))
    elif existing is not None:
        plan.removes.append(target)
        plan.differences.append(Difference(target, "removed", ""))


GITIGNORE_BEGIN = "# >>> tackroom (rendered files)"
GITIGNORE_END = "# <<< tackroom"


def gitignore_block(text: str, paths: Sequence[str]) -> str:
    """``text`` (a ``.gitignore``) with tackroom's marked block holding exactly ``paths``.

    The block is replaced where it is (added at the end when there is none,
    removed when ``paths`` is empty); every line of the user's stays as it was.
    Each path is anchored at the root (``/``) and escaped, so it matches that
    one file and nothing the user owns.
    """
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the final newline; a line's own "\r" stays with it
    start = next((i for i, line in enumerate(lines) if line.strip() == GITIGNORE_BEGIN), None)
    end = None
    if start is not None:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].strip() == GITIGNORE_END), None)
        if end is None:
            raise ProfileError(
                f".gitignore: the line {GITIGNORE_BEGIN!r} has no {GITIGNORE_END!r} after it; add it back "
                "(or remove the start line) and render again"
            )
    block = [GITIGNORE_BEGIN, *("/" + _gitignore_escape(p) for p in sorted(paths)), GITIGNORE_END]
    if start is not None and end is not None:
        lines[start : end + 1] = block if paths else []
    elif paths:
        lines += block  # no blank line before it: removing the block gives back the file as it was
    return "\n".join(lines) + "\n" if lines else ""


def _gitignore_escape(rel: str) -> str:
    escaped = "".join("\\" + c if c in "*?[]\\!#" else c for c in rel)
    return escaped[:-1] + "\\ " if escaped.endswith(" ") else escaped


def _gitignore(plan: _Plan, record: Record) -> None:
    """Plan the project's ``.gitignore``: tackroom's block lists the whole files it owns, and the record."""
    owned = sorted({rel for claims in record.adapters.values() for rel in claims.files})
    paths = [*owned, OWNED] if record.adapters else []
    target = inside(plan.root, ".gitignore")
    existing = read_inside(plan.root, ".gitignore")
    text = "" if existing is None else existing.decode("utf-8", "surrogateescape")
    updated = gitignore_block(text, paths)
    if existing is None and not updated:
        return
    data = updated.encode("utf-8", "surrogateescape")
    if existing != data:
        plan.puts[target] = data
        plan.differences.append(Difference(target, "new" if existing is None else "changed", ""))


def _whole(output: Output) -> bytes:
    """The bytes of a file tackroom owns whole."""
    content = _dump(output.format, dict(output.data)) if output.data is not None else output.text or ""
    return content if isinstance(content, bytes) else content.encode("utf-8")


def _dump(fmt: str, data: dict[str, Any]) -> str:
    if fmt == "toml":
        import tomli_w

        return tomli_w.dumps(data)
    return jsonc.dumps(data) + "\n"
