"""Resolve adapters: built-ins, operator tables, ``extends``, merge, provenance, hash.

Resolution order for one name: the built-in table (or the table it
``extends``), then the operator's table for that name, merged field by field
(nested tables merge by key, arrays replace). Every leaf remembers where it
came from. The effective table is then validated (shape, grammar, family), and
every problem of every file is collected before one :class:`ConfigError` is
raised.
"""

from __future__ import annotations

import functools
import json
import os
import re
import reprlib
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tackroom._files import config_dir as config_dir
from tackroom._hash import sha256
from tackroom.adapters.adapter import Adapter as Adapter
from tackroom.adapters.adapter import Origin as Origin
from tackroom.adapters.adapter import Variant as Variant
from tackroom.errors import ConfigError, Problem, UnknownAdapterError
from tackroom.repo import find_project_file

if TYPE_CHECKING:
    from tackroom.adapters.layers import Form, Merged, Table
    from tackroom.adapters.schema import AdapterSpec
    from tackroom.adapters.tomlsource import KeyPath, TomlSource

BUILTIN_DIR = Path(__file__).parent / "builtin"
SHIPPED = Path(__file__).parent / "builtin-resolved.json"
"""The built-in adapters as resolved when the package was made (``scripts/resolve-builtins``)."""


def identity_variables() -> list[str]:
    """Variables by which a running session of any built-in harness identifies itself.

    A harness started from inside another harness's session must not inherit
    that session's identity, so every child has all of these removed.
    """
    return resolve_builtins().scrubbed()


class AdapterSet(Mapping[str, Adapter]):
    """Every adapter of one load, by name, plus the files it read.

    >>> import tackroom
    >>> adapters = tackroom.load_adapters()
    >>> "codex" in adapters, adapters["no-such"]
    Traceback (most recent call last):
    ...
    tackroom.errors.UnknownAdapterError: unknown adapter 'no-such'; known adapters: aider, ...

    A set read from the cache holds each adapter as its cached JSON text and decodes it when it is
    first asked for: a command uses one adapter or nine of thirty, and the names cost nothing.
    """

    def __init__(
        self,
        adapters: Mapping[str, Adapter | str],
        files: tuple[str, ...],
        *,
        heal: Callable[[], AdapterSet] | None = None,
    ) -> None:
        self._adapters: dict[str, Adapter | str] = dict(sorted(adapters.items()))
        self.files = files
        self._heal = heal
        """Where a cached adapter that does not decode is taken from instead: a fresh resolution."""
        self._scrubbed: list[str] | None = None

    def __getitem__(self, name: str) -> Adapter:
        try:
            found = self._adapters[name]
        except KeyError:
            raise UnknownAdapterError(name, list(self._adapters)) from None
        if isinstance(found, str):
            # Decoding twice from two threads is harmless: both make the same value.
            try:
                found = Adapter.from_cache(name, json.loads(found))
            except (ValueError, LookupError, TypeError):  # a damaged cache is a miss, never an error
                if self._heal is None:
                    raise
                found = self._heal()[name]
            self._adapters[name] = found
        return found

    def __contains__(self, name: object) -> bool:
        # Mapping's default asks __getitem__ and expects KeyError; ours raises UnknownAdapterError.
        return name in self._adapters

    def __iter__(self) -> Iterator[str]:
        return iter(self._adapters)

    def __len__(self) -> int:
        return len(self._adapters)

    def builtin(self, name: str) -> Adapter:
        """The built-in adapter ``name`` with no operator table applied."""
        return resolve_builtins()[name]

    def scrubbed(self) -> list[str]:
        """Every variable some adapter of this set removes from a child's environment (``env.scrub``),
        sorted; the cache keeps the list, so a run learns it without decoding every adapter."""
        if self._scrubbed is None:
            self._scrubbed = sorted(
                {v for name in self for v in self[name].effective["env"].get("scrub", [])}
            )
        return list(self._scrubbed)

    def to_cache(self) -> dict[str, Any]:
        return {"files": list(self.files), "adapters": {n: self[n].to_cache() for n in self._adapters}}

    @classmethod
    def from_cache(cls, data: Mapping[str, Any]) -> AdapterSet:
        adapters = {name: Adapter.from_cache(name, item) for name, item in data["adapters"].items()}
        return cls(adapters, tuple(data["files"]))

    def pack(self, key: str) -> str:
        """This set as the cache keeps it (:meth:`unpack`): a JSON header line with ``key``, then one
        line per adapter, its name, a tab and its JSON."""
        head = json.dumps({"key": key, "files": list(self.files), "scrubbed": self.scrubbed()})
        return "\n".join([head, *(f"{n}\t{json.dumps(self[n].to_cache())}" for n in self._adapters)]) + "\n"

    @classmethod
    def unpack(cls, text: str, key: str, heal: Callable[[], AdapterSet] | None = None) -> AdapterSet | None:
        """The set :meth:`pack` made with ``key``, its adapters left as text (one that does not decode
        is taken from ``heal()``); None for another key or a damaged file (a cache miss)."""
        head, _, body = text.partition("\n")
        try:
            header = json.loads(head)
        except ValueError:
            return None
        if not isinstance(header, dict) or header.get("key") != key or not body.endswith("\n"):
            return None
        adapters: dict[str, Adapter | str] = {}
        for line in body[:-1].split("\n"):
            name, tab, item = line.partition("\t")
            if not tab or not item.startswith("{"):
                return None
            adapters[name] = item
        found = cls(adapters, tuple(header.get("files", ())), heal=heal)
        scrubbed = header.get("scrubbed")
        if isinstance(scrubbed, list) and all(isinstance(name, str) for name in scrubbed):
            found._scrubbed = scrubbed
        return found


