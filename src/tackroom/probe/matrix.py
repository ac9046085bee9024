"""The capability matrix: each adapter's latest row, how old it is, and whether it still holds.

``tackroom capabilities`` shows one :class:`Entry` per adapter: its latest
row, the row's harness version as a typed value (``stale`` when a newer
harness is installed than the one proven, or the adapter changed since), the
installed version (``unknown`` when there is none) and the row's age. The
same rows render as Markdown (:func:`markdown`, a pure function of the rows),
which is how ``docs/capabilities.md`` is made.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from tackroom.probe.rows import CAPABILITIES, OUTCOME_NOTE, Row, Support
from tackroom.values import Known, Stale, Value, known, stale, to_json, unknown

if TYPE_CHECKING:
    from tackroom.adapters.adapter import Adapter
    from tackroom.families.observability import Observability
    from tackroom.state import CapabilityRows

MARKS: Mapping[Support | None, str] = {True: "yes", False: "no", "n/o": "n/o", None: "-"}
"""How a cell reads: ``-`` is untested (absent), never blank."""


@dataclass(frozen=True)
class Entry:
    """One adapter in the matrix."""

    adapter: str
    row: Row | None
    """Its latest row; None when it was never probed."""
    version: Value[str]
    """The row's harness version: known, stale (overtaken since), or unknown (no row, or unreadable)."""
    installed: Value[str]
    """The harness version installed now: known, or unknown (not installed, or unreadable)."""
    age_s: Value[int]
    """Seconds since the row was made: known, or unknown (no row)."""
    observability: Observability | None = None
    """How tackroom sees the harness at work (stream, transcripts, gateway), from the adapter."""

    @property
    def stale(self) -> bool:
        return isinstance(self.version, Stale)

    def to_json(self) -> dict[str, Any]:
        return {
            "adapter": self.adapter,
            "harness_version": to_json(self.version),
            "installed": to_json(self.installed),
            "age_s": to_json(self.age_s),
            "row": self.row.to_json() if self.row is not None else None,
            "observability": self.observability.to_json() if self.observability is not None else None,
        }


def entries(
    adapters: Mapping[str, Adapter],
    store: CapabilityRows,
    environ: Mapping[str, str] | None = None,
    now: datetime | None = None,
) -> list[Entry]:
    """One entry per adapter, by name; the installed versions are read in parallel."""
    environ = os.environ if environ is None else environ
    latest = store.latest_by_adapter()
    with ThreadPoolExecutor(max_workers=8) as pool:
        versions = list(pool.map(lambda a: installed_version(a, environ), adapters.values()))
    return [
        entry(adapter, latest.get(name), version, now)
        for (name, adapter), version in zip(adapters.items(), versions, strict=True)
    ]


def entry(adapter: Adapter, row: Row | None, installed: Value[str], now: datetime | None = None) -> Entry:
    """The matrix entry of ``adapter`` for its latest ``row``."""
    from tackroom.families.observability import observability

    seen = observability(adapter)
    if row is None:
        never = unknown("never probed")
        return Entry(adapter.name, None, never, installed, unknown("never probed"), seen)
    age = known(max(0, int(((now or datetime.now(UTC)) - row.probed_at).total_seconds())))
    return Entry(adapter.name, row, row_version(adapter, row, installed), installed, age, seen)


def row_version(adapter: Adapter, row: Row, installed: Value[str]) -> Value[str]:
    """The row's harness version: stale when a newer harness is installed or the adapter changed."""
    from tackroom.adapters.versions import sort_key

    if row.harness_version is None:
        return unknown("the probe could not read the harness version")
    if isinstance(installed, Known) and sort_key(row.harness_version) < sort_key(installed.value):
        return stale(row.harness_version, row.probed_at, f"{installed.value} is installed now")
    # A row is about the adapter as it applies to the version probed (its since entries).
    if row.adapter_hash != adapter.at(row.harness_version).hash:
        return stale(row.harness_version, row.probed_at, "the adapter changed since (its hash differs)")
    return known(row.harness_version)


def installed_version(adapter: Adapter, environ: Mapping[str, str]) -> Value[str]:
    """The version of the harness tackroom would run now: known, or unknown and why."""
    from tackroom.errors import TackroomError
    from tackroom.harnesses import locate, probe_version

    try:
        located = locate(adapter, environ)
    except TackroomError as exc:
        return unknown(str(exc))
    if located is None:
        return unknown("not installed")
    version = probe_version(adapter, located)
    return known(version) if version else unknown(f"{located.path} printed no version")


# --- Markdown --------------------------------------------------------------------------------


