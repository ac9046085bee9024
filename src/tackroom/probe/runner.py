"""The probe runner: runs one adapter's probe, writes the outcome, stores the row.

The probe (tackroom's own runs, or the adapter's external probe) observes; the
runner alone decides the row's ``outcome``: ``not_installed`` when there is
no harness to run, ``timeout`` or ``failed`` when a probe run did not go as it
must (with the reason under ``notes.outcome``), else ``ok``. Every probe ends
in a row, and the row is stored whole (one transaction) before it is returned.

``probe`` takes an adapter and, optionally, the install to run (a
:class:`~tackroom.harnesses.Located`; :func:`installed` finds one version of
several), so a newer release can be probed beside the verified one.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from tackroom._loop import run_to_end
from tackroom.errors import ProbeError, TackroomError
from tackroom.probe.findings import Findings
from tackroom.probe.rows import CAPABILITIES, VERSION, Outcome, Row, clip, now

if TYPE_CHECKING:
    from tackroom.adapters.adapter import Adapter
    from tackroom.harnesses import Located
    from tackroom.run.sandbox import Network
    from tackroom.state import CapabilityRows

DEFAULT_TIMEOUT_S = 120.0


def check_capabilities(capabilities: Iterable[str] | None) -> frozenset[str]:
    """The capabilities asked for (all when None); an unknown name is a :class:`ProbeError`."""
    if capabilities is None:
        return frozenset(CAPABILITIES)
    wanted = frozenset(capabilities)
    unknown = sorted(wanted - set(CAPABILITIES))
    if unknown:
        raise ProbeError(f"unknown capabilities {', '.join(unknown)}; known: {', '.join(CAPABILITIES)}")
    return wanted or frozenset(CAPABILITIES)


def installed(adapter: Adapter, version: str, environ: Mapping[str, str] | None = None) -> Located | None:
    """The managed install of ``adapter``'s harness at ``version``, or None if it is not installed."""
    from tackroom.harnesses import Located, managed_installs, read_marker

    prefix = managed_installs(adapter.harness, os.environ if environ is None else environ).get(version)
    if prefix is None:
        return None
    marker = read_marker(prefix)
    path = Path(marker["executable"])
    bin_dir = Path(marker["bin_dir"]) if marker.get("bin_dir") else path.parent
    return Located(path, "managed", version, bin_dir) if path.exists() else None


def probe(
    adapter: Adapter,
    *,
    executable: Located | None = None,
    capabilities: Iterable[str] | None = None,
    store: CapabilityRows | None = None,
    environ: Mapping[str, str] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    scratch: Path | None = None,
    sandbox: str = "none",
    network: Network = "host",
) -> Row:
    """Probe ``adapter`` against its real harness (see :func:`aprobe`); inside a running event loop,
    on a loop of its own in a thread."""
    return run_to_end(
        lambda: aprobe(
            adapter,
            executable=executable,
            capabilities=capabilities,
            store=store,
            environ=environ,
            timeout_s=timeout_s,
            scratch=scratch,
            sandbox=sandbox,
            network=network,
        )
    )


async def aprobe(
    adapter: Adapter,
    *,
    executable: Located | None = None,
    capabilities: Iterable[str] | None = None,
    store: CapabilityRows | None = None,
    environ: Mapping[str, str] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    scratch: Path | None = None,
    sandbox: str = "none",
    network: Network = "host",
) -> Row:
    """Probe ``adapter`` (the install ``executable``, else the one tackroom finds) and return its row.

    ``capabilities`` narrows what is tested (default: every one the adapter
    declares); each probe run happens in ``sandbox`` (with ``network``), as a
    run would. The row is added to ``store`` when one is given. A probe never
    raises for what the harness does; only for what the caller asked
    (:class:`ProbeError`) or a state database it cannot write.
    """
    wanted = check_capabilities(capabilities)
    environ = os.environ if environ is None else environ
    started = now()
    try:
        located = executable or _locate(adapter, environ)
    except TackroomError as exc:
        return _store(
            store, _row(adapter, None, "failed", Findings(), started, f"cannot find the harness: {exc}")
        )
    if located is None:
        why = (
            f"{adapter.executable!r} is not installed by tackroom and not on PATH: "
            f"run `tackroom install {adapter.name}`"
        )
        return _store(store, _row(adapter, None, "not_installed", Findings(), started, why))
    version = located.version or await asyncio.to_thread(_version, adapter, located)
    # The row is about the adapter as it applies to the version probed: its since entries, its hash.
    adapter = adapter.at(version)
    with tempfile.TemporaryDirectory(
        prefix="tackroom-probe-", dir=scratch, ignore_cleanup_errors=True
    ) as tmp:
        findings = await _observe(
            adapter, located, version, wanted, Path(tmp), environ, timeout_s, (sandbox, network)
        )
    outcome = _outcome(findings)
    note = "; ".join(t.note for t in findings.troubles) or None
    return _store(store, _row(adapter, version, outcome, findings, started, note))


