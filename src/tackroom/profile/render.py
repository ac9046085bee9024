"""Render a profile into one harness's native files, and import them back.

Targets: the run's isolated home (default; capability ``path``s under ``~``),
any directory (``--into``: the home layout written under it), or the project
(``scope="project"``: capability ``project`` paths, only when asked). Before
anything is written every target is checked: a file that exists and that
tackroom does not own stops the render with an error and nothing is written.
Ownership is recorded in ``.tackroom-owned.json`` at the target root
(:mod:`tackroom.profile.owned`); files a harness shares with other settings are
merged into, entry by entry (:mod:`tackroom.profile.merge`). No path leaves the
target root and no link in it is followed, on render or on import.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tackroom.adapters import templates
from tackroom.errors import ProfileError, TackroomError, UnsafePathError
from tackroom.paths import Transaction, inside, read_inside
from tackroom.profile import jsonc
from tackroom.profile.engines import engine
from tackroom.profile.engines.base import Context, Drop, Engine, Kind, Output, Passthrough
from tackroom.profile.load import check_item_name
from tackroom.profile.merge import Settings
from tackroom.profile.model import Native, Permissions, Profile
from tackroom.profile.owned import OWNED, Owned, digest, read_owned

if TYPE_CHECKING:
    from tackroom.adapters.resolve import Adapter

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
        path = _target(capability, scope, root, workdir or root, adapter)
        if path is None:
            why = f"no project-level {kind.replace('_', '-')}"
            drops += [
                Drop(adapter.harness, _SINGULAR[kind], n, why) for i in items for n in item_names(kind, i)
            ]
            continue
        ctx = Context(adapter, kind, capability, path, drops)
        outputs += engine(capability.render).render(ctx, items)
    return Rendered(adapter.name, tuple(outputs), tuple(drops), root)


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

    The files are outside input: no link under ``root`` is followed (one is an
    error naming it, and nothing is imported). Everything else is total: each
    item found is imported, kept as passthrough, or dropped by name with the
    reason; a file that does not parse or has an unexpected shape is dropped
    with its file (and line) and the import goes on; a name read from the files
    (a frontmatter ``name``, a settings key, a file stem) that cannot be a
    profile name is dropped, since it becomes a path; and each imported item is
    proven to load as a profile item (an inline secret, say, is dropped).
    """
    found: dict[str, dict[str, Any]] = {attr: {} for attr in KINDS.values()}
    drops: list[Drop] = []
    passed: list[Passthrough] = []
    settings: dict[str, Any] = {}
    files: dict[str, bytes] = {}
    for kind, attr in KINDS.items():
        capability = getattr(adapter.spec.capabilities, kind)
        if capability is None:
            continue
        for raw in (capability.path if scope == "home" else capability.project, *capability.also):
            if raw is None:
                continue
            path = _target(capability, scope, root, workdir or root, adapter, raw)
            if path is None:
                continue
            ctx = Context(
                adapter, kind, _no_links(root, path, capability), path, drops, passed, settings, files
            )
            for item in _parse(ctx, engine(capability.render)):
                key = item[0] if kind == "env" else getattr(item, "name", kind)
                if key in found[attr]:
                    drops.append(
                        Drop(
                            adapter.harness,
                            _SINGULAR[kind],
                            str(key),
                            f"also defined in {path}: kept the first",
                        )
                    )
                else:
                    found[attr][key] = item

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
    return Imported(adapter.name, profile, tuple(drops), tuple(passed))


def _no_links(root: Path, path: Path, capability: Any) -> Any:
    """``capability``, once nothing at or below ``path`` is a link or a special file (it would be read)."""
    proven = inside(root, path)
    if not proven.exists():
        return capability
    if proven.is_file():
        read_inside(root, proven)  # refuses a FIFO, a device, a link
        return capability
    for directory, dirs, files in os.walk(proven):
        for name in (*dirs, *files):
            entry = Path(directory, name)
            if entry.is_symlink():
                raise UnsafePathError(f"{str(entry)!r} is a symbolic link; tackroom imports no link")
            if not (entry.is_dir() or entry.is_file()):
                raise UnsafePathError(f"{str(entry)!r} is not a regular file")
    return capability


def _parse(ctx: Context, renderer: Engine) -> list[Any]:
    """What the engine reads back, each item fit to become a profile file that loads.

    Import is total: a file the engine cannot read is dropped by name with the
    reason (and the import goes on); so is an item whose name cannot be a
    profile name, or one the profile loader would refuse (an inline secret, a
    bad tool reference). Only a link or a special file stops the import.
    """
    import yaml

    singular = _SINGULAR[ctx.kind]
    try:
        items = renderer.parse(ctx)
    except UnsafePathError:
        raise
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
    return [item for item in named if _loads(ctx, item)]


