"""``.tackroom-owned.json``: what tackroom wrote under a render target, so it never overwrites anything else.

::

    {"version": 3,
     "adapters": {"<adapter>": {
        "files":   {"<path under the root>": "<sha256 of the whole file>"},
        "entries": {"<path>": {"mcpServers": {"<name>": "<sha256 of the entry>"}}},
        "items":   {"<path>": {"permissions": {"allow": ["<sha256 of one list item>"]}}},
        "keys":    {"<path>": {"<top-level key>": "<sha256 of its value>"}}}}}

Each adapter rendered into the root has its own claims, so rendering one
harness never takes away what another's render wrote there. A whole file may
be replaced when it is missing or still has the digest tackroom recorded; an
entry of a settings file shared with the user (an MCP server), an item of a
list in it (a permission rule) or a top-level key may be replaced when it is
missing, identical, or still has the recorded digest. Anything else was
written or changed by someone else, and a render stops, naming it. A claim the
next render no longer makes is removed from the disk when what is there still
has the recorded digest, and left alone (and reported) otherwise.

The record is outside input too: one that does not parse is an error naming
it, never a traceback and never a reason to assume ownership. Versions 1 (a
flat map of absolute path to digest) and 2 (``files`` and ``entries``, not per
adapter) are still read; their claims belong to no adapter in particular
(:data:`LEGACY`) and pass to whichever adapter renders next.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tackroom._hash import sha256
from tackroom.errors import ProfileError
from tackroom.paths import inside, read_inside

OWNED = ".tackroom-owned.json"
VERSION = 3
LEGACY = ""
"""The adapter name of claims read from a version 1 or 2 record."""


def digest(data: bytes) -> str:
    return sha256(data).hexdigest()


def entry_digest(value: Any) -> str:
    """The digest of one settings entry, independent of key order and formatting."""
    return digest(json.dumps(value, sort_keys=True, ensure_ascii=True, default=str).encode("ascii"))


@dataclass
class Owned:
    """What one adapter's render (or, merged, every render) wrote under one root."""

    files: dict[str, str] = field(default_factory=dict)
    entries: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)
    items: dict[str, dict[str, dict[str, list[str]]]] = field(default_factory=dict)
    keys: dict[str, dict[str, str]] = field(default_factory=dict)

    def owns_file(self, rel: str, content: bytes) -> bool:
        return self.files.get(rel) == digest(content)

    def owns_entry(self, rel: str, table: str, name: str, value: Any) -> bool:
        return self.entries.get(rel, {}).get(table, {}).get(name) == entry_digest(value)

    def record_entry(self, rel: str, table: str, name: str, value: Any) -> None:
        self.entries.setdefault(rel, {}).setdefault(table, {})[name] = entry_digest(value)

    def owns_item(self, rel: str, table: str, name: str, item: Any) -> bool:
        return entry_digest(item) in self.items.get(rel, {}).get(table, {}).get(name, [])

    def record_item(self, rel: str, table: str, name: str, item: Any) -> None:
        found = self.items.setdefault(rel, {}).setdefault(table, {}).setdefault(name, [])
        if entry_digest(item) not in found:
            found.append(entry_digest(item))

    def owns_key(self, rel: str, key: str, value: Any) -> bool:
        return self.keys.get(rel, {}).get(key) == entry_digest(value)

    def record_key(self, rel: str, key: str, value: Any) -> None:
        self.keys.setdefault(rel, {})[key] = entry_digest(value)

    def merged(self) -> set[str]:
        """The settings files this holds claims in."""
        return {*self.entries, *self.items, *self.keys}

    def __bool__(self) -> bool:
        return bool(self.files or self.merged())

    def update(self, other: Owned) -> None:
        """Add ``other``'s claims to these."""
        self.files.update(other.files)
        for rel, tables in other.entries.items():
            for table, names in tables.items():
                self.entries.setdefault(rel, {}).setdefault(table, {}).update(names)
        for rel, lists in other.items.items():
            for table, listed in lists.items():
                for name, digests in listed.items():
                    found = self.items.setdefault(rel, {}).setdefault(table, {}).setdefault(name, [])
                    found += [d for d in digests if d not in found]
        for rel, keys in other.keys.items():
            self.keys.setdefault(rel, {}).update(keys)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"files": self.files, "entries": self.entries}
        return (
            data | ({"items": self.items} if self.items else {}) | ({"keys": self.keys} if self.keys else {})
        )


