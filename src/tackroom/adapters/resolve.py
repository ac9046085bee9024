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
import reprlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tackroom._files import config_dir as config_dir
from tackroom._hash import sha256
from tackroom.adapters.layers import Form, Merged, Origin, Table, split_since
from tackroom.adapters.versions import at_least, release_key
from tackroom.errors import ConfigError, Problem, UnknownAdapterError
from tackroom.repo import find_project_file

if TYPE_CHECKING:
    from tackroom.adapters.schema import AdapterSpec
    from tackroom.adapters.tomlsource import KeyPath, TomlSource
    from tackroom.plan import Endpoint, Plan

BUILTIN_DIR = Path(__file__).parent / "builtin"


@dataclass(frozen=True)
class Variant:
    """An adapter's effective table from one harness version on (``since`` None: the table itself)."""

    since: str | None
    effective: Mapping[str, Any] = field(repr=False)
    origins: Mapping[str, Origin] = field(repr=False)

    def to_cache(self) -> dict[str, Any]:
        origins = {key: list(origin) for key, origin in self.origins.items()}
        return {"since": self.since, "effective": self.effective, "origins": origins}

    @classmethod
    def from_cache(cls, data: Mapping[str, Any]) -> Variant:
        origins = {key: Origin(*value) for key, value in data["origins"].items()}
        return cls(data["since"], data["effective"], origins)


