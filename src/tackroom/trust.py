"""A stranger's repository runs nothing without the user's word.

What a project can make run: the hooks and MCP servers of its
``.tackroom/profile``, and the project config a harness loads once its own
folder-trust check is turned off (each adapter's ``[trust] project`` paths,
such as ``.gemini`` or ``.codex``). Those are used only after
``tackroom trust DIR``, as direnv does with ``.envrc``: the record keeps a
hash of everything it covers, and any change to it revokes the trust until
the user looks again. The user's global profile and a profile named on the
command line are the user's own word and need no trust.

The records themselves, and what a run may let its harness load, are in
:mod:`tackroom.trust_records` (re-exported here); this module adds what needs
the adapters and the profile: trusting a directory, and the default profile
with what is not trusted withheld.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tackroom.errors import ConfigError, Problem
from tackroom.trust_records import (
    PROFILE,
    NativeTrust,
    State,
    TrustRecord,
    TrustState,
    covered_paths,
    digest,
    directory_of,
    find_project,
    listing,
    named_files,
    native_trust,
    record_file,
    revoke,
    state_of,
    store_dir,
    write_record,
)

if TYPE_CHECKING:
    from tackroom.adapters.resolve import AdapterSet
    from tackroom.profile.model import Origin, Profile

__all__ = [
    "PROFILE",
    "NativeTrust",
    "State",
    "TrustRecord",
    "TrustState",
    "covered_paths",
    "default_profile",
    "digest",
    "find_project",
    "listing",
    "native_trust",
    "profile_place",
    "record_file",
    "revoke",
    "state_of",
    "store_dir",
    "trust",
]


def profile_place(workdir: Path) -> tuple[Path, str]:
    """(the directory a run in ``workdir`` takes its project profile from, the profile's path in it).

    The repository's project file may name the profile directory (``profile = "..."``,
    inside the repository); without one it is ``.tackroom/profile`` in ``workdir``.
    """
    from tackroom.project import load_project

    found = load_project(workdir)
    if found is None:
        return Path(os.path.realpath(workdir)), PROFILE
    root = Path(os.path.realpath(found.root))
    return root, Path(os.path.realpath(found.profile_dir)).relative_to(root).as_posix()


def trust(
    path: Path, *, environ: Mapping[str, str] | None = None, adapters: AdapterSet | None = None
) -> TrustRecord:
    """Trust the project at ``path`` (or the nearest parent, up to the repository root, that has one)."""
    adapters = adapters if adapters is not None else _adapters(path)
    covers = covered_paths(adapters.values(), profile_place(directory_of(path))[1])
    directory = find_project(path, covers)
    # The scripts its hooks and servers name are covered too: an edit to one revokes the trust.
    covers = (*covers, *named_files(directory, covers))
    record = TrustRecord(directory, digest(directory, covers), covers, time.time())
    write_record(store_dir(environ), record)
    return record


def default_profile(
    project: Path,
    *,
    config: Path | None = None,
    harnesses: Iterable[str] | None = None,
    environ: Mapping[str, str] | None = None,
    dirs: list[Path] | None = None,
) -> Profile:
    """The global profile layered under the project's, whose hooks and MCP servers need trust.

    Untrusted executable items are left out, each named in ``Profile.withheld``
    with the reason and the fix; everything else of the project (rules, skills,
    agents, commands) is used as it is. ``dirs`` are the layers'
    directories when the caller has looked them up already
    (:func:`~tackroom.profile.places.profile_dirs`).
    """
    from tackroom.adapters.resolve import config_dir
    from tackroom.profile.load import load_profile
    from tackroom.profile.places import profile_dirs

    config = config if config is not None else config_dir(environ)
    names = list(harnesses) if harnesses is not None else None
    dirs = profile_dirs(project, config) if dirs is None else dirs
    layers: list[Profile] = []
    problems: list[Problem] = []
    for directory in dirs:
        try:
            layer = load_profile([directory], harnesses=names)
        except ConfigError as exc:
            problems += exc.problems
            continue
        if directory != config / "profile":
            layer = _withhold(layer, directory, profile_place(project), environ)
        layers.append(layer)
    if problems:
        raise ConfigError(problems)
    return _layer(layers, tuple(str(d) for d in dirs))


def _withhold(
    layer: Profile, profile_dir: Path, place: tuple[Path, str], environ: Mapping[str, str] | None
) -> Profile:
    # What can run code or widen what the agent may do: hooks, MCP servers, the session
    # environment (NODE_OPTIONS runs code), native settings (a status line is a command),
    # and permission rules that allow or ask. A deny rule only narrows, so it always applies.
    widening = layer.permissions.allow or layer.permissions.ask
    # An import's origins write native files back as they were: bytes the profile does not hold.
    # Those of rules documents are text for the model; any other (an agent's frontmatter can carry
    # hooks, a settings file anything) is written back only from a trusted project.
    writes_back = [o for o in layer.origins if not _text_only(o)]
    if not (layer.hooks or layer.mcp or layer.env or layer.native or widening or writes_back):
        return layer
    root, relative = place
    state = state_of(root, environ)
    if state.covers(relative):
        return layer
    parts = [f"hook {h.name!r}" for h in layer.hooks] + [f"MCP server {s.name!r}" for s in layer.mcp]
    parts += ["its session env"] if layer.env else []
    parts += [f"native settings for {n.harness}" for n in layer.native]
    parts += ["its allow and ask permission rules"] if widening else []
    parts += [f"the imported bytes of {o.path} (rendered from its items instead)" for o in writes_back]
    note = (
        f"skipped {', '.join(parts)} of the project profile {profile_dir}: what a project's profile runs "
        f"or allows is used only after you trust it, and {state.why_not()}"
    )
    permissions = replace(layer.permissions, allow=(), ask=())
    origins = tuple(o for o in layer.origins if _text_only(o))
    return replace(
        layer,
        hooks=(),
        mcp=(),
        env=(),
        native=(),
        permissions=permissions,
        origins=origins,
        withheld=(*layer.withheld, note),
    )


def _text_only(origin: Origin) -> bool:
    """Whether an origin's file holds rules alone (a rules document: text for the model, never run)."""
    return bool(origin.items) and all(attr == "rules" for attr, _, _ in origin.items)


