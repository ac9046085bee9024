"""Where imported items came from, so rendering them back into the same harness gives the same files.

The neutral profile says what a rule, an agent or a hook is, not how its native
file was spelled: the file's own path (``.claude/rules/frontend/react.md``, a
skill folder named otherwise than its skill), the order and quoting of its
frontmatter, its line ends, a settings file's layout. An import records each
file an item was read from as an :class:`~tackroom.profile.model.Origin`, with a
digest of each item and, where the usual render would write other bytes, the
lines that differ from what its items render to (a
:class:`~tackroom.profile.model.Patch`, checked by the file's digest), or the
whole file where that is no smaller. A render for the same adapter and scope
then writes the file as it was while every item read from it is still there
and unchanged; an edited or removed item, an item added to the same file, or a
render for another harness renders as usual. A file an item of which the
import dropped (or a settings file it dropped anything of), and one that holds
a literal secret, gets no origin: writing it back would bring back what the
import left out on purpose. A frontmatter key tackroom has no word for is the
harness's own, and comes back with its file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import fields, is_dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any

from tackroom._hash import sha256
from tackroom.profile.engines.base import Drop, Output
from tackroom.profile.model import Origin, Patch, Permissions, Profile
from tackroom.redact import inline_secret

Key = tuple[str, str]
"""(profile attribute, item name): ``("rules", "api")``, ``("env", "DEBUG")``, ``("native", "model")``."""
Render = Callable[[Profile], tuple[list[Output], list[Drop]]]
"""Renders a profile (for one adapter, scope and root): its outputs and drops."""
Whole = Callable[[Output], bytes]
"""The bytes of a file an output is whole."""
ATTRS = ("rules", "skills", "agents", "commands", "mcp", "hooks")


def digest(value: Any) -> str:
    """A digest of what an item says (its compared fields), the same wherever it was loaded from."""
    text = json.dumps(_plain(value), sort_keys=True, ensure_ascii=True, separators=(",", ":"), default=repr)
    return sha256(text.encode("ascii")).hexdigest()[:32]


def _plain(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value) if f.compare}
    if isinstance(value, bytes):
        return {"bytes": value.hex()}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def items(profile: Profile) -> dict[Key, Any]:
    """Every item of ``profile`` by key (native settings of every harness it holds)."""
    found: dict[Key, Any] = {(attr, i.name): i for attr in ATTRS for i in getattr(profile, attr)}
    if profile.permissions:
        found["permissions", "permissions"] = profile.permissions
    found.update({("env", name): value for name, value in profile.env})
    found.update({("native", k): v for n in profile.native for k, v in n.settings})
    return found


def safe_path(rel: str) -> bool:
    """Whether ``rel`` may name an origin's file: relative, ``/``-separated, never climbing out."""
    path = PurePosixPath(rel)
    return (
        bool(rel)
        and "\\" not in rel
        and not path.is_absolute()
        and ".." not in path.parts
        and "\0" not in rel
    )


def _rel(root: Path, path: Path) -> str | None:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return None


def collect(
    profile: Profile,
    *,
    adapter: str,
    harness: str,
    scope: str,
    root: Path,
    read: Iterable[tuple[Key, Path]],
    drops: Sequence[Drop],
    lossy: set[Path],
    fresh: Mapping[str, bytes | None],
    render: Render,
    whole: Whole,
) -> tuple[Origin, ...]:
    """Import: the origins of ``profile``'s items (``read``: each item's key and a file it came from).

    ``lossy`` are files (settings files, rules documents) the import dropped something of.

    ``fresh`` is what the usual render writes at each path (None for a settings file merged into):
    an origin keeps its file's bytes only where they differ, and then as a :class:`Patch` to what
    its items render to (``render``, ``whole``) where that is smaller.
    """
    known = items(profile)
    by_path: dict[Path, set[Key]] = {}
    for key, path in read:
        if key in known:
            by_path.setdefault(path, set()).add(key)
    origins: list[tuple[Path, Origin]] = []
    for path, keys in sorted(by_path.items()):
        rel = _rel(root, path)
        merged = fresh.get(rel or "", b"") is None
        if rel is None or not safe_path(rel) or path in lossy or _lost(drops, path, keys, merged=merged):
            continue
        try:
            data = path.read_bytes()
        except OSError:
            continue
        said = tuple(sorted((a, n, digest(known[a, n])) for a, n in keys))
        if rel in fresh and fresh[rel] == data:
            origins.append((path, Origin(adapter, harness, scope, rel, said)))
            continue
        if inline_secret(data.decode("utf-8", "replace")):
            continue  # a literal secret never reaches the profile, even as a file's bytes
        base = None if merged else _base(render(_pick(profile, keys, keep=True))[0], root, rel, whole)
        patch = diff(base, data) if base is not None else None
        origins.append((path, Origin(adapter, harness, scope, rel, said, None if patch else data, patch)))
    return _whole_items(origins, by_path)