def operator_files(directory: Path) -> list[Path]:
    """``tackroom.toml`` then ``adapters.d/*.toml`` in name order: the files that may define adapters."""
    main = directory / "tackroom.toml"
    # A dangling link or a directory named *.toml is listed, so the load reports it instead of
    # silently skipping a file the operator believes is read.
    files = [main] if main.exists() or main.is_symlink() else []
    drop_ins = directory / "adapters.d"
    if drop_ins.is_dir():
        files += sorted(drop_ins.glob("*.toml"))
    return files


def load_adapters(
    *, config: Path | None = None, project: Path | None = None, env: Mapping[str, str] | None = None
) -> AdapterSet:
    """Load built-ins, apply the operator files in ``config`` (default :func:`config_dir`).

    >>> import tackroom
    >>> adapters = tackroom.load_adapters()
    >>> adapters["codex"].family, "claude-code" in adapters
    ('codex', True)

    ``project`` is the working directory whose repository's ``tackroom.toml``
    is checked: a project file may select an adapter, never define one.
    """
    directory = config if config is not None else config_dir(env)
    files = operator_files(directory)
    project_file = find_project_file(project) if project is not None else None
    if project_file is not None and project_file.parent.resolve() == directory.resolve():
        project_file = None
    if not files and project_file is None and not os.environ.get("TACKROOM_NO_CACHE"):
        return resolve_builtins()  # the same inputs: one load per process
    return _load(files, project_file)


def resolve_builtins() -> AdapterSet:
    """The built-in adapters alone, as they ship with the package."""
    global _BUILTINS
    if _BUILTINS is None:
        _BUILTINS = _load([], None)
    return _BUILTINS


def _load(files: list[Path], project_file: Path | None) -> AdapterSet:
    """Resolve, or reuse the last resolution of exactly these inputs.

    Resolving parses every table and validates every adapter, which costs more
    than the rest of a CLI command. The validated result only changes when an
    input changes, so it is cached under ``$XDG_CACHE_HOME/tackroom/``, keyed
    on the size and modification time of every input: the built-in tables, the
    adapter code, the operator files and the project file. A load that fails
    is never cached, so errors are reported every time. ``TACKROOM_NO_CACHE=1``
    skips the cache.
    """
    if os.environ.get("TACKROOM_NO_CACHE"):
        return _resolve(files, project_file)
    from tackroom import __version__
    from tackroom._files import cache_dir, write_text

    inputs = [*_builtin_inputs(), *files, *([project_file] if project_file is not None else [])]
    key = _stat_key([__version__, *map(str, inputs)], inputs)
    name = sha256("\0".join(map(str, [*files, project_file])).encode()).hexdigest()[:16]
    path = cache_dir() / f"adapters-{name}.lines"

    def heal() -> AdapterSet:
        path.unlink(missing_ok=True)
        return _load(files, project_file)

    try:
        cached = AdapterSet.unpack(path.read_text(encoding="utf-8"), key, heal)
    except (OSError, ValueError):
        cached = None
    if cached is not None:
        return cached
    adapters = (_shipped() if not files and project_file is None else None) or _resolve(files, project_file)
    write_text(path, adapters.pack(key))
    return adapters


def _builtin_inputs() -> list[Path]:
    """What the built-ins' resolution is made of: their tables, the adapter code and the shared
    vocabulary (option and tool names), part of the schema the tables are validated by."""
    code = Path(__file__).parent
    return [*sorted(BUILTIN_DIR.glob("*.toml")), *sorted(code.glob("*.py")), code.parent / "vocabulary.py"]


