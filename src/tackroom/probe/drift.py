"""Drift: does what an adapter claims still hold on the newest release of its harness?

For each adapter with an install recipe and a verified version: ask the
package registry for the newest release, install it beside the verified one,
probe it, and compare its capability row with the verified version's latest
row (probed now if the store has none). A capability that was proven and is
not any more is a regression; so is a probe that ran cleanly and no longer
does. What cannot be checked (no registry answer, a release that does not
install here) is said with its reason, never guessed and never a traceback.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tackroom.errors import InstallError, ProbeError, RegistryError
from tackroom.probe.rows import Row, Support

if TYPE_CHECKING:
    from tackroom.adapters.adapter import Adapter
    from tackroom.harnesses import Located
    from tackroom.state import CapabilityRows

Status = Literal["current", "unchanged", "changed", "regressed", "unknown", "skipped"]
"""``current``: the newest release is the verified one. ``unchanged`` / ``changed``: the newest was
probed and proves what the verified one does (``changed``: differently, nothing lost).
``regressed``: something proven on the verified release is not on the newest. ``unknown``: the
newest could not be found, installed or probed. ``skipped``: nothing to compare (no recipe, never
verified)."""


@dataclass(frozen=True)
class Change:
    """One capability whose value differs between the verified release and the newest."""

    capability: str
    verified: Support | None
    newest: Support | None

    @property
    def lost(self) -> bool:
        """Proven on the verified release, not proven on the newest."""
        return self.verified is True and self.newest is not True

    def to_json(self) -> dict[str, Any]:
        return {"capability": self.capability, "verified": self.verified, "newest": self.newest}


@dataclass(frozen=True)
class Drift:
    """What one adapter's newest release does against its verified one."""

    adapter: str
    verified: str | None
    newest: str | None
    status: Status
    note: str | None = None
    """Why a check could not be made, or what the newest probe's outcome said."""
    baseline: Row | None = None
    row: Row | None = None
    changes: tuple[Change, ...] = field(default=())

    @property
    def regressed(self) -> bool:
        return self.status == "regressed"

    def to_json(self) -> dict[str, Any]:
        return {
            "adapter": self.adapter,
            "verified": self.verified,
            "newest": self.newest,
            "status": self.status,
            "note": self.note,
            "changes": [c.to_json() for c in self.changes],
            "lost": [c.capability for c in self.changes if c.lost],
            "verified_row": self.baseline.to_json() if self.baseline else None,
            "newest_row": self.row.to_json() if self.row else None,
        }


def compare(baseline: Row, row: Row) -> tuple[Status, tuple[Change, ...]]:
    """The status and the changed capabilities of ``row`` (newest) against ``baseline`` (verified)."""
    names = sorted({*baseline.supports, *row.supports})
    changes = tuple(
        Change(name, baseline.supports.get(name), row.supports.get(name))
        for name in names
        if baseline.supports.get(name) != row.supports.get(name)
    )
    if any(c.lost for c in changes) or (baseline.outcome == "ok" and row.outcome != "ok"):
        return "regressed", changes
    return ("changed" if changes else "unchanged"), changes


async def adrift(
    adapters: Sequence[Adapter],
    store: CapabilityRows,
    *,
    jobs: int = 1,
    capabilities: Iterable[str] | None = None,
    environ: Mapping[str, str] | None = None,
    timeout_s: float = 120.0,
    scratch: Path | None = None,
    on_drift: Callable[[Drift], None] | None = None,
) -> list[Drift]:
    """Check every adapter for drift, ``jobs`` at a time; results in the order of ``adapters``."""
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ProbeError(f"jobs must be a whole number of at least 1, got {jobs!r}")
    from tackroom.probe.runner import check_capabilities

    wanted = check_capabilities(capabilities)
    environ = os.environ if environ is None else environ
    gate = asyncio.Semaphore(jobs)
    checker = _Checker(store, wanted, environ, timeout_s, scratch)

    async def one(adapter: Adapter) -> Drift:
        async with gate:
            drift = await checker.check(adapter)
        if on_drift is not None:
            on_drift(drift)
        return drift

    return list(await asyncio.gather(*(one(a) for a in adapters)))


@dataclass
class _Checker:
    store: CapabilityRows
    wanted: frozenset[str]
    environ: Mapping[str, str]
    timeout_s: float
    scratch: Path | None

    async def check(self, adapter: Adapter) -> Drift:
        verified = adapter.verified_with
        if adapter.spec.install is None or verified is None:
            why = "no install recipe" if adapter.spec.install is None else "never verified with a version"
            return Drift(adapter.name, verified, None, "skipped", f"{why}: nothing to compare against")
        try:
            newest = await asyncio.to_thread(_latest, adapter, self.environ)
        except RegistryError as exc:
            return Drift(adapter.name, verified, None, "unknown", str(exc))
        if newest == verified:
            return Drift(
                adapter.name, verified, newest, "current", None, self.store.latest(adapter.name, verified)
            )
        try:
            baseline = self.store.latest(adapter.name, verified) or await self._probe(adapter, verified)
            row = await self._probe(adapter, newest)
        except InstallError as exc:
            return Drift(adapter.name, verified, newest, "unknown", str(exc))
        status, changes = compare(baseline, row)
        note = row.notes.get("outcome") if row.outcome != "ok" else None
        return Drift(adapter.name, verified, newest, status, note, baseline, row, changes)

    async def _probe(self, adapter: Adapter, version: str) -> Row:
        from tackroom.probe.runner import aprobe

        located = await asyncio.to_thread(ensure_installed, adapter, version, self.environ)
        return await aprobe(
            adapter,
            executable=located,
            capabilities=self.wanted,
            store=self.store,
            environ=self.environ,
            timeout_s=self.timeout_s,
            scratch=self.scratch,
        )


def _latest(adapter: Adapter, environ: Mapping[str, str]) -> str:
    from tackroom.registry import latest_version

    return latest_version(adapter, env=environ)


def ensure_installed(
    adapter: Adapter,
    version: str,
    environ: Mapping[str, str],
    progress: Callable[[str], None] | None = None,
) -> Located:
    """The managed install of ``version``, installed first when missing (InstallError if it cannot be)."""
    from tackroom.install import install
    from tackroom.probe.runner import installed

    found = installed(adapter, version, environ)
    if found is None:
        install(adapter, version, env=environ, progress=progress)
        found = installed(adapter, version, environ)
    if found is None:  # installed, yet its executable is gone: say so rather than probe nothing
        raise InstallError(f"{adapter.name} {version} was installed but its executable cannot be found")
    return found


def resolve_version(adapter: Adapter, version: str, environ: Mapping[str, str]) -> str:
    """``version`` as given, or the registry's newest release for ``latest``."""
    return _latest(adapter, environ) if version == "latest" else version