def _whole_items(origins: list[tuple[Path, Origin]], by_path: Mapping[Path, set[Key]]) -> tuple[Origin, ...]:
    """The origins of items every file of which has one: an item (a skill) with a file that has none
    (one holding a literal secret) renders as usual, every file of it, never only some."""
    while True:
        covered = {path for path, _ in origins}
        partial = {key for path, keys in by_path.items() if path not in covered for key in keys}
        kept = [(p, o) for p, o in origins if not any((a, n) in partial for a, n, _ in o.items)]
        if len(kept) == len(origins):
            return tuple(o for _, o in origins)
        origins = kept


def _base(outputs: Sequence[Output], root: Path, rel: str, whole: Whole) -> bytes | None:
    """What an origin's items render to that its file is nearest: the file of its name whose
    path ends most like it (a skill's ``reference.md``), or their one file (a rule in a document)."""
    files = [o for o in outputs if not o.merge]
    parts = PurePosixPath(rel).parts
    named = [o for o in files if o.path.name == parts[-1]]

    def common(output: Output) -> int:
        theirs = output.path.parts
        return next((n for n in range(1, len(parts) + 1) if theirs[-n:] != parts[-n:]), len(parts) + 1)

    if named:
        ranked = sorted(named, key=common, reverse=True)
        if len(ranked) > 1 and common(ranked[0]) == common(ranked[1]):
            return None
        return whole(ranked[0])
    return whole(files[0]) if len(files) == 1 else None


_MAX_DIFF = 4_000_000
"""Lines compared at most (rendered x native) before a file is kept whole instead."""


def diff(base: bytes, data: bytes) -> Patch | None:
    """``data`` as the lines that differ from ``base`` (BOM and CRLF apart); None where it is no smaller."""
    try:
        text, rendered = data.decode("utf-8"), base.decode("utf-8")
    except UnicodeDecodeError:
        return None
    bom = text.startswith("\ufeff")
    text = text.removeprefix("\ufeff")
    crlf = "\r\n" in text and "\n" not in text.replace("\r\n", "")
    lines, ours = (text.replace("\r\n", "\n") if crlf else text).split("\n"), rendered.split("\n")
    if len(lines) * len(ours) > _MAX_DIFF:
        return None
    import difflib  # an import's patch only: a render never diffs

    matcher = difflib.SequenceMatcher(None, ours, lines, autojunk=False)
    edits = tuple(
        (i1, i2, tuple(lines[j1:j2])) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"
    )
    patch = Patch(edits, sha256(data).hexdigest(), bom, crlf)
    if (
        sum(len(line) + 1 for _, _, new in edits for line in new) * 2 > len(text)
        or apply(base, patch) != data
    ):
        return None
    return patch


def apply(base: bytes, patch: Patch) -> bytes | None:
    """The file a patch says, on ``base``; None when that is not the file it was made from."""
    try:
        ours = base.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        return None
    lines: list[str] = []
    at = 0
    for first, end, new in patch.edits:
        if not at <= first <= end <= len(ours):
            return None
        lines += [*ours[at:first], *new]
        at = end
    text = "\n".join([*lines, *ours[at:]])
    data = (("\ufeff" if patch.bom else "") + (text.replace("\n", "\r\n") if patch.crlf else text)).encode()
    return data if sha256(data).hexdigest() == patch.sha256 else None


def _lost(drops: Sequence[Drop], path: Path, keys: set[Key], *, merged: bool) -> bool:
    """Whether writing the file back would bring back an item the import left out.

    An item dropped from the file (a drop that names it) does, and so does anything dropped of
    a settings file. A field dropped from an item of a file of its own (a frontmatter key tackroom
    has no word for) is the harness's own and comes back with its file.
    """
    names = {name for _, name in keys}
    named = re.compile(re.escape(str(path)) + r"(?![\w.-])")
    for drop in drops:
        if drop.field is not None and not merged:
            continue
        if named.search(drop.reason) or (drop.field is not None and drop.name in names):
            return True
    return False