def _digest() -> str:
    """A digest of the bytes of :func:`_builtin_inputs` (by name, so it is the same on any machine)."""
    from tackroom._hash import blake2b

    digest = blake2b(digest_size=16)
    for path in _builtin_inputs():
        data = path.read_bytes()
        digest.update(f"{path.parent.name}/{path.name}:{len(data)}\n".encode())
        digest.update(data)
    return digest.hexdigest()


def _shipped(path: Path = SHIPPED) -> AdapterSet | None:
    """The built-ins from ``path`` (:data:`SHIPPED`) when it was made from exactly these inputs, else None.

    A new machine's first command (nothing cached yet) then validates nothing: resolving the
    built-ins with pydantic costs about 300 ms, more than most commands' own work.
    """
    from tackroom._files import read_json

    shipped = read_json(path)
    if shipped.get("digest") != _digest() or not isinstance(shipped.get("adapters"), dict):
        return None
    return AdapterSet.from_cache(shipped)


def shipped_resolution() -> str:
    """The text of :data:`SHIPPED` for this code and these tables (``scripts/resolve-builtins``)."""
    import json

    data = {"digest": _digest(), **_resolve([], None).to_cache()}
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def _stat_key(parts: list[str], files: list[Path]) -> str:
    for path in files:
        try:
            stat = path.stat()
        except OSError:  # gone or a dangling link: the load that follows reports it
            parts.append("missing")
            continue
        parts.append(f"{stat.st_size}:{stat.st_mtime_ns}")
    return sha256("\n".join(parts).encode()).hexdigest()


def _resolve(files: list[Path], project_file: Path | None) -> AdapterSet:
    resolver = _Resolver()
    resolver.add_builtins()
    for path in files:
        resolver.add_operator(path)
    if project_file is not None:
        resolver.check_project(project_file)
    return resolver.resolve()


_BUILTINS: AdapterSet | None = None


