"""Golden transcripts: session logs recorded from the real harnesses, read by their family's reader.

``tests/golden/<family>/transcripts/<case>/`` holds ``files/`` (the logs, laid
out as under the adapter's transcript root), ``meta.json`` (the adapter, the
harness version that wrote them, how they were recorded) and ``expected.json``
(each file's items: events without their raw lines, sessions, issues; and
where the cursor stopped). ``pytest --update-golden`` rewrites
``expected.json`` from the current reader; review the diff.

Beyond the recorded answer, every case checks what must hold for any reader:
the usage fast path yields the same usage as the full read, and a file read
in two parts (a harness still appending) yields what one read of it yields.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tackroom.adapters.resolve import load_adapters
from tackroom.families import get_family
from tackroom.paths import glob_regex
from tackroom.trace.model import (
    R_KEY,
    R_MODEL,
    R_SESSION,
    R_TS,
    Cursor,
    SessionMeta,
    TraceEvent,
    TraceIssue,
    TraceItem,
    TranscriptReader,
    row_usage,
)

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(p.parent for p in GOLDEN.glob("*/transcripts/*/meta.json"))


def _reader(case: Path) -> tuple[TranscriptReader, str]:
    meta = json.loads((case / "meta.json").read_text())
    adapter = load_adapters()[meta["adapter"]]
    reader = get_family(adapter.family).transcripts()
    assert reader is not None, f"{adapter.name}: its family has no transcript reader"
    assert adapter.spec.transcripts is not None
    return reader, adapter.spec.transcripts.glob


def _files(case: Path, glob: str) -> list[Path]:
    root = case / "files"
    pattern = glob_regex(glob)
    return sorted(
        p for p in root.rglob("*") if p.is_file() and pattern.fullmatch(p.relative_to(root).as_posix())
    )


def item_json(item: TraceItem, root: Path) -> dict[str, Any]:
    if isinstance(item, TraceEvent):
        return {"item": "event", **item.to_json()}
    if isinstance(item, SessionMeta):
        return {"item": "session", **item.to_json()}
    return {
        "item": "issue",
        "path": item.path.relative_to(root).as_posix(),
        "line": item.line,
        "message": item.message,
    }


def read_case(case: Path) -> dict[str, Any]:
    reader, glob = _reader(case)
    root = case / "files"
    out: dict[str, Any] = {}
    for path in _files(case, glob):
        cursor = Cursor()
        items = [item_json(item, root) for item in reader.read(path, cursor)]
        out[path.relative_to(root).as_posix()] = {
            "cursor": {"offset": cursor.offset, "line": cursor.line},
            "items": items,
        }
    return out


@pytest.mark.parametrize("case", CASES, ids=[f"{c.parent.parent.name}/{c.name}" for c in CASES])
def test_golden_transcript(case: Path, update_golden: bool) -> None:
    actual = read_case(case)
    assert actual, f"{case}: no file matches the adapter's transcript glob"
    expected_file = case / "expected.json"
    if update_golden:
        expected_file.write_text(json.dumps(actual, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    assert expected_file.exists(), f"{case}: no expected.json; run pytest --update-golden and review it"
    assert actual == json.loads(expected_file.read_text(encoding="utf-8"))


def _usage(items: list[TraceItem]) -> list[tuple[Any, ...]]:
    return [
        (i.session_id, i.key, i.model, i.timestamp, i.event.to_json()["usage"])
        for i in items
        if isinstance(i, TraceEvent) and i.event.kind == "usage"
    ]


def _rows(items: list[Any]) -> list[tuple[Any, ...]]:
    return [
        (r[R_SESSION], r[R_KEY], r[R_MODEL], r[R_TS], row_usage(r).to_json())
        for r in items
        if isinstance(r, list)
    ]


@pytest.mark.parametrize("case", CASES, ids=[f"{c.parent.parent.name}/{c.name}" for c in CASES])
def test_usage_fast_path_agrees_with_the_full_read(case: Path) -> None:
    """Both fast paths (``usage_only`` events, and the rows a report reads) say what the full read says."""
    reader, glob = _reader(case)
    for path in _files(case, glob):
        full = list(reader.read(path, Cursor()))
        fast = list(reader.read(path, Cursor(), usage_only=True))
        rows = list(reader.usage(path, Cursor()))
        assert _usage(fast) == _usage(full), path
        assert _rows(rows) == _usage(full), path
        issues = [i.to_json() for i in full if isinstance(i, TraceIssue)]
        assert [i.to_json() for i in fast if isinstance(i, TraceIssue)] == issues
        assert [i.to_json() for i in rows if isinstance(i, TraceIssue)] == issues
        sessions = {i.session_id for i in full if isinstance(i, SessionMeta)}
        assert {i.session_id for i in rows if isinstance(i, SessionMeta)} == sessions


@pytest.mark.parametrize("case", CASES, ids=[f"{c.parent.parent.name}/{c.name}" for c in CASES])
def test_a_file_read_while_it_grows_reads_the_same(case: Path, tmp_path: Path) -> None:
    """Cut each file at several byte offsets (mid-line too), read, append the rest, read on."""
    reader, glob = _reader(case)
    if not reader.incremental:
        pytest.skip(f"{case.parent.parent.name}: its logs are read whole (rewritten, not appended)")
    root = case / "files"
    for source in _files(case, glob):
        data = source.read_bytes()
        whole = [item_json(i, root) for i in reader.read(source, Cursor()) if not isinstance(i, SessionMeta)]
        for cut in sorted({len(data) // 3, len(data) // 2 + 7, len(data) - 1}):
            copy = tmp_path / source.relative_to(root)
            copy.parent.mkdir(parents=True, exist_ok=True)
            for sidecar in source.parent.glob(source.stem + ".*"):
                if sidecar != source:
                    shutil.copy(sidecar, copy.parent / sidecar.name)
            copy.write_bytes(data[:cut])
            cursor = Cursor()
            parts = list(reader.read(copy, cursor))
            with copy.open("ab") as handle:
                handle.write(data[cut:])
            parts += list(reader.read(copy, cursor))
            events = [item_json(i, tmp_path) for i in parts if not isinstance(i, SessionMeta)]
            assert events == whole, f"{source.name} cut at byte {cut}"
            assert cursor.offset == len(data)
