"""Merge an engine's keys into a settings file the harness shares with the user, losing nothing of theirs.

An engine's merge output names tables and the entries in them
(``{"mcpServers": {"<name>": {...}}}``, ``{"hooks": {"<Event>": [groups]}}``).
The rules:

- An entry (a table value) is tackroom's whole: it replaces the entry of that
  name only when there is none, when it is identical, or when the ownership
  record says tackroom wrote exactly what is there. A same-name entry the user
  wrote is never replaced: the render stops and names it.
- A list (a hook event's groups, permission rules) keeps the user's items
  and replaces only tackroom's own (marked ``# tackroom:hook``); an item
  already there is not added twice.
- A top-level value that is not a table (``"outputStyle": "x"``) is set when
  absent, identical, or what tackroom wrote last (the record owns it).
- A value of another shape where a table or list goes is the user's, and
  stops the render.

The file is read as the harnesses read it (JSON with comments and trailing
commas; TOML) and written back keeping what the user wrote: JSON comments
stay (the members tackroom sets are spliced into the text), and TOML is edited
with tomlkit, so comments and layout survive. A file that cannot be read is a
:class:`~tackroom.errors.ConfigError` naming it and the line.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tackroom.errors import ConfigError, Problem, ProfileError
from tackroom.profile import jsonc
from tackroom.profile.owned import Owned

Change = tuple[str, ...]
TOP = ""
"""The ownership record's table name for top-level keys that are not tables (``"outputStyle": "x"``)."""


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

    @classmethod
    def read(cls, path: Path, rel: str, fmt: str, raw: bytes | None) -> Settings:
        """Parse what is on disk (``raw``; None when there is no file)."""
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

    def merge(self, top: Mapping[str, Any], owned: Owned) -> None:
        """Fold an engine's keys in, recording conflicts and what tackroom now owns."""
        for key, value in top.items():
            old = self.data.get(key)
            if not isinstance(value, dict):
                if old is not None and old != value and not owned.owns_entry(self.rel, TOP, key, old):
                    self.conflicts.append(f"{key!r} is already set to something else")
                    continue
                owned.record_entry(self.rel, TOP, key, value)
                self.data[key] = value
                self.changes.append((key,))
            elif old is not None and not isinstance(old, dict):
                self.conflicts.append(f"{key!r} is not a table")
            else:
                if old is None:  # absent, or null: nothing of the user's to keep
                    if key in self.data:
                        self.changes.append((key,))  # a null is replaced whole
                    self.data[key] = {}
                for name, entry in value.items():
                    self._entry(key, name, entry, owned)

    def _entry(self, key: str, name: str, entry: Any, owned: Owned) -> None:
        table = self.data[key]
        old = table.get(name)
        if isinstance(entry, list):
            if old is not None and not isinstance(old, list):
                self.conflicts.append(f"{key}.{name} is not a list")
                return
            entry = [g for g in (old or []) if not _ours(g) and g not in entry] + entry
        elif old is not None and old != entry and not owned.owns_entry(self.rel, key, name, old):
            self.conflicts.append(
                f"{name!r} in {key!r} is already there and tackroom did not write it (rename it in "
                "the profile, or rename or remove yours)"
            )
            return
        else:
            owned.record_entry(self.rel, key, name, entry)
        table[name] = entry
        self.changes.append((key, name))

    def dump(self) -> bytes:
        """The file's new bytes: what the user wrote kept, tackroom's members set."""
        if self.format == "toml":
            return self._toml().encode("utf-8")
        if self.text is None or not jsonc.has_comments(self.text):
            return (jsonc.dumps(self.data) + "\n").encode("utf-8")
        text = self.text
        try:
            for change in self.changes:
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
            for change in self.changes:
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
    import tomllib

    try:
        return tomllib.loads(text) == data
    except (tomllib.TOMLDecodeError, RecursionError):
        return False


def _parse_json(path: Path, text: str) -> Any:
    try:
        return jsonc.loads(text)
    except jsonc.JsoncError as exc:
        raise ConfigError([Problem(str(path), "", f"not JSON: {exc.message}", exc.line)]) from exc


def _parse_toml(path: Path, text: str) -> dict[str, Any]:
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc).split(" (at ", 1)[0]
        raise ConfigError([Problem(str(path), "", f"not TOML: {message}", _toml_line(str(exc)))]) from exc
    except RecursionError as exc:
        raise ConfigError([Problem(str(path), "", "not TOML tackroom reads: nested too deeply")]) from exc


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


def _ours(group: Any) -> bool:
    from tackroom.profile.engines.settings import HOOK_MARK

    return HOOK_MARK in _canonical(group)