class _Resolver:
    """Collects tables from every file, then resolves them all, collecting every problem."""

    def __init__(self) -> None:
        self.builtins: dict[str, Table] = {}
        self.operator: dict[str, Table] = {}
        self.problems: list[Problem] = []
        self.files: list[str] = []

    # -- reading ---------------------------------------------------------------------------

    def add_builtins(self) -> None:
        for path in sorted(BUILTIN_DIR.glob("*.toml")):
            for table in self._tables(path, f"builtin/{path.name}", builtin=True):
                self.builtins[table.name] = table

    def add_operator(self, path: Path) -> None:
        for table in self._tables(path, str(path), builtin=False):
            if "family" in table.data:
                self._problem(table.origin(("family",)), f"adapter.{table.name}.family", _FAMILY_MSG)
            if table.name in self.operator:
                first = self.operator[table.name].source.path
                self._problem(
                    table.header,
                    f"adapter.{table.name}",
                    f"also defined in {first}; at most one table per adapter name across all files",
                )
                continue
            self.operator[table.name] = table

    def check_project(self, path: Path) -> None:
        source = self._read(path, str(path))
        if source is None:
            return
        self.files.append(source.path)
        for name in (
            (source.data.get("adapter") or {}) if isinstance(source.data.get("adapter"), dict) else []
        ):
            line = source.line_of(("adapter", name))
            self.problems.append(
                Problem(
                    source.path,
                    f"adapter.{name}",
                    "a project file may select an adapter, never define one; move this table to "
                    "$TACKROOM_CONFIG_DIR/adapters.d/ (default ~/.config/tackroom/adapters.d/)",
                    line,
                )
            )
        from tackroom.project import check_project_data

        for key, message in check_project_data(source.data, path.parent):
            self.problems.append(Problem(source.path, ".".join(key), message, source.line_of(key)))
        harness = source.data.get("harness")
        known = {*self.builtins, *self.operator}
        if isinstance(harness, str) and harness and harness not in known:
            message = f"unknown adapter {harness!r}; known adapters: {', '.join(sorted(known))}"
            self.problems.append(Problem(source.path, "harness", message, source.line_of(("harness",))))

    def _read(self, path: Path, shown: str) -> TomlSource | None:
        from tackroom.adapters.tomlsource import load_toml

        try:
            return _builtin_source(path, shown) if path.parent == BUILTIN_DIR else load_toml(path, shown)
        except ConfigError as exc:
            self.problems.extend(exc.problems)
            return None

    def _tables(self, path: Path, shown: str, *, builtin: bool) -> Iterator[Table]:
        source = self._read(path, shown)
        if source is None:
            return
        self.files.append(shown)
        for key in source.data:
            if key != "adapter":
                self.problems.append(
                    Problem(
                        shown,
                        key,
                        "unknown key; adapter files hold [adapter.<name>] tables",
                        source.line_of((key,)),
                    )
                )
        tables = source.data.get("adapter", {})
        if not isinstance(tables, dict):
            self.problems.append(Problem(shown, "adapter", "must be a table", source.line_of(("adapter",))))
            return
        for name, data in tables.items():
            if not _NAME.fullmatch(name):
                # A name becomes a run directory's, a command's argument and a printed word.
                self.problems.append(
                    Problem(
                        shown,
                        "adapter",
                        f"{name!r} cannot be an adapter's name: use lowercase letters, "
                        "digits, '.', '_' and '-', starting with a letter or digit, at most 64 characters",
                        source.line_of(("adapter", name)),
                    )
                )
                continue
            if not isinstance(data, dict):
                self.problems.append(
                    Problem(shown, f"adapter.{name}", "must be a table", source.line_of(("adapter", name)))
                )
                continue
            from tackroom.adapters.layers import split_since  # resolving: a cached load needs neither
            from tackroom.adapters.schema import SINCE_FIXED

            table, problems = split_since(name, data, source, builtin, SINCE_FIXED)
            self.problems.extend(problems)
            yield table

    def _problem(self, origin: Origin, key: str, message: str) -> None:
        self.problems.append(Problem(origin.file, key, message, origin.line))

    # -- resolving -------------------------------------------------------------------------

    def resolve(self) -> AdapterSet:
        merged: dict[str, Merged | None] = {}
        for name in sorted({*self.builtins, *self.operator}):
            self._merged(name, merged)
        adapters = {}
        for name, item in merged.items():
            adapter = self._validate(name, item) if item is not None else None
            if adapter is not None:
                adapters[name] = adapter
        if self.problems:
            # The same fault can show in several forms of one adapter (one per since version).
            raise ConfigError(dict.fromkeys(self.problems))
        return AdapterSet(adapters, tuple(self.files))

    def _merged(self, name: str, done: dict[str, Merged | None]) -> Merged | None:
        """Merge ``name`` and every adapter on its ``extends`` chain into ``done``.

        A loop, not recursion: an operator may write a chain of any length (a
        1,500-long one must be an answer, not a RecursionError). A broken link
        is reported once; every adapter above it resolves to None.
        """
        chain: list[str] = []
        current = name
        while current not in done and current not in self.builtins:
            parent = self._parent(self.operator[current], tuple(chain))
            chain.append(current)
            if parent is None:
                done.update(dict.fromkeys(chain))
                return None
            current = parent
        if current not in done:
            done[current] = self._builtin(current)
        result = done[current]
        for child in reversed(chain):
            if result is not None:
                result = result.inherit(current).overlay(self.operator[child])
            done[child] = result
            current = child
        return result

    def _builtin(self, name: str) -> Merged:
        """A built-in's table with the operator's override of it (which may not extend) on top."""
        from tackroom.adapters.layers import Merged

        result = Merged.from_table(self.builtins[name], name)
        table = self.operator.get(name)
        if table is None:
            return result
        if "extends" in table.data:
            self._problem(
                table.origin(("extends",)),
                f"adapter.{name}.extends",
                f"{name!r} is a built-in: its table overrides it field by field and cannot extend",
            )
        return result.overlay(table)

    def _parent(self, table: Table, chain: tuple[str, ...]) -> str | None:
        key = f"adapter.{table.name}.extends"
        parent = table.data.get("extends")
        if parent is None:
            self._problem(
                table.header,
                f"adapter.{table.name}",
                "a new adapter name must set extends to a built-in or another adapter table "
                f"(built-ins: {', '.join(sorted(self.builtins))})",
            )
            return None
        if not isinstance(parent, str):
            self._problem(table.origin(("extends",)), key, "must be a string naming an adapter")
            return None
        if parent in (*chain, table.name):
            loop = chain[chain.index(parent) :] if parent in chain else ()
            cycle = " -> ".join((*loop, table.name, parent))
            files = sorted({self.operator[n].source.path for n in (*chain, table.name) if n in self.operator})
            self._problem(table.origin(("extends",)), key, f"extends cycle: {cycle} (in {', '.join(files)})")
            return None
        if parent not in self.builtins and parent not in self.operator:
            known = ", ".join(sorted({*self.builtins, *self.operator}))
            self._problem(
                table.origin(("extends",)),
                key,
                f"extends unknown adapter {parent!r}; an adapter must resolve to a built-in family "
                f"(known: {known})",
            )
            return None
        return parent

    def _validate(self, name: str, item: Merged) -> Adapter | None:
        """The adapter, when every form of it (one per ``since`` version) is valid; else None."""
        variants: list[Variant] = []
        specs: dict[str | None, AdapterSpec] = {}
        base: set[tuple[KeyPath, str]] = set()
        for since, form in item.forms.items():
            spec, findings = _check(form.data)
            for key, message in findings:
                if since is None:
                    base.add((key, message))
                    self._report(name, item.header, form, key, message)
                elif (key, message) not in base:
                    self._report_since(name, item, form, since, key, message)
            if spec is None or findings:
                continue
            origins = {".".join(k): v for k, v in form.origins.items()}
            specs[since] = spec
            variants.append(Variant(since, _dump(spec), origins))
        if len(variants) != len(item.forms):
            return None
        first = variants[0]
        adapter = Adapter(
            name, first.effective, item.harness, item.source, first.origins, None, tuple(variants)
        )
        return adapter.at(specs[None].verified_with)

    def _report(self, name: str, header: Origin, form: Form, key: KeyPath, message: str) -> None:
        origin = form.origin_of(key, header)
        self.problems.append(Problem(origin.file, ".".join(("adapter", name, *key)), message, origin.line))

    def _report_since(
        self, name: str, item: Merged, form: Form, since: str, key: KeyPath, message: str
    ) -> None:
        """A problem only the form from ``since`` on has, blamed on the entry that made it."""
        origin = form.origin_of(key, item.header)
        message = f"{message} (from harness version {since} on)"
        if origin.since != since:
            # The key itself is older (a built-in option whose slot an entry removed): point at the entry.
            entry = next((o for o in form.origins.values() if o.since == since), origin)
            message = f"{message[:-1]}: the since {since} entry at {entry.file}:{entry.line})"
            origin = entry
        key_path = ".".join(("adapter", name, *key))
        self.problems.append(Problem(origin.file, key_path, message, origin.line))