def latest_per_version(rows: Iterable[Row]) -> list[Row]:
    """The newest row of each (adapter, harness version), ordered by adapter, then version."""
    from tackroom.adapters.versions import sort_key

    newest: dict[tuple[str, str | None], Row] = {}
    for row in rows:
        key = (row.adapter, row.harness_version)
        if key not in newest or row.probed_at >= newest[key].probed_at:
            newest[key] = row
    return sorted(newest.values(), key=lambda r: (r.adapter, sort_key(r.harness_version or "")))


Lacks = Callable[[str, str | None], Mapping[str, str]]
"""An adapter's ``lacks`` as it applies to one version: ``(adapter, version) -> {prefix: reason}``."""


def adapter_lacks(adapters: Mapping[str, Adapter]) -> Lacks:
    """What each of ``adapters`` says it lacks, at the version asked (its ``since`` entries applied).

    A reason stands for what that version does not declare: where a later version declares it (qwen
    0.24.4's session-start hook, which 0.15.10 lacks), the reason is not that version's."""
    from tackroom.probe.declared import declared_capabilities

    def lacks(name: str, version: str | None) -> Mapping[str, str]:
        adapter = adapters.get(name)
        if adapter is None:
            return {}
        at = adapter.at(version) if version else adapter
        found = at.effective.get("lacks")
        if not isinstance(found, dict):
            return {}
        declared = declared_capabilities(at)
        return {
            prefix: reason
            for prefix, reason in found.items()
            if not any(c == prefix or c.startswith(prefix + ".") for c in declared)
        }

    return lacks


def markdown(rows: Iterable[Row], lacks: Lacks | None = None) -> str:
    """The matrix of the newest row of each adapter and version, as a Markdown document.

    A pure function of ``rows`` and ``lacks`` (no clock, no installed harness), so the committed
    ``docs/capabilities.md`` can be checked against the rows it came from. ``lacks`` gives the
    adapters' reasons for what they do not declare, shown beside the ``-`` cells they explain.
    """
    chosen = latest_per_version(rows)
    if not chosen:
        return f"{_HEAD}\nNo capability rows yet: run `tackroom probe NAME` or `tackroom probe --all`.\n"
    heads = [f"{r.adapter} {r.harness_version or '?'}" for r in chosen]
    lines = [
        "| capability | " + " | ".join(heads) + " |",
        "|---|" + "---|" * len(chosen),
        "| outcome | " + " | ".join(_outcome_cell(r) for r in chosen) + " |",
        "| probed | " + " | ".join(f"{r.probed_at:%Y-%m-%d}" for r in chosen) + " |",
    ]
    for capability in CAPABILITIES:
        cells = [_cell(r.supports.get(capability)) for r in chosen]
        lines.append(f"| `{capability}` | " + " | ".join(cells) + " |")
    return f"{_HEAD}\n" + "\n".join(lines) + "\n" + _notes(chosen, lacks)


_HEAD = """# Capabilities, proven against the real harnesses

Generated from capability rows by `tackroom capabilities --markdown`; do not edit by hand.
Each column is the newest row of one harness version, recorded by the real-binary probe
(`tests/real/test_profile_real.py`, which also writes `docs/capabilities.json`). A cell is
`yes` (tested: it can), **no** (tested: it cannot), `n/o` (tested: the harness showed nothing
either way) or `-` (not tested: see the notes; usually the adapter declares no such thing).
"""


def _outcome_cell(row: Row) -> str:
    return row.outcome if row.outcome == "ok" else f"**{row.outcome}**"


def _cell(value: Support | None) -> str:
    mark = MARKS[value]
    return f"**{mark}**" if value is False else mark


def _notes(rows: Sequence[Row], lacks: Lacks | None) -> str:
    """Why each row is not a plain yes: its outcome note, the notes of its no and n/o cells, and why
    the adapter declares what its ``-`` cells stand for not at all."""
    out = []
    for row in rows:
        said = []
        if OUTCOME_NOTE in row.notes:
            said.append(f"  - outcome {row.outcome}: {_one_line(row.notes[OUTCOME_NOTE])}")
        for capability in CAPABILITIES:
            value = row.supports.get(capability)
            if value in (False, "n/o") and capability in row.notes:
                said.append(f"  - `{capability}` {MARKS[value]}: {_one_line(row.notes[capability])}")
        for prefix, reason in (lacks(row.adapter, row.harness_version) if lacks else {}).items():
            covered = [c for c in CAPABILITIES if c == prefix or c.startswith(prefix + ".")]
            if any(row.supports.get(c) is None for c in covered):
                shown = prefix if prefix in CAPABILITIES else f"{prefix}.*"
                said.append(f"  - `{shown}` -: {_one_line(reason)}")
        if said:
            out.append(f"- **{row.adapter} {row.harness_version or '?'}**\n" + "\n".join(said))
    return ("\n## Notes\n\n" + "\n".join(out) + "\n") if out else ""


def _one_line(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")