def _layer(layers: Sequence[Profile], sources: tuple[str, ...]) -> Profile:
    """Later layers replace earlier items of the same kind and name (as ``load_profile`` layers dirs)."""
    from tackroom.profile.model import Permissions, Profile

    kinds = ("rules", "skills", "agents", "commands", "mcp", "hooks", "native")
    merged: dict[str, dict[str, Any]] = {kind: {} for kind in kinds}
    env: dict[str, str] = {}
    permissions = Permissions()
    for layer in layers:
        for kind in kinds:
            merged[kind].update({item.name: item for item in getattr(layer, kind)})
        env.update(dict(layer.env))
        permissions = layer.permissions if layer.permissions else permissions
    picked = {kind: tuple(item for _, item in sorted(merged[kind].items())) for kind in kinds}
    withheld = tuple(note for layer in layers for note in layer.withheld)
    # A later layer's origin for the same file replaces an earlier one's, as its items do.
    origins = {(o.adapter, o.scope, o.path): o for layer in layers for o in layer.origins}
    return Profile(
        picked["rules"],
        picked["skills"],
        picked["agents"],
        picked["commands"],
        picked["mcp"],
        picked["hooks"],
        permissions,
        tuple(sorted(env.items())),
        picked["native"],
        origins=tuple(origins.values()),
        sources=sources,
        withheld=withheld,
    )


def _adapters(path: Path) -> AdapterSet:
    from tackroom.adapters.resolve import load_adapters

    return load_adapters(project=directory_of(path))
