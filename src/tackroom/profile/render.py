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
from tackroom.profile.engines.base import Context, Drop, Engine, Kind, Output
from tackroom.profile.load import check_profile_name
from tackroom.profile.merge import Settings
from tackroom.profile.model import Profile
from tackroom.profile.owned import OWNED, Owned, digest, read_owned

if TYPE_CHECKING:
    from tackroom.adapters.resolve import Adapter

Scope = Literal["home", "project"]
KINDS: dict[Kind, str] = {
    "rules": "rules",
    "skills": "skills",
    "mcp": "mcp",
    "commands": "commands",
    "subagents": "agents",
    "hooks": "hooks",
}
_SINGULAR = {
    "rules": "rule",
    "skills": "skill",
    "mcp": "MCP server",
    "commands": "command",
    "subagents": "subagent",
    "hooks": "hook",
}


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
    for kind, attr in KINDS.items():
        items = getattr(mine, attr)
        capability = getattr(caps, kind)
        if not items:
            continue
        if capability is None:
            drops += [Drop(adapter.harness, _SINGULAR[kind], i.name, f"no {kind} capability") for i in items]
            continue
        path = _target(capability, scope, root, workdir or root, adapter)
        if path is None:
            drops += [
                Drop(adapter.harness, _SINGULAR[kind], i.name, f"no project-level {kind}") for i in items
            ]
            continue
        ctx = Context(adapter, kind, capability, path, drops)
        outputs += engine(capability.render).render(ctx, items)
    return Rendered(adapter.name, tuple(outputs), tuple(drops), root)


def _check_names(profile: Profile) -> None:
    """Every item name becomes a path: one that is not a profile name is refused before anything else."""
    for kind, attr in KINDS.items():
        for item in getattr(profile, attr):
            if not check_profile_name(item.name):
                raise ProfileError(
                    f"{_SINGULAR[kind]} name {item.name[:80]!r} cannot be rendered: it becomes a file "
                    "name (lowercase letters, digits, '.', '_' and '-'; at most 128 characters)"
                )


def import_profile(
    adapter: Adapter, *, root: Path, scope: Scope = "home", workdir: Path | None = None
) -> Profile:
    """Read a harness's native files (under ``root``) back into a neutral profile.

    The files are outside input: no link under ``root`` is followed (one is an
    error naming it), a file that does not parse or has an unexpected shape is
    a :class:`ProfileError` naming it, and every name read from them (a
    frontmatter ``name``, a settings key, a file stem) must be a profile name,
    since it becomes a path when the profile is written.
    """
    found: dict[str, list[Any]] = {attr: [] for attr in KINDS.values()}
    for kind, attr in KINDS.items():
        capability = getattr(adapter.spec.capabilities, kind)
        if capability is None:
            continue
        path = _target(capability, scope, root, workdir or root, adapter)
        if path is not None:
            ctx = Context(adapter, kind, _no_links(root, path, capability), path)
            found[attr] = sorted(_parse(ctx, engine(capability.render)), key=lambda i: i.name)
    return Profile(
        rules=tuple(found["rules"]),
        skills=tuple(found["skills"]),
        agents=tuple(found["agents"]),
        commands=tuple(found["commands"]),
        mcp=tuple(found["mcp"]),
        hooks=tuple(found["hooks"]),
    )


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
    """What the engine reads back, as typed errors, with every name fit to become a path."""
    import yaml

    from tackroom.profile.write import profile_files

    singular = _SINGULAR[ctx.kind]
    try:
        items = renderer.parse(ctx)
        profile_files(Profile(**{KINDS[ctx.kind]: tuple(items)}))  # every item can be written back
    except TackroomError:
        raise
    except (
        ValueError,
        TypeError,
        AttributeError,
        KeyError,
        IndexError,
        RecursionError,
        OSError,
        yaml.YAMLError,
    ) as exc:
        raise ProfileError(
            f"cannot import {ctx.kind} from {ctx.path}: it is not in the shape tackroom reads "
            f"({type(exc).__name__}: {str(exc)[:200]}); fix or move it aside"
        ) from exc
    for item in items:
        if not isinstance(item.name, str) or not check_profile_name(item.name):
            raise ProfileError(
                f"cannot import from {ctx.path}: {singular} name {str(item.name)[:80]!r} cannot be a profile "
                "name (lowercase letters, digits, '.', '_' and '-'; at most 128 characters), since it "
                "becomes a file name; rename it there and import again"
            )
    return items


def referenced_variables(profile: Profile) -> list[str]:
    """Variables the profile's MCP servers and hook commands reference as ``${VAR}``."""
    texts = [s.command or "" for s in profile.mcp] + [a for s in profile.mcp for a in s.args]
    texts += [v for s in profile.mcp for _, v in (*s.env, *s.headers)] + [s.url or "" for s in profile.mcp]
    texts += [h.command or "" for h in profile.hooks]
    return sorted({m.group(1) for text in texts for m in templates.ENV_REF.finditer(text)})


def _target(capability: Any, scope: Scope, root: Path, workdir: Path, adapter: Adapter) -> Path | None:
    raw = capability.path if scope == "home" else capability.project
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
