"""The adapter as a value: one resolved, validated table and its version-dependent forms.

Everything that reads harness facts reads an :class:`Adapter`; this module
holds the value alone, with nothing of how it was resolved
(:mod:`tackroom.adapters.resolve`) or what is built from it (the plan, the
renderers), so any room may name the type.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any, NamedTuple

from tackroom._hash import sha256
from tackroom.adapters._spec import Spec
from tackroom.adapters.versions import at_least, release_key

if TYPE_CHECKING:
    from tackroom.adapters import schema
    from tackroom.adapters.spec import AdapterSpec


class Origin(NamedTuple):
    """Where one effective field came from: a label for people, a file and line for errors."""

    label: str
    file: str
    line: int | None
    since: str | None = None
    """The version of the ``since`` entry that set it; None for a table's own field."""


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

    >>> import tackroom
    >>> claude = tackroom.load_adapters()["claude-code"]
    >>> claude.family, claude.executable, claude.source
    ('claude-code', 'claude', 'builtin')
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
        cls,
        name: str,
        spec: schema.AdapterSpec | AdapterSpec,
        harness: str,
        source: str,
        origins: Mapping[str, Origin],
    ) -> Adapter:
        """The adapter a validated table makes (its data as the schema dumps it)."""
        if isinstance(spec, Spec):
            effective = spec.to_data()
        else:
            effective = spec.model_dump(mode="json", by_alias=True, exclude_none=True)
        return cls(name, effective, harness, source, origins)

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
        """The effective table as typed values (validated where it was read: not again here)."""
        from tackroom.adapters.spec import AdapterSpec

        return AdapterSpec(self.effective)

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
        """SHA-256 over the canonical JSON of what this adapter runs (not its name or lineage, nor the
        reasons it gives for what it ``lacks``: they explain, they do not run)."""
        data = {k: v for k, v in self.effective.items() if k not in ("extends", "lacks")}
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
