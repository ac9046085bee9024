"""Pi's and omp's session logs: what the golden files do not show (forks, bad lines, resumes)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tackroom.families import get_family
from tackroom.families.pi.transcripts import PiTranscripts, session_of
from tackroom.mock.script import Script, Turn
from tackroom.trace.events import Record, UsageReport
from tackroom.trace.model import Cursor, SessionMeta, TraceEvent, TraceIssue, TraceItem

GOLDEN = Path(__file__).parent / "golden" / "pi" / "transcripts"
PI = GOLDEN / "resume-fork-0.73.1" / "files" / "--tmp-rb-ws-pi--"
ORIGINAL = PI / "2026-12-01T13-18-19-818Z_01a231c1-94a8-76dd-a9fb-86503b654b9a.jsonl"
FORK = PI / "2026-12-01T13-19-53-282Z_01a231c3-01c0-76a1-a386-98bb735f961e.jsonl"

HEADER = {"type": "session", "version": 3, "id": "s-1", "timestamp": "2026-12-02T10:00:00.000Z", "cwd": "/w"}


def _assistant(entry: str, stamp: str, usage: dict[str, Any]) -> dict[str, Any]:
    message = {"role": "assistant", "content": [{"type": "text", "text": "hi"}], "model": "m", "usage": usage}
    return {"type": "message", "id": entry, "parentId": None, "timestamp": stamp, "message": message}


def _write(path: Path, *lines: dict[str, Any] | str) -> Path:
    text = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    path.write_text(text, encoding="utf-8")
    return path


def _read(path: Path, cursor: Cursor | None = None, usage_only: bool = False) -> list[TraceItem]:
    return list(PiTranscripts().read(path, cursor or Cursor(), usage_only=usage_only))


def _usage(items: list[TraceItem]) -> list[tuple[str | None, dict[str, Any]]]:
    return [
        (i.key, i.event.usage.to_json())
        for i in items
        if isinstance(i, TraceEvent) and isinstance(i.event, UsageReport)
    ]


def test_both_families_read_with_this_reader() -> None:
    assert isinstance(get_family("pi").transcripts(), PiTranscripts)


def test_a_fork_does_not_count_its_parents_calls_again() -> None:
    original, fork = _usage(_read(ORIGINAL)), _usage(_read(FORK))
    assert [u["input"] for _, u in original] == [700, 790, 880]
    # The fork copies all three calls (same entry ids and times) and makes one of its own.
    assert [u["input"] for _, u in fork] == [970]
    assert not {k for k, _ in original} & {k for k, _ in fork}
    [meta] = [i for i in _read(FORK) if isinstance(i, SessionMeta)]
    assert meta.parent_id == "01a231c1-94a8-76dd-a9fb-86503b654b9a"
    assert meta.started == "2026-12-01T13:19:53.282Z"  # its own header, not the copies' times


def test_the_copies_keep_the_keys_of_the_calls_they_copy() -> None:
    """Were the copies counted (an older reader, or a copy newer than its header), they would collapse."""
    entries = [json.loads(line) for line in FORK.read_text().splitlines()]
    copied = {
        f"{e['id']}@{e['timestamp']}"
        for e in entries
        if e.get("type") == "message"
        and e["message"].get("role") == "assistant"
        and e["timestamp"] < entries[0]["timestamp"]
    }
    assert copied == {k for k, _ in _usage(_read(ORIGINAL))}


def test_a_resumed_session_read_on_from_its_cursor_counts_only_the_new_call(tmp_path: Path) -> None:
    lines = ORIGINAL.read_bytes().splitlines(keepends=True)
    path = tmp_path / ORIGINAL.name
    path.write_bytes(b"".join(lines[:7]))  # the first run: two calls
    cursor = Cursor()
    first = _usage(_read(path, cursor))
    with path.open("ab") as handle:
        handle.write(b"".join(lines[7:]))  # pi --session <id>: the resumed run appends
    second = _usage(_read(path, cursor))
    assert [u["input"] for _, u in first] == [700, 790]
    assert [u["input"] for _, u in second] == [880]
    assert cursor.state["session"] == "01a231c1-94a8-76dd-a9fb-86503b654b9a"


def test_a_truncated_last_line_is_read_once_it_is_whole(tmp_path: Path) -> None:
    whole = json.dumps(_assistant("e1", "2026-12-02T10:00:01.000Z", {"input": 5, "output": 6}))
    path = _write(tmp_path / "2026_s-1.jsonl", HEADER)
    with path.open("a") as handle:
        handle.write(whole[:40])
    cursor = Cursor()
    assert _usage(_read(path, cursor)) == []
    with path.open("a") as handle:
        handle.write(whole[40:] + "\n")
    [(key, usage)] = _usage(_read(path, cursor))
    assert key == "e1@2026-12-02T10:00:01.000Z"
    assert usage["input"] == 5


def test_wrong_types_are_unknown_or_ignored_never_a_crash(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "2026_s-1.jsonl",
        HEADER,
        _assistant("e1", "2026-12-02T10:00:01.000Z", {"input": "12", "output": 3.5, "cacheRead": None}),
        {"type": "message", "id": 7, "timestamp": 12, "message": "not an object"},
        {"type": "message", "message": {"role": "assistant", "content": "text", "usage": [1, 2]}},
        {"type": ["session"], "id": {}},
        {
            "type": "message",
            "message": {"role": "user", "content": [{"type": "text"}, {"type": "text", "text": 5}]},
        },
        "[1, 2, 3]",
        "not json",
    )
    items = _read(path)
    [(_, usage)] = _usage(items)
    assert usage["input"] == usage["output"] == usage["cache_read"] == "unknown"
    issues = [i for i in items if isinstance(i, TraceIssue)]
    assert [i.line for i in issues] == [7, 8]
    assert all(i.path == path for i in issues)


def test_an_all_zero_usage_is_not_a_call(tmp_path: Path) -> None:
    zero = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}
    path = _write(tmp_path / "2026_s-1.jsonl", HEADER, _assistant("e1", "2026-12-02T10:00:01.000Z", zero))
    assert _usage(_read(path)) == []


def test_unknown_entry_types_are_kept_whole(tmp_path: Path) -> None:
    entry = {"type": "hologram", "id": "e9", "timestamp": "2026-12-02T10:00:09.000Z", "deep": {"x": [1]}}
    path = _write(tmp_path / "2026_s-1.jsonl", HEADER, entry)
    [record] = [i for i in _read(path) if isinstance(i, TraceEvent) and isinstance(i.event, Record)][1:]
    assert record.event.record_type == "hologram"  # type: ignore[attr-defined]
    assert json.loads(record.event.raw) == entry
    assert record.session_id == "s-1"


def test_a_file_without_a_header_takes_its_session_from_its_name(tmp_path: Path) -> None:
    path = _write(tmp_path / "2026-12-02T10-00-00-000Z_abc.jsonl", _assistant("e1", "t", {"input": 1}))
    [usage] = [i for i in _read(path) if isinstance(i, TraceEvent) and i.event.kind == "usage"]
    assert usage.session_id == "abc"
    assert session_of("/x/y/2026_uuid-1.jsonl") == "uuid-1"
    assert session_of("no-underscore.jsonl") is None


def test_omps_title_line_before_the_header_is_kept_in_order(tmp_path: Path) -> None:
    source = next((GOLDEN / "omp-resume-18.2.3" / "files").rglob("*.jsonl"))
    path = tmp_path / source.name
    data = source.read_bytes()
    first_line = data.index(b"\n") + 1
    path.write_bytes(data[:first_line])
    cursor = Cursor()
    assert _read(path, cursor) == []  # the title is held until the header names the session
    with path.open("ab") as handle:
        handle.write(data[first_line:])
    later = [i for i in _read(path, cursor) if isinstance(i, TraceEvent)]
    assert [(i.line, i.event.kind) for i in later[:3]] == [
        (2, "session_started"),
        (1, "record"),
        (2, "record"),
    ]
    assert {i.session_id for i in later} == {"01a231c2-035b-76d6-95bf-1e5388269698"}


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=400), st.integers(min_value=0, max_value=3000))
def test_random_bytes_never_crash(tmp_path_factory: Any, junk: bytes, cut: int) -> None:
    path = tmp_path_factory.mktemp("pi") / "2026_s.jsonl"
    shutil.copy(ORIGINAL, path)
    data = path.read_bytes()
    path.write_bytes(data[:cut] + junk + b"\n" + data[cut:])
    items = _read(path)
    assert all(isinstance(i, TraceEvent | SessionMeta | TraceIssue) for i in items)
    assert _read(path, usage_only=True) is not None


def test_omps_title_rewritten_in_place_is_seen_on_the_next_read(tmp_path: Path) -> None:
    source = next((GOLDEN / "omp-resume-18.2.3" / "files").rglob("*.jsonl"))
    path = tmp_path / source.name
    shutil.copy(source, path)
    cursor = Cursor()
    [before] = [i for i in _read(path, cursor) if isinstance(i, SessionMeta)]
    assert before.title is None  # omp writes "" until it has one
    data = path.read_bytes()
    first = data[: data.index(b"\n")]
    title = json.loads(first)
    title["title"] = "Fix the build"
    title["pad"] = title["pad"][: len(title["pad"]) - len("Fix the build")]
    line = json.dumps(title, separators=(",", ":")).encode()
    assert len(line) == len(first)
    path.write_bytes(line + data[len(first) :])
    [after] = [i for i in _read(path, cursor) if isinstance(i, SessionMeta)]
    assert after.title == "Fix the build"
    assert after.session_id == "01a231c2-035b-76d6-95bf-1e5388269698"


SCRIPT = Script([Turn.call("shell", {"command": "echo hi > out.txt"}), Turn.reply("DONE")])


def _real(name: str, tmp_path: Path) -> tuple[Any, list[TraceItem]]:
    """Run the real harness against the mock, then read the session log it wrote in its run's home."""
    data = _installed(name)
    from tackroom.run.runner import run

    workdir = tmp_path / "work"
    workdir.mkdir()
    environ = {**os.environ, "XDG_DATA_HOME": data}
    result = run(
        name,
        "run the shell",
        workdir=workdir,
        mock=SCRIPT,
        runs_dir=tmp_path / "runs",
        environ=environ,
        timeout_s=120,
    )
    assert result.ok, result.error
    agent = "pi" if name == "pi" else "omp"
    [log] = (result.run_dir / "home" / f".{agent}" / "agent" / "sessions").glob("*/*.jsonl")
    return result, _read(log)


def _installed(harness: str) -> str:
    """The data dir where the real harness is installed (as tests/real has it), else the test is skipped."""
    root = Path(__file__).resolve().parents[1]
    data = os.environ.get("TACKROOM_TEST_DATA") or str(root / ".cache" / "tackroom-test")
    if not (Path(data) / "tackroom" / "harnesses" / harness).is_dir():
        pytest.skip(f"{harness} is not installed under {data}")
    return data


@pytest.mark.real
@pytest.mark.parametrize("name", ["pi", "omp"])
def test_the_real_harness_log_holds_the_usage_its_stream_reported(name: str, tmp_path: Path) -> None:
    result, items = _real(name, tmp_path)
    usage = [i.event.usage for i in items if isinstance(i, TraceEvent) and isinstance(i.event, UsageReport)]
    total = sum(usage[1:], usage[0])
    for figure in ("input", "output", "cache_read"):
        assert total.state(figure) == result.usage.state(figure), figure
    [meta] = [i for i in items if isinstance(i, SessionMeta)]
    assert meta.session_id == result.session_id