_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")


def _check(data: dict[str, Any]) -> tuple[AdapterSpec | None, list[tuple[KeyPath, str]]]:
    """The typed spec of one effective table and every problem of it (no spec: the shape is wrong)."""
    from pydantic import ValidationError

    from tackroom.adapters import spec as plain
    from tackroom.adapters.checks import check_adapter
    from tackroom.adapters.schema import AdapterSpec
    from tackroom.families import engines, family_names

    try:
        spec = AdapterSpec.model_validate(data)
    except ValidationError as exc:
        return None, _pydantic_findings(exc, data)
    findings = check_adapter(plain.AdapterSpec(_dump(spec)), engines())
    if spec.family not in family_names():
        findings.append(
            (("family",), f"no family {spec.family!r} is registered ({', '.join(family_names())})")
        )
    return spec, findings


def _dump(spec: AdapterSpec) -> dict[str, Any]:
    return spec.model_dump(mode="json", by_alias=True, exclude_none=True)


@functools.cache
def _builtin_source(path: Path, shown: str) -> TomlSource:
    """A built-in file, parsed once per process: it ships with the package and never changes.

    Callers only read it (merging deep-copies), so sharing one parse is safe.
    """
    from tackroom.adapters.tomlsource import load_toml

    return load_toml(path, shown)


_FAMILY_MSG = (
    "family cannot be set by an operator table: it is inherited from a built-in through extends "
    "(a family selects code that configuration cannot supply)"
)


def _pydantic_findings(exc: Any, data: dict[str, Any]) -> list[tuple[KeyPath, str]]:
    """Turn pydantic errors into (key path, message), collapsing union branches."""
    found: dict[KeyPath, list[str]] = {}
    for error in exc.errors():
        loc = tuple(str(part) for part in error["loc"])
        key = _existing_prefix(loc, data)
        kind = error["type"]
        if kind == "extra_forbidden":
            message = "unknown key"
        elif kind == "missing":
            message = f"missing required key {loc[len(key)]!r}" if len(loc) > len(key) else "missing"
        else:
            message = f"bad value: {error['msg']} (got {_short(error.get('input'))})"
        found.setdefault(key, [])
        if message not in found[key]:
            found[key].append(message)
    return [(key, "; or ".join(messages)) for key, messages in found.items()]


def _short(value: Any, limit: int = 120) -> str:
    """``repr(value)``, cut to ``limit`` characters: a hostile value must not flood the message."""
    text = reprlib.repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _existing_prefix(loc: tuple[str, ...], data: Any) -> KeyPath:
    key: list[str] = []
    node = data
    for part in loc:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            break
        key.append(part)
    return tuple(key)