async def aprobe_all(
    adapters: Sequence[Adapter],
    *,
    jobs: int = 2,
    on_row: Callable[[Row], None] | None = None,
    capabilities: Iterable[str] | None = None,
    store: CapabilityRows | None = None,
    environ: Mapping[str, str] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    scratch: Path | None = None,
    sandbox: str = "none",
    network: Network = "host",
) -> list[Row]:
    """Probe every adapter, ``jobs`` at a time (the others wait); rows in the order of ``adapters``."""
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ProbeError(f"jobs must be a whole number of at least 1, got {jobs!r}")
    wanted = check_capabilities(capabilities)
    gate = asyncio.Semaphore(jobs)

    async def one(adapter: Adapter) -> Row:
        async with gate:
            row = await aprobe(
                adapter,
                capabilities=wanted,
                store=store,
                environ=environ,
                timeout_s=timeout_s,
                scratch=scratch,
                sandbox=sandbox,
                network=network,
            )
        if on_row is not None:
            on_row(row)
        return row

    return list(await asyncio.gather(*(one(a) for a in adapters)))


def _locate(adapter: Adapter, environ: Mapping[str, str]) -> Located | None:
    from tackroom.harnesses import locate

    return locate(adapter, environ)


def _version(adapter: Adapter, located: Located) -> str | None:
    from tackroom.harnesses import probe_version

    return probe_version(adapter, located)


async def _observe(
    adapter: Adapter,
    located: Located,
    version: str | None,
    wanted: frozenset[str],
    scratch: Path,
    environ: Mapping[str, str],
    timeout_s: float,
    where: tuple[str, Network] = ("none", "host"),
) -> Findings:
    external = adapter.spec.probe
    if external:
        from tackroom.probe.external import probe_argv, probe_env, run_external

        env = probe_env(
            environ, scratch, adapter=adapter.name, executable=located.path, version=version, wanted=wanted
        )
        return await run_external(probe_argv(list(external), environ), env, scratch, timeout_s)
    from tackroom.probe.builtin import Context, Harness, observe

    context = Context(
        Harness(adapter, located, version),
        wanted,
        scratch,
        environ,
        timeout_s,
        sandbox=where[0],
        network=where[1],
    )
    return await observe(context)


def _outcome(findings: Findings) -> Outcome:
    kinds = {t.kind for t in findings.troubles}
    return "timeout" if "timeout" in kinds else "failed" if kinds else "ok"


def _row(
    adapter: Adapter,
    version: str | None,
    outcome: Outcome,
    findings: Findings,
    started: datetime,
    note: str | None,
) -> Row:
    row = Row(
        adapter=adapter.name,
        adapter_hash=adapter.hash,
        harness_version=version if version is not None and VERSION.fullmatch(version) else None,
        probed_at=started,
        outcome=outcome,
        supports=findings.supports if outcome != "not_installed" else {},
        notes=findings.notes,
    )
    return row.with_outcome(outcome, clip(note) if note else None)


def _store(store: CapabilityRows | None, row: Row) -> Row:
    if store is not None:
        store.add(row)
    return row