def _loads(ctx: Context, item: Any) -> bool:
    """Whether one imported item, written as a profile, loads back; else it is dropped with why."""
    import tempfile

    from tackroom.errors import ConfigError
    from tackroom.profile.load import load_profile
    from tackroom.profile.write import profile_files

    attr = KINDS[ctx.kind]
    value: Any = item if ctx.kind == "permissions" else (item,)
    try:
        files = profile_files(Profile(**{attr: value}))
    except (ValueError, TypeError, AttributeError) as exc:
        problems = [f"cannot be written as a profile ({type(exc).__name__})"]
    else:
        with tempfile.TemporaryDirectory() as tmp:
            transaction = Transaction(Path(tmp))
            for rel, data in files.items():
                transaction.put(rel, data)
            try:
                transaction.commit()
                load_profile([Path(tmp)])
                return True
            except (ConfigError, UnsafePathError, OSError) as exc:
                found = getattr(exc, "problems", ())
                problems = [f"{p.key}: {p.message}" if p.key else p.message for p in found] or [str(exc)]
    names = item_names(ctx.kind, item)
    for name in names:
        ctx.drop(_SINGULAR[ctx.kind], name, f"{ctx.path}: not a profile item: {'; '.join(problems)[:400]}")
    return False


def referenced_variables(profile: Profile) -> list[str]:
    """Variables the profile's MCP servers and hook commands reference as ``${VAR}``."""
    texts = [s.command or "" for s in profile.mcp] + [a for s in profile.mcp for a in s.args]
    texts += [v for s in profile.mcp for _, v in (*s.env, *s.headers)] + [s.url or "" for s in profile.mcp]
    texts += [h.command or "" for h in profile.hooks]
    return sorted({m.group(1) for text in texts for m in templates.ENV_REF.finditer(text)})


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
    """Write a render, all of it or none of it, recording what tackroom owns.

    Everything is checked and prepared before the first byte is written: each
    target proven inside the root with no link on the way, each existing file
    read as the harness reads it, each conflict collected (a file or a
    same-name entry tackroom did not write). Then every file, and the
    ownership record, is replaced atomically; if one write fails, the files
    already replaced get their old content back.
    """
    root = rendered.root
    owned = read_owned(root)
    files = Transaction(root)
    conflicts: list[str] = []
    for path, outputs in _by_path(rendered.outputs).items():
        data, problems = _prepare(root, path, outputs, owned)
        conflicts += problems
        if data is not None:
            files.put(path, data)
    if conflicts:
        raise ProfileError("not writing anything: " + "; ".join(conflicts))
    written = list(files.files)
    files.put(OWNED, owned.dump())
    try:
        files.commit()
    except OSError as exc:
        where = exc.filename or root
        raise ProfileError(
            f"could not write {where}: {exc.strerror or exc}; nothing was changed (files already written "
            "were put back)"
        ) from exc
    return Rendered(rendered.adapter, rendered.outputs, rendered.drops, root, tuple(written))


def _by_path(outputs: Sequence[Output]) -> dict[Path, list[Output]]:
    grouped: dict[Path, list[Output]] = {}
    for output in outputs:
        grouped.setdefault(output.path, []).append(output)
    return grouped


def _prepare(root: Path, path: Path, outputs: list[Output], owned: Owned) -> tuple[bytes | None, list[str]]:
    """One file's new bytes (None when it cannot be written) and its conflicts, read from what is there."""
    target = inside(root, path)
    rel = target.relative_to(inside(root)).as_posix()
    existing = read_inside(root, rel)
    merges = [o for o in outputs if o.merge]
    if not merges:
        whole = outputs[-1]
        data = _whole(whole)
        if existing is not None and existing != data and not owned.owns_file(rel, existing):
            return None, [
                f"{target} exists and tackroom does not own it (move it aside, or render into an "
                "isolated home or another directory with --into)"
            ]
        owned.files[rel] = digest(data)
        return data, []
    settings = Settings.read(target, rel, merges[0].format, existing)
    for output in merges:
        settings.merge(dict(output.data or {}), owned)
    if settings.conflicts:
        return None, [f"{target}: {c}" for c in settings.conflicts]
    return settings.dump(), []


def _whole(output: Output) -> bytes:
    """The bytes of a file tackroom owns whole."""
    content = _dump(output.format, dict(output.data)) if output.data is not None else output.text or ""
    return content if isinstance(content, bytes) else content.encode("utf-8")


def _dump(fmt: str, data: dict[str, Any]) -> str:
    if fmt == "toml":
        import tomli_w

        return tomli_w.dumps(data)
    return jsonc.dumps(data) + "\n"