@dataclass(frozen=True)
class Adapter:
    """A resolved, validated adapter: what the plan, the runner and the CLI all read.

    ``effective`` is the validated table as JSON data; ``spec`` is the same as
    typed models, built on first use (a cached load validated it already, and
    most commands touch only one adapter's spec).

    An adapter's data can differ by harness version (``[[adapter.X.since]]``
    entries). A loaded adapter is resolved for the version it was verified
    with; :meth:`at` gives the one for the version actually run, with its own
    ``effective``, provenance and hash.
    """

    name: str
    effective: Mapping[str, Any] = field(repr=False)
    """The effective table as plain JSON data (aliases, defaults, no unset optionals)."""
    harness: str
    """The built-in at the root of this adapter's ``extends`` chain."""
    source: str
    """``builtin``, or the operator file that defines or overrides this adapter."""
    origins: Mapping[str, Origin] = field(repr=False)
    """Dotted key -> where that effective field came from."""
    version: str | None = None
    """The harness version this adapter's data was resolved for; None when no version was known."""
    variants: tuple[Variant, ...] = field(default=(), repr=False)
    """Every version-dependent form of the table, the table itself first (empty: this one only)."""

    @classmethod
    def from_spec(
        cls, name: str, spec: AdapterSpec, harness: str, source: str, origins: Mapping[str, Origin]
    ) -> Adapter:
        effective = spec.model_dump(mode="json", by_alias=True, exclude_none=True)
        adapter = cls(name, effective, harness, source, origins)
        adapter.__dict__["spec"] = spec
        return adapter

    def at(self, version: str | None) -> Adapter:
        """This adapter as it applies to harness ``version``: every ``since`` entry up to it applied.

        An unknown version (None, or text that is no version) gets the data of
        the version the adapter was verified with, the one it is proven on.
        """
        target = version if version is not None and release_key(version) is not None else None
        chosen = self._variant(target if target is not None else self.verified_with)
        if chosen is None:
            return replace(self, version=target)
        return Adapter(
            self.name, chosen.effective, self.harness, self.source, chosen.origins, target, self.variants
        )

    def _variant(self, version: str | None) -> Variant | None:
        if not self.variants:
            return None
        if version is None:
            return self.variants[0]
        applies = [v for v in self.variants[1:] if v.since is not None and at_least(version, v.since)]
        return applies[-1] if applies else self.variants[0]

    @property
    def since_versions(self) -> tuple[str, ...]:
        """The versions from which this adapter's data changes, oldest first."""
        return tuple(v.since for v in self.variants if v.since is not None)

    @property
    def previously_verified(self) -> tuple[str, ...]:
        """Older harness versions this adapter is still proven on."""
        return tuple(str(v) for v in self.effective.get("previously_verified", ()))

    @property
    def verified_versions(self) -> tuple[str, ...]:
        """``verified_with`` then ``previously_verified``: every version the facts were proven on."""
        verified = self.verified_with
        return (verified, *self.previously_verified) if verified else ()

    @cached_property
    def spec(self) -> AdapterSpec:
        from tackroom.adapters.schema import AdapterSpec

        return AdapterSpec.model_validate(self.effective)

    @property
    def family(self) -> str:
        return str(self.effective["family"])

    @property
    def extends(self) -> str | None:
        extends = self.effective.get("extends")
        return str(extends) if extends is not None else None

    @property
    def executable(self) -> str:
        return str(self.effective["executable"])

    @property
    def verified_with(self) -> str | None:
        version = self.effective.get("verified_with")
        return str(version) if version is not None else None

    @property
    def version_argv(self) -> list[str]:
        return [str(a) for a in self.effective.get("version_argv", ["--version"])]

    @property
    def provenance(self) -> dict[str, str]:
        """Dotted key -> ``builtin``, ``<file>:<line>`` or ``extends <name>``."""
        return {key: origin.label for key, origin in self.origins.items()}

    @cached_property
    def hash(self) -> str:
        """SHA-256 over the canonical JSON of what this adapter runs (not its name or lineage)."""
        data = {k: v for k, v in self.effective.items() if k != "extends"}
        canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return sha256(canonical.encode()).hexdigest()

    def to_cache(self) -> dict[str, Any]:
        return {
            "harness": self.harness,
            "source": self.source,
            "version": self.version,
            "variants": [variant.to_cache() for variant in self.variants],
        }

    @classmethod
    def from_cache(cls, name: str, data: Mapping[str, Any]) -> Adapter:
        variants = tuple(Variant.from_cache(item) for item in data["variants"])
        base = Adapter(name, variants[0].effective, data["harness"], data["source"], variants[0].origins)
        return replace(base, variants=variants).at(data["version"])

    def plan(
        self,
        prompt: str,
        *,
        options: Mapping[str, Any] | None = None,
        workdir: Path | None = None,
        home: Path | None = None,
        endpoint: Endpoint | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> Plan:
        """The plan of one run: argv, environment and files, computed without running anything.

        ``home`` is the run's isolated home; None means the caller's real home.
        """
        from tackroom.plan import build_plan

        return build_plan(
            self,
            prompt=prompt,
            options=options,
            workdir=(workdir or Path.cwd()).resolve(),
            home=home,
            endpoint=endpoint,
            environ=os.environ if environ is None else environ,
            scrub=identity_variables(),
        )


def identity_variables() -> list[str]:
    """Variables by which a running session of any built-in harness identifies itself.

    A harness started from inside another harness's session must not inherit
    that session's identity, so every child has all of these removed.
    """
    names = {
        name for adapter in resolve_builtins().values() for name in adapter.effective["env"].get("scrub", [])
    }
    return sorted(names)


class AdapterSet(Mapping[str, Adapter]):
    """Every adapter of one load, by name, plus the files it read."""

    def __init__(self, adapters: Mapping[str, Adapter], files: tuple[str, ...]) -> None:
        self._adapters = dict(sorted(adapters.items()))
        self.files = files

    def __getitem__(self, name: str) -> Adapter:
        try:
            return self._adapters[name]
        except KeyError:
            raise UnknownAdapterError(name, list(self._adapters)) from None

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

    def to_cache(self) -> dict[str, Any]:
        return {"files": list(self.files), "adapters": {n: a.to_cache() for n, a in self._adapters.items()}}

    @classmethod
    def from_cache(cls, data: Mapping[str, Any]) -> AdapterSet:
        adapters = {name: Adapter.from_cache(name, item) for name, item in data["adapters"].items()}
        return cls(adapters, tuple(data["files"]))


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

    ``project`` is the working directory whose repository's ``tackroom.toml``
    is checked: a project file may select an adapter, never define one.
    """
    directory = config if config is not None else config_dir(env)
    files = operator_files(directory)
    project_file = find_project_file(project) if project is not None else None
    if project_file is not None and project_file.parent.resolve() == directory.resolve():
        project_file = None
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
    from tackroom._files import cache_dir, read_json, write_json

    code = Path(__file__).parent
    # The shared vocabulary (option and tool names) is part of the schema the tables were validated by.
    inputs = [
        *sorted(BUILTIN_DIR.glob("*.toml")),
        *sorted(code.glob("*.py")),
        code.parent / "vocabulary.py",
        *files,
    ]
    inputs += [project_file] if project_file is not None else []
    key = _stat_key([__version__, *map(str, inputs)], inputs)
    name = sha256("\0".join(map(str, [*files, project_file])).encode()).hexdigest()[:16]
    path = cache_dir() / f"adapters-{name}.json"
    cached = read_json(path)
    if cached.get("key") == key:
        return AdapterSet.from_cache(cached)
    adapters = _resolve(files, project_file)
    write_json(path, {"key": key, **adapters.to_cache()})
    return adapters


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
            if not isinstance(data, dict):
                self.problems.append(
                    Problem(shown, f"adapter.{name}", "must be a table", source.line_of(("adapter", name)))
                )
                continue
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
        adapter = adapter.at(specs[None].verified_with)
        # Validated already: the spec of the form chosen is known, not to be built again.
        chosen = next(v.since for v in variants if v.effective is adapter.effective)
        adapter.__dict__["spec"] = specs[chosen]
        return adapter

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


def _check(data: dict[str, Any]) -> tuple[AdapterSpec | None, list[tuple[KeyPath, str]]]:
    """The typed spec of one effective table and every problem of it (no spec: the shape is wrong)."""
    from pydantic import ValidationError

    from tackroom.adapters.checks import check_adapter
    from tackroom.adapters.schema import AdapterSpec
    from tackroom.families import family_names

    try:
        spec = AdapterSpec.model_validate(data)
    except ValidationError as exc:
        return None, _pydantic_findings(exc, data)
    findings = check_adapter(spec)
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
