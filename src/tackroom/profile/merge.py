"""Merge an engine's keys into a settings file the harness shares with the user, losing nothing of theirs.

An engine's merge output names tables and the entries in them
(``{"mcpServers": {"<name>": {...}}}``, ``{"hooks": {"<Event>": [groups]}}``).
The rules:

- An entry (a table value) is tackroom's whole: it replaces the entry of that
  name only when there is none, when it is identical, or when the ownership
  record says tackroom wrote exactly what is there. A same-name entry the user
  wrote is never replaced: the render stops and names it.
- A list (a hook event's groups, a permission verdict's rules) keeps the
  user's items and replaces only tackroom's own (a group marked
  ``# tackroom:hook``, or an item the ownership record names).
- A top-level value that is not a table is tackroom's when it is missing,
  identical, or recorded with the digest that is there.
- A value of another shape where a table or list goes is the user's, and
  stops the render.
- What tackroom wrote before and the render no longer produces
  (:meth:`Settings.remove_stale`) is taken out again when it is as tackroom
  wrote it, and left (and reported) when someone changed it since; a table
  left empty goes too, and a file left holding nothing at all is removed.

The file is read as the harnesses read it (JSON with comments and trailing
commas; TOML) and written back keeping what the user wrote: JSON comments
stay (the members tackroom sets are spliced into the text), and TOML is edited
with tomlkit, so comments and layout survive. A file that cannot be read is a
:class:`~tackroom.errors.ConfigError` naming it and the line.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tackroom.errors import ConfigError, Problem, ProfileError
from tackroom.profile import jsonc
from tackroom.profile.owned import Owned, entry_digest

Change = tuple[str, ...]


@dataclass
class Settings:
    """One settings file being merged into: its text as found, and its data as it will be."""

    path: Path
    rel: str
    format: str
    text: str | None
    data: dict[str, Any]
    changes: list[Change] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    removals: list[Change] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    """What tackroom wrote before, no longer renders, and left because someone changed it since."""
    raw: bytes | None = None
    before: Any = None

    def __post_init__(self) -> None:
        self.before = copy.deepcopy(self.data)

    @classmethod
    def read(cls, path: Path, rel: str, fmt: str, raw: bytes | None) -> Settings:
        """Parse what is on disk (``raw``; None when there is no file)."""
        found = cls._read(path, rel, fmt, raw)
        found.raw = raw
        return found

    @classmethod
    def _read(cls, path: Path, rel: str, fmt: str, raw: bytes | None) -> Settings:
        if raw is None:
            return cls(path, rel, fmt, None, {})
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = raw[: exc.start].count(b"\n") + 1
            raise ConfigError(
                [Problem(str(path), "", "not UTF-8: tackroom cannot merge into it", line)]
            ) from exc
        if not text.strip():
            return cls(path, rel, fmt, None, {})
        data = _parse_toml(path, text) if fmt == "toml" else _parse_json(path, text)
        if not isinstance(data, dict):
            raise ProfileError(
                f"{path}: holds a JSON {type(data).__name__}, not an object of settings; tackroom merges "
                "only into an object: fix or move the file aside"
            )
        return cls(path, rel, fmt, text, data)

    def merge(self, top: Mapping[str, Any], owned: Owned, record: Owned | None = None) -> None:
        """Fold an engine's keys in, recording conflicts and what tackroom now owns.

        ``owned`` says what tackroom wrote before (may be replaced); the claims
        of this render are recorded in ``record`` (default: ``owned``).
        """
        record = owned if record is None else record
        for key, value in top.items():
            old = self.data.get(key)
            if not isinstance(value, dict):
                if old is not None and old != value and not owned.owns_key(self.rel, key, old):
                    self.conflicts.append(f"{key!r} is already set to something else")
                    continue
                self.data[key] = value
                record.record_key(self.rel, key, value)
                self.changes.append((key,))
            elif old is not None and not isinstance(old, dict):
                self.conflicts.append(f"{key!r} is not a table")
            else:
                if old is None:  # absent, or null: nothing of the user's to keep
                    if key in self.data:
                        self.changes.append((key,))  # a null is replaced whole
                    self.data[key] = {}
                for name, entry in value.items():
                    self._entry(key, name, entry, owned, record)

    def _entry(self, key: str, name: str, entry: Any, owned: Owned, record: Owned) -> None:
        table = self.data[key]
        old = table.get(name)
        if isinstance(entry, list):
            if old is not None and not isinstance(old, list):
                if not owned.owns_entry(self.rel, key, name, old):
                    self.conflicts.append(f"{key}.{name} is not a list")
                    return
                old = None  # tackroom wrote it whole (a native file written back as it was)
            # What another output of this same render already put here (record) stays; what an
            # earlier render wrote (owned) is replaced by this output's items.
            users = [
                g
                for g in (old or [])
                if (record is not owned and record.owns_item(self.rel, key, name, g))
                or (not _ours(g) and not owned.owns_item(self.rel, key, name, g))
            ]
            # A hook imported from the user's own group comes back marked as tackroom's: where the
            # user's unmarked group already does exactly that, it stays the only copy (no hook twice).
            plain = {_canonical(g) for g in users}
            entry = [g for g in entry if not (_ours(g) and _canonical(_unmarked(g)) in plain)]
            for item in entry:
                if item not in users:  # one the user wrote too stays the user's
                    record.record_item(self.rel, key, name, item)
            entry = users + [item for item in entry if item not in users]
        elif old is not None and old != entry and not owned.owns_entry(self.rel, key, name, old):
            self.conflicts.append(
                f"{name!r} in {key!r} is already there and tackroom did not write it (rename it in "
                "the profile, or rename or remove yours)"
            )
            return
        else:
            record.record_entry(self.rel, key, name, entry)
        table[name] = entry
        self.changes.append((key, name))

    def remove_stale(self, before: Owned, now: Owned, others: Owned) -> None:
        """Take out what ``before`` claims here and neither ``now`` nor ``others`` does.

        Only what is still as tackroom wrote it goes; anything changed since is
        left and reported in :attr:`kept`. A hook group marked as tackroom's in
        a list no claim of ``now`` or ``others`` names goes too (records of
        version 2 did not list them).
        """
        rel = self.rel
        for table, names in sorted(before.entries.get(rel, {}).items()):
            for name, recorded in sorted(names.items()):
                if _claimed(now.entries, rel, table, name) or _claimed(others.entries, rel, table, name):
                    continue
                current = (
                    self.data.get(table, {}).get(name) if isinstance(self.data.get(table), dict) else None
                )
                if current is None:
                    continue
                if entry_digest(current) != recorded:
                    self.kept.append(
                        f"{self.path}: {table}.{name} changed since tackroom wrote it: left as it is"
                    )
                    continue
                del self.data[table][name]
                self._removed(table, name)
        for table, value in sorted(self.data.items()):
            if not isinstance(value, dict):
                continue
            for name, current in sorted(value.items()):
                if not isinstance(current, list):
                    continue
                stale = set(before.items.get(rel, {}).get(table, {}).get(name, []))
                stale -= {*now.items.get(rel, {}).get(table, {}).get(name, [])}
                stale -= {*others.items.get(rel, {}).get(table, {}).get(name, [])}
                named = _claimed(now.items, rel, table, name) or _claimed(others.items, rel, table, name)
                left = [i for i in current if entry_digest(i) not in stale and (named or not _ours(i))]
                if left == current:
                    continue
                if left:
                    value[name] = left
                    self.changes.append((table, name))
                else:
                    del value[name]
                    self._removed(table, name)
        for key, recorded in sorted(before.keys.get(rel, {}).items()):
            if key in now.keys.get(rel, {}) or key in others.keys.get(rel, {}) or key not in self.data:
                continue
            if entry_digest(self.data[key]) != recorded:
                self.kept.append(f"{self.path}: {key} changed since tackroom wrote it: left as it is")
                continue
            del self.data[key]
            self.removals.append((key,))

    def _removed(self, table: str, name: str) -> None:
        self.removals.append((table, name))
        if not self.data[table]:
            del self.data[table]
            self.removals.append((table,))

    @property
    def unchanged(self) -> bool:
        """Whether the data is what was read (the file is then not rewritten)."""
        return self.raw is not None and _canonical(self.data) == _canonical(self.before)

    def dump(self) -> bytes | None:
        """The file's new bytes: what the user wrote kept, tackroom's members set.

        The bytes read when nothing changed; None when removals left the file
        holding nothing at all (it is then removed).
        """
        if self.unchanged:
            return self.raw
        if self.format == "toml":
            text = self._toml()
            return None if self.removals and not self.data and not text.strip() else text.encode("utf-8")
        if self.text is None or not jsonc.has_comments(self.text):
            if self.removals and not self.data:
                return None
            return (jsonc.dumps(self.data) + "\n").encode("utf-8")
        text = self.text
        try:
            for removal in self.removals:
                if not any(removal[:n] in self.removals for n in range(1, len(removal))):
                    text = jsonc.remove_member(text, removal)
            for change in self._changed():
                text = jsonc.set_member(text, change, _at(self.data, change))
        except jsonc.CommentLost as exc:
            raise ProfileError(f"not writing {self.path}: {exc}; move that comment out of it") from exc
        except jsonc.JsoncError as exc:
            raise _cannot(self.path) from exc
        _verify(self.path, _canonical(jsonc.loads(text)) == _canonical(self.data))
        return text.encode("utf-8")

    def _toml(self) -> str:
        import tomli_w

        if self.text is None:
            return tomli_w.dumps(self.data)
        import tomlkit
        from tomlkit.exceptions import TOMLKitError

        try:
            document = tomlkit.parse(self.text)
            for removal in self.removals:
                if any(removal[:n] in self.removals for n in range(1, len(removal))):
                    continue
                if len(removal) == 1:
                    document.pop(removal[0], None)
                elif removal[0] in document:
                    document[removal[0]].pop(removal[1], None)
            for change in self._changed():
                if _holds(document, change, _at(self.data, change)):
                    continue  # the value is there already: its layout stays as written
                if len(change) == 1:
                    document[change[0]] = self.data[change[0]]
                    continue
                if change[0] not in document:
                    document[change[0]] = tomlkit.table(is_super_table=True)
                document[change[0]][change[1]] = _at(self.data, change)
            text = tomlkit.dumps(document)
        except (TOMLKitError, RecursionError, ValueError, TypeError, KeyError) as exc:
            raise _cannot(self.path) from exc
        _verify(self.path, _same_toml(text, self.data))
        return text

    def _changed(self) -> list[Change]:
        """The changes still standing once the removals are done (a removed key is not set again)."""
        return [c for c in self.changes if all(c[: len(r)] != r for r in self.removals)]


def _holds(document: Any, change: Change, value: Any) -> bool:
    """Whether a parsed TOML document already says ``value`` at ``change``."""
    current = document
    try:
        for key in change:
            current = current[key]
    except (KeyError, TypeError, IndexError):
        return False
    unwrap = getattr(current, "unwrap", None)
    return bool((unwrap() if callable(unwrap) else current) == value)


def _claimed(claims: Mapping[str, Mapping[str, Mapping[str, Any]]], rel: str, table: str, name: str) -> bool:
    return name in claims.get(rel, {}).get(table, {})


def _verify(path: Path, ok: bool) -> None:
    """Stop unless the edited text says exactly what the merge meant (an edit never guesses)."""
    if not ok:
        raise _cannot(path)


def _cannot(path: Path) -> ProfileError:
    return ProfileError(
        f"not writing {path}: tackroom could not merge into it without changing what you wrote "
        "(an unusual layout); move it aside and render again"
    )


def _same_toml(text: str, data: dict[str, Any]) -> bool:
    from tackroom._toml import tomllib

    try:
        return tomllib.loads(text) == data
    except (ValueError, RecursionError):  # not TOML, or a number Python will not convert
        return False


def _parse_json(path: Path, text: str) -> Any:
    try:
        return jsonc.loads(text)
    except jsonc.JsoncError as exc:
        raise ConfigError([Problem(str(path), "", f"not JSON: {exc.message}", exc.line)]) from exc


def _parse_toml(path: Path, text: str) -> dict[str, Any]:
    from tackroom._toml import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc).split(" (at ", 1)[0]
        raise ConfigError([Problem(str(path), "", f"not TOML: {message}", _toml_line(str(exc)))]) from exc
    except RecursionError as exc:
        raise ConfigError([Problem(str(path), "", "not TOML tackroom reads: nested too deeply")]) from exc
    except ValueError as exc:  # an integer past Python's 4,300 digits
        raise ConfigError(
            [Problem(str(path), "", "not TOML tackroom reads: a number with thousands of digits")]
        ) from exc


def _toml_line(message: str) -> int | None:
    import re

    found = re.search(r"\(at line (\d+)", message)
    return int(found.group(1)) if found else None


def _at(data: dict[str, Any], change: Change) -> Any:
    value: Any = data
    for key in change:
        value = value[key]
    return value


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=True, default=str)


def _unmarked(value: Any) -> Any:
    """``value`` with every ``# tackroom:hook <name>`` marker taken out of its strings."""
    import re

    from tackroom.profile.engines.settings import HOOK_MARK

    if isinstance(value, str):
        return re.sub(r"\s*" + re.escape(HOOK_MARK.strip()) + r" \S+", "", value)
    if isinstance(value, list):
        return [_unmarked(v) for v in value]
    if isinstance(value, dict):
        return {k: _unmarked(v) for k, v in value.items()}
    return value


def _ours(group: Any) -> bool:
    from tackroom.profile.engines.settings import HOOK_MARK

    return HOOK_MARK in _canonical(group)
