"""The layers of an effective adapter table: tables, their ``since`` entries, and how they merge.

One adapter's table is built from layers, each remembering where every leaf
came from: the built-in table, each ``extends`` parent, the operator's table.
A layer may carry ``[[adapter.X.since]]`` entries, the fields that differ from
one harness version on. For a harness version ``v`` the effective table is
every layer in order, each followed by its entries for versions up to ``v``
(oldest first); nested tables merge by key and arrays replace, as everywhere.

Since an entry changes the table only from its version on, an adapter has one
form per distinct ``since`` version (plus the table itself): :class:`Merged`
builds them all, so each can be validated at load and picked at run time.
"""

from __future__ import annotations

import copy
import re
import reprlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from tackroom.adapters.adapter import Origin
from tackroom.adapters.versions import VERSION_PATTERN, ReleaseKey, at_least, sort_key
from tackroom.errors import Problem

if TYPE_CHECKING:
    from tackroom.adapters.tomlsource import KeyPath, TomlSource

OriginOf = Callable[["KeyPath"], "Origin"]
_VERSION = re.compile(VERSION_PATTERN)


@dataclass(frozen=True)
class Since:
    """One ``[[adapter.X.since]]`` entry: from ``version`` on, these fields."""

    version: str
    index: int
    """Its position in the table's ``since`` array (what its lines are recorded under)."""
    data: dict[str, Any]


@dataclass
class Table:
    """One ``[adapter.<name>]`` table of one file, its ``since`` entries apart."""

    name: str
    data: dict[str, Any]
    """The table without ``since`` (shared with the parsed file: never mutated)."""
    source: TomlSource
    builtin: bool
    since: list[Since] = field(default_factory=list)
    """Valid entries, oldest version first."""

    def origin(self, key: KeyPath) -> Origin:
        line = self.source.line_of(("adapter", self.name, *key))
        label = "builtin" if self.builtin else f"{self.source.path}:{line}"
        return Origin(label, self.source.path, line)

    def since_origin(self, entry: Since, key: KeyPath) -> Origin:
        line = self.source.line_of(("adapter", self.name, "since", str(entry.index), *key))
        label = "builtin" if self.builtin else f"{self.source.path}:{line}"
        return Origin(f"{label} since {entry.version}", self.source.path, line, entry.version)

    @property
    def header(self) -> Origin:
        return self.origin(())


def split_since(
    name: str, data: dict[str, Any], source: TomlSource, builtin: bool, fixed: tuple[str, ...]
) -> tuple[Table, list[Problem]]:
    """The table ``adapter.<name>`` with its ``since`` entries checked and set apart, and their problems.

    ``fixed`` are the keys an entry cannot change. A bad entry is left out
    (its problems say why); the others still apply.
    """
    table = Table(name, {k: v for k, v in data.items() if k != "since"}, source, builtin)
    raw = data.get("since")
    if raw is None:
        return table, []
    problems: list[Problem] = []

    def problem(key: KeyPath, message: str) -> None:
        line = source.line_of(("adapter", name, "since", *key))
        problems.append(Problem(source.path, ".".join(("adapter", name, "since", *key)), message, line))

    if not isinstance(raw, list):
        problem((), f"must be an array of tables ([[adapter.{name}.since]]), one per version")
        return table, problems
    seen: dict[str, int] = {}
    for index, entry in enumerate(raw):
        found = _check_entry(entry, fixed, seen)
        for key, message in found:
            problem((str(index), *key), message)
        if not found and isinstance(entry, dict):
            version = str(entry["version"])
            seen[version] = index
            body = {k: v for k, v in entry.items() if k != "version"}
            table.since.append(Since(version, index, body))
    table.since.sort(key=lambda entry: version_order(entry.version))
    return table, problems


