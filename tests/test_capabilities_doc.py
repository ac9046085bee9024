"""docs/capabilities.md says exactly what the committed rows say, and the rows are real rows.

The rows in docs/capabilities.json are written only by the real-binary probe
(tests/real/test_profile_real.py --update-golden), which also fails whenever a
committed row claims a capability its fresh probe did not prove.
"""

from __future__ import annotations

import json
from pathlib import Path

from tackroom.adapters.resolve import resolve_builtins
from tackroom.probe.matrix import latest_per_version, markdown
from tackroom.probe.rows import row_from_json

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_the_markdown_is_the_committed_rows_rendered() -> None:
    rows = [
        row_from_json(data) for data in json.loads((DOCS / "capabilities.json").read_text(encoding="utf-8"))
    ]
    assert rows, "docs/capabilities.json holds no rows"
    assert latest_per_version(rows) == rows, "one row per adapter and version, in order"
    assert {r.adapter for r in rows} <= set(resolve_builtins())
    assert (DOCS / "capabilities.md").read_text(encoding="utf-8") == markdown(rows), (
        "docs/capabilities.md is not the rendering of docs/capabilities.json: "
        "run tests/real/test_profile_real.py with --update-golden"
    )
