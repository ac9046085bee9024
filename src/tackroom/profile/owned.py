"""``.tackroom-owned.json``: what tackroom wrote under a render target, so it never overwrites anything else.

::

    {"version": 2,
     "files":   {"<path under the root>": "<sha256 of the whole file>"},
     "entries": {"<path under the root>": {"mcpServers": {"<name>": "<sha256 of the entry>"}}}}

A whole file may be replaced when it is missing or still has the digest
tackroom recorded; an entry of a settings file shared with the user (an MCP
server) may be replaced when it is missing, identical, or still has the
recorded digest. Anything else was written or changed by someone else, and a
render stops, naming it. The record is outside input too: one that does not
parse is an error naming it, never a traceback and never a reason to assume
ownership. Version 1 (a flat map of absolute path to digest) is still read.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tackroom.errors import ProfileError
from tackroom.paths import inside, read_inside

OWNED = ".tackroom-owned.json"
VERSION = 2


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def entry_digest(value: Any) -> str:
    """The digest of one settings entry, independent of key order and formatting."""
    return digest(json.dumps(value, sort_keys=True, ensure_ascii=True, default=str).encode("ascii"))


@dataclass
class Owned:
    """The record of one render target."""

    files: dict[str, str] = field(default_factory=dict)
    entries: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)

    def owns_file(self, rel: str, content: bytes) -> bool:
        return self.files.get(rel) == digest(content)

    def owns_entry(self, rel: str, table: str, name: str, value: Any) -> bool:
        return self.entries.get(rel, {}).get(table, {}).get(name) == entry_digest(value)

    def record_entry(self, rel: str, table: str, name: str, value: Any) -> None:
        self.entries.setdefault(rel, {}).setdefault(table, {})[name] = entry_digest(value)

    def dump(self) -> bytes:
        data = {"version": VERSION, "files": self.files, "entries": self.entries}
        return (json.dumps(data, indent=2, sort_keys=True) + "\n").encode("utf-8")


def read_owned(root: Path) -> Owned:
    """The record under ``root`` (empty when there is none); a corrupt one is a :class:`ProfileError`."""
    path = inside(root, OWNED)
    raw = read_inside(root, OWNED)
    if raw is None:
        return Owned()
    fix = "move it aside to start over (tackroom will then treat every file already there as not its own)"
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        raise ProfileError(f"{path}: not an ownership record tackroom wrote ({exc}); {fix}") from exc
    owned = _parse(root, data)
    if owned is None:
        raise ProfileError(f"{path}: not an ownership record tackroom wrote (unexpected shape); {fix}")
    return owned


def _parse(root: Path, data: Any) -> Owned | None:
    if not isinstance(data, dict):
        return None
    if "version" not in data:
        return _version_1(root, data)
    files: Any = data.get("files")
    entries: Any = data.get("entries")
    if data.get("version") != VERSION or not _strings(files) or not isinstance(entries, dict):
        return None
    for tables in entries.values():
        if not isinstance(tables, dict) or not all(_strings(t) for t in tables.values()):
            return None
    return Owned(dict(files), {k: {t: dict(n) for t, n in v.items()} for k, v in entries.items()})


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


def _strings(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