def _check_entry(entry: Any, fixed: tuple[str, ...], seen: Mapping[str, int]) -> list[tuple[KeyPath, str]]:
    """What is wrong with one ``since`` entry (key paths relative to it); ``seen``: version -> index."""
    if not isinstance(entry, dict):
        return [((), "must be a table with a version and the fields that change from it on")]
    found: list[tuple[KeyPath, str]] = []
    version = entry.get("version")
    if version is None:
        found.append(((), "missing required key 'version' (the first harness version these fields hold for)"))
    elif not isinstance(version, str) or _VERSION.fullmatch(version) is None:
        shown = reprlib.repr(version)[:60]
        found.append((("version",), f"bad value: {shown} is not a version like '2.1.300'"))
    elif version in seen:
        found.append(
            (("version",), f"the since entry at index {seen[version]} is for {version} too: merge them")
        )
    for key in entry:
        if key in (*fixed, "since"):
            found.append(((str(key),), f"{key!r} cannot change by version: set it on the table itself"))
    return found


def version_order(version: str) -> ReleaseKey:
    """A sort key for a valid ``since`` version."""
    return sort_key(version)


@dataclass
class Form:
    """The effective table from one harness version on, under construction, with every leaf's origin."""

    data: dict[str, Any]
    origins: dict[KeyPath, Origin]

    def copy(self) -> Form:
        return Form(copy.deepcopy(self.data), dict(self.origins))

    def apply(self, top: dict[str, Any], origin: OriginOf) -> None:
        self.data = merge(self.data, top, self.origins, origin, ())

    def origin_of(self, key: KeyPath, header: Origin) -> Origin:
        """Where ``key`` (or the nearest key above or below it) came from."""
        for end in range(len(key), 0, -1):
            if key[:end] in self.origins:
                return self.origins[key[:end]]
            below = [o for k, o in self.origins.items() if k[:end] == key[:end]]
            if below:
                return min(below, key=lambda o: o.line or 0)
        return header


@dataclass
class Merged:
    """An adapter's effective table under construction: one :class:`Form` per ``since`` version."""

    forms: dict[str | None, Form]
    """``since`` version (None: from the first) -> the table from that version on, oldest first."""
    header: Origin
    harness: str
    source: str

    @classmethod
    def from_table(cls, table: Table, name: str) -> Merged:
        source = "builtin" if table.builtin else table.source.path
        return cls({None: Form({}, {})}, table.header, name, source).overlay(table, source)

    def inherit(self, parent: str) -> Merged:
        """The same forms, every origin now saying it came through ``extends parent``."""
        forms = {}
        for since, form in self.forms.items():
            origins = {k: _inherited(o, parent) for k, o in form.origins.items()}
            forms[since] = Form(copy.deepcopy(form.data), origins)
        return Merged(forms, self.header, self.harness, self.source)

    def overlay(self, table: Table, source: str | None = None) -> Merged:
        """These forms with ``table`` (and its ``since`` entries) merged on top of each."""
        versions = {*(v for v in self.forms if v is not None), *(e.version for e in table.since)}
        forms: dict[str | None, Form] = {}
        for since in (None, *sorted(versions, key=version_order)):
            form = self._form_at(since).copy()
            form.apply(table.data, table.origin)
            for entry in table.since:
                if since is not None and at_least(since, entry.version):
                    form.apply(entry.data, partial(table.since_origin, entry))
            forms[since] = form
        return Merged(forms, table.header, self.harness, source or table.source.path)

    def _form_at(self, version: str | None) -> Form:
        chosen = self.forms[None]
        for since, form in self.forms.items():
            if since is not None and version is not None and at_least(version, since):
                chosen = form
        return chosen


def _inherited(origin: Origin, parent: str) -> Origin:
    label = f"extends {parent}" + (f" since {origin.since}" if origin.since else "")
    return Origin(label, origin.file, origin.line, origin.since)


def merge(
    base: dict[str, Any], top: dict[str, Any], origins: dict[KeyPath, Origin], origin: OriginOf, path: KeyPath
) -> dict[str, Any]:
    """``top`` over ``base`` (tables merge by key, anything else is replaced), recording new origins."""
    out = dict(base)
    for key, value in top.items():
        here = (*path, key)
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value, origins, origin, here)
            continue
        for stale in [k for k in origins if k[: len(here)] == here]:
            del origins[stale]
        out[key] = copy.deepcopy(value)
        _record(origins, here, value, origin)
    return out


def _record(origins: dict[KeyPath, Origin], path: KeyPath, value: Any, origin: OriginOf) -> None:
    if isinstance(value, dict) and value:
        for key, sub in value.items():
            _record(origins, (*path, key), sub, origin)
    elif path:
        origins[path] = origin(path)