@dataclass
class Record:
    """Every adapter's claims under one root."""

    adapters: dict[str, Owned] = field(default_factory=dict)

    def all(self, *, but: frozenset[str] = frozenset()) -> Owned:
        """The claims of every adapter (except those in ``but``), merged."""
        merged = Owned()
        for name, claims in sorted(self.adapters.items()):
            if name not in but:
                merged.update(claims)
        return merged

    def claimants(self, rel: str, *, but: frozenset[str] = frozenset()) -> list[str]:
        """The adapters (except ``but``) that own the whole file ``rel``."""
        return sorted(n for n, c in self.adapters.items() if rel in c.files and n not in but and n)

    def dump(self) -> bytes:
        data = {
            "version": VERSION,
            "adapters": {name: claims.to_json() for name, claims in sorted(self.adapters.items()) if claims},
        }
        return (json.dumps(data, indent=2, sort_keys=True) + "\n").encode("utf-8")


def read_owned(root: Path) -> Owned:
    """Every claim under ``root``, merged (empty when there is no record)."""
    return read_record(root).all()


def read_record(root: Path) -> Record:
    """The record under ``root`` (empty when there is none); a corrupt one is a :class:`ProfileError`."""
    path = inside(root, OWNED)
    raw = read_inside(root, OWNED)
    if raw is None:
        return Record()
    fix = "move it aside to start over (tackroom will then treat every file already there as not its own)"
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        raise ProfileError(f"{path}: not an ownership record tackroom wrote ({exc}); {fix}") from exc
    record = _parse(root, data)
    if record is None:
        raise ProfileError(f"{path}: not an ownership record tackroom wrote (unexpected shape); {fix}")
    return record


def _parse(root: Path, data: Any) -> Record | None:
    if not isinstance(data, dict):
        return None
    if "version" not in data:
        legacy = _version_1(root, data)
        return None if legacy is None else Record({LEGACY: legacy} if legacy else {})
    if data.get("version") == 2:
        claims = _claims({"files": data.get("files"), "entries": data.get("entries")})
        return None if claims is None else Record({LEGACY: claims} if claims else {})
    adapters = data.get("adapters")
    if data.get("version") != VERSION or not isinstance(adapters, dict):
        return None
    record = Record()
    for name, value in adapters.items():
        claims = _claims(value)
        if claims is None or not name:
            return None
        record.adapters[name] = claims
    return record


def _claims(data: Any) -> Owned | None:
    if not isinstance(data, dict) or set(data) - {"files", "entries", "items", "keys"}:
        return None
    files: Any = data.get("files", {})
    entries: Any = data.get("entries", {})
    items: Any = data.get("items", {})
    keys: Any = data.get("keys", {})
    if not _strings(files) or not isinstance(entries, dict) or not isinstance(items, dict):
        return None
    if not isinstance(keys, dict) or not all(_strings(k) for k in keys.values()):
        return None
    if not all(_relative(rel) for table in (files, entries, items, keys) for rel in table):
        return None
    for tables in entries.values():
        if not isinstance(tables, dict) or not all(_strings(t) for t in tables.values()):
            return None
    for lists in items.values():
        if not isinstance(lists, dict) or not all(isinstance(t, dict) for t in lists.values()):
            return None
        for names in lists.values():
            if not all(isinstance(d, list) and all(isinstance(x, str) for x in d) for d in names.values()):
                return None
    return Owned(
        dict(files),
        {k: {t: dict(n) for t, n in v.items()} for k, v in entries.items()},
        {k: {t: {n: list(d) for n, d in names.items()} for t, names in v.items()} for k, v in items.items()},
        {k: dict(v) for k, v in keys.items()},
    )


def _version_1(root: Path, data: dict[str, Any]) -> Owned | None:
    """A flat map of absolute path to digest; paths outside the root are ignored."""
    if not all(isinstance(v, str) for v in data.values()):
        return None
    base = inside(root)
    files = {}
    for key, value in data.items():
        path = Path(key)
        if path.is_absolute() and (path == base or base in path.parents):
            files[path.relative_to(base).as_posix()] = value
    return Owned(files)


def _relative(rel: str) -> bool:
    """A path the record may name: under the root, never leaving it."""
    parts = rel.split("/")
    return bool(rel) and not rel.startswith("/") and "\\" not in rel and ".." not in parts and "" not in parts


def _strings(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
