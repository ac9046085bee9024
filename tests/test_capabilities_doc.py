"""docs/capabilities.md says exactly what the committed rows say, and the rows are real rows.

The rows in docs/capabilities.json are written only by the real-binary probe
(tests/real/test_profile_real.py --update-golden), which also fails whenever a
committed row claims a capability its fresh probe did not prove.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from tackroom.adapters.resolve import resolve_builtins
from tackroom.probe.matrix import adapter_lacks, latest_per_version, markdown
from tackroom.probe.rows import CAPABILITIES, Row, row_from_json

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_the_markdown_is_the_committed_rows_rendered() -> None:
    rows = [
        row_from_json(data) for data in json.loads((DOCS / "capabilities.json").read_text(encoding="utf-8"))
    ]
    assert rows, "docs/capabilities.json holds no rows"
    assert latest_per_version(rows) == rows, "one row per adapter and version, in order"
    assert {r.adapter for r in rows} <= set(resolve_builtins())
    assert (DOCS / "capabilities.md").read_text(encoding="utf-8") == markdown(
        rows, adapter_lacks(resolve_builtins())
    ), (
        "docs/capabilities.md is not the rendering of docs/capabilities.json: "
        "run tests/real/test_profile_real.py with --update-golden"
    )


def _committed_rows() -> list[Row]:
    return [
        row_from_json(data) for data in json.loads((DOCS / "capabilities.json").read_text(encoding="utf-8"))
    ]


def test_what_an_adapter_lacks_is_only_what_its_rows_never_tested() -> None:
    """A ``lacks`` reason stands beside `-` cells only: one that covers a capability its row proved
    (yes) or tested (no, n/o) is stale data, and fails here."""
    adapters = resolve_builtins()
    lacks = adapter_lacks(adapters)
    for row in _committed_rows():
        for prefix in lacks(row.adapter, row.harness_version):
            covered = [c for c in CAPABILITIES if c == prefix or c.startswith(prefix + ".")]
            tested = {c: row.supports[c] for c in covered if c in row.supports}
            assert not tested, (
                f"{row.adapter} {row.harness_version}: lacks {prefix!r} but its row says {tested}"
            )


def test_a_lacked_capability_is_explained_beside_its_cells() -> None:
    row = Row(
        adapter="mine",
        adapter_hash="0" * 64,
        harness_version="1.0.0",
        probed_at=datetime(2026, 12, 1, tzinfo=UTC),
        outcome="ok",
        supports={"rules.read": True, "mcp.offered": False},
        notes={"mcp.offered": "the tool was never offered"},
    )
    said = {"hooks": "it has no hooks at all", "mcp": "not shown: its cells were tested", "rules": "stale"}
    page = markdown([row], lambda adapter, version: said if (adapter, version) == ("mine", "1.0.0") else {})
    assert "  - `hooks.*` -: it has no hooks at all" in page
    assert "  - `mcp.offered` no: the tool was never offered" in page
    assert "not shown" in page  # mcp.called and mcp.answered are `-`: the reason stands for them
    assert "stale" not in page  # rules.read was proven: nothing to explain
    assert "it has no hooks" not in markdown([row])


PROFILE_CAPABILITIES = ("rules", "skills", "agents", "commands", "mcp", "hooks")
"""What a profile gives a harness (issue 28): each is proven or said to be lacking, never left `-`."""


UNPROVEN: dict[tuple[str, str], str] = {}
"""Capabilities these harnesses have that no probe here proves yet, and why: each is a gap of
tackroom's, not the harness's (so no ``lacks``), and a fix removes it from here."""


def test_every_untested_profile_cell_says_why() -> None:
    """Issue 28's goal, held: a `-` cell of what a profile carries is a capability the harness
    lacks, with the adapter's reason beside it (``[adapter.X.lacks]``); one the harness has is
    declared and proven. A new harness version's row, or a capability left undeclared, fails here
    until it is one or the other."""
    lacks = adapter_lacks(resolve_builtins())
    unexplained = {}
    for row in latest_per_version(_committed_rows()):
        said = lacks(row.adapter, row.harness_version)
        column = f"{row.adapter} {row.harness_version}"
        bare = [
            c
            for c in CAPABILITIES
            if c.split(".")[0] in PROFILE_CAPABILITIES
            and c not in row.supports
            and not any(c == p or c.startswith(p + ".") for p in said)
            and (column, c.split(".")[0]) not in UNPROVEN
        ]
        if bare:
            unexplained[column] = bare
        for (where, prefix), why in UNPROVEN.items():
            if where == column:
                tested = [c for c in row.supports if c.split(".")[0] == prefix]
                assert not tested, f"{column} tests {tested} now: take ({prefix!r}: {why}) out of UNPROVEN"
    assert not unexplained, f"`-` cells with no reason (declare and prove, or say why): {unexplained}"