def render(
    mine: Profile, origins: Sequence[Origin], render: Render, root: Path, whole_bytes: Whole
) -> tuple[list[Output], list[Drop]]:
    """The outputs of rendering ``mine`` (one adapter's view of a profile), its origins' files as they were.

    A file each of whose items is unchanged is written as it was, in place of
    what the items would render to; so is a settings file merged into, when it
    does not exist yet (or is as it was) and no other item is merged into it. An
    item read from two files renders as usual, and so does a file whose path
    another item now renders to.
    """
    digests = {key: digest(value) for key, value in items(mine).items()}
    intact = [o for o in origins if all(digests.get((a, n)) == d for a, n, d in o.items)]
    outputs, drops = render(mine)
    if not intact:
        return outputs, drops
    merged = {_rel(root, o.path) for o in outputs if o.merge}
    bases = {o.path: o.data for o in intact if o.path in merged and _alone(mine, o, render, root)}
    whole = _every_file(mine, [o for o in intact if o.path not in merged])
    while whole:
        held = {(a, n) for o in whole for a, n, _ in o.items}
        elsewhere = {(a, n) for o in origins if o not in whole for a, n, _ in o.items}
        alone = [o for o in whole if not any((a, n) in elsewhere for a, n, _ in o.items)]
        if alone != whole:
            whole = alone
            continue
        rest, rest_drops = render(_pick(mine, held, keep=False))
        part, _ = render(_pick(mine, held, keep=True))
        taken = {_rel(root, o.path) for o in rest}
        same = {_rel(root, o.path): o for o in part if not o.merge}
        files = {o.path: _file(o, mine, render, root, same, whole_bytes) for o in whole}
        bad = [o for o in whole if o.path in taken or files[o.path] is None]
        # What the held items merge into a file no origin and no other item writes (codex's hook
        # trust in config.toml, beside the hooks.json read back) is merged as usual.
        merged_too = [o for o in part if o.merge and _rel(root, o.path) not in (*files, *taken)]
        if not bad:
            written = [f for f in files.values() if f is not None]
            return [_based(o, root, bases) for o in rest] + written + merged_too, rest_drops
        whole = [o for o in whole if o not in bad]
    return [_based(o, root, bases) for o in outputs], drops


def _every_file(mine: Profile, whole: list[Origin]) -> list[Origin]:
    """The origins but those of a skill some file of which none of them writes (it renders as usual)."""
    files = {("skills", s.name): 1 + len(s.files) for s in mine.skills}
    count: dict[tuple[str, str], int] = {}
    for origin in whole:
        for a, n, _ in origin.items:
            count[a, n] = count.get((a, n), 0) + 1
    short = {key for key, n in count.items() if key in files and n != files[key]}
    return [o for o in whole if not any((a, n) in short for a, n, _ in o.items)]


def _file(
    origin: Origin, mine: Profile, render: Render, root: Path, same: Mapping[str | None, Output], whole: Whole
) -> Output | None:
    """The file an intact origin writes back (None: it cannot say it, and its items render as usual)."""
    if origin.data is not None:
        return Output(root / origin.path, origin.data)
    if origin.patch is None:
        return same.get(origin.path)
    keys = {(a, n) for a, n, _ in origin.items}
    base = _base(render(_pick(mine, keys, keep=True))[0], root, origin.path, whole)
    data = apply(base, origin.patch) if base is not None else None
    return Output(root / origin.path, data) if data is not None else None


def _alone(mine: Profile, origin: Origin, render: Render, root: Path) -> bool:
    """Whether the settings file ``origin`` is merged into holds only its own items (and its bytes)."""
    if origin.data is None:
        return False
    others, _ = render(_pick(mine, {(a, n) for a, n, _ in origin.items}, keep=False))
    return all(_rel(root, o.path) != origin.path for o in others)


def _based(output: Output, root: Path, bases: Mapping[str, bytes | None]) -> Output:
    base = bases.get(_rel(root, output.path) or "") if output.merge else None
    return replace(output, base=base) if base is not None else output


def _pick(profile: Profile, held: set[Key], *, keep: bool) -> Profile:
    """The items of ``profile`` whose key is in ``held`` (``keep``), or those whose key is not."""

    def pick(attr: str) -> tuple[Any, ...]:
        return tuple(i for i in getattr(profile, attr) if ((attr, i.name) in held) == keep)

    permissions = profile.permissions if (("permissions", "permissions") in held) == keep else Permissions()
    native = tuple(
        replace(
            n,
            settings=tuple((k, v) for k, v in n.settings if (("native", k) in held) == keep),
            files=() if keep else n.files,
        )
        for n in profile.native
    )
    return Profile(
        rules=pick("rules"),
        skills=pick("skills"),
        agents=pick("agents"),
        commands=pick("commands"),
        mcp=pick("mcp"),
        hooks=pick("hooks"),
        permissions=permissions,
        env=tuple((k, v) for k, v in profile.env if (("env", k) in held) == keep),
        native=tuple(n for n in native if n.settings or n.files),
    )
