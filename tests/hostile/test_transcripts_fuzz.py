"""Every transcript reader, fed hostile files: only events and issues come back, never an exception.

Each registered family whose ``transcripts()`` returns a reader is fuzzed
(a family that gains a reader is picked up without a change here). The junk
is random bytes, the family's own golden lines with their values swapped for
wrong types (strings for numbers, lists for objects, nulls, huge and negative
ints, floats, NaN, lone surrogates, deep nesting), and golden lines cut short.
For a JSON-lines reader the junk is followed by the whole golden file, which
must still be read exactly as it is alone: a bad line costs only itself.

What holds for every item: it is a ``TraceEvent``, ``SessionMeta`` or a
``TraceIssue`` naming the file; it serialises (no lone surrogate survives);
a usage figure is an int >= 0 or none, and never more than the numbers the
file holds (a reader cannot invent a count). Readers of databases
(``incremental = False``) get random bytes and corrupted copies of their
golden database. A file that is missing, vanished, a directory, a symlink or
truncated while read is an issue, not an exception. One 50 MB line per family.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tackroom.adapters.resolve import load_adapters
from tackroom.families import family_names, get_family
from tackroom.probe.builtin import glob_regex
from tackroom.trace.events import FIGURES, Record, SessionStarted, UsageReport
from tackroom.trace.model import (
    FIGURE_BITS,
    R_UNKNOWN,
    Cursor,
    SessionMeta,
    TraceEvent,
    TraceIssue,
    TraceItem,
    TranscriptReader,
    usage_row,
)

GOLDEN = Path(__file__).resolve().parent.parent / "golden"

# A few seconds per family; CI may raise it (the shared fuzz budget variable).
FUZZ = settings(
    max_examples=min(int(os.environ.get("TACKROOM_FUZZ_EXAMPLES", "60")), 400),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


def _readers() -> list[str]:
    return [name for name in family_names() if get_family(name).transcripts() is not None]


READERS = _readers()
JSONL_READERS = [name for name in READERS if get_family(name).transcripts().incremental]  # type: ignore[union-attr]
DB_READERS = [name for name in READERS if name not in JSONL_READERS]


def reader_of(family: str) -> TranscriptReader:
    reader = get_family(family).transcripts()
    assert reader is not None
    return reader


@dataclass(frozen=True)
class Sample:
    """A family's golden case: its files, one file to plant after junk, and what reading it alone gives."""

    root: Path
    target: Path
    """Relative to ``root``: the golden file the junk goes in front of."""
    content: bytes
    records: tuple[dict[str, Any], ...]
    """Its lines as JSON objects (empty when the format is not JSON lines)."""
    events: tuple[str, ...]
    """Its events read alone, without session and line (junk before it shifts both)."""


@cache
def sample(family: str) -> Sample | None:
    """The golden case of ``family`` (the first, by name), or None when it has none yet."""
    adapters = load_adapters()
    for meta in sorted(GOLDEN.glob("*/transcripts/*/meta.json")):
        adapter = adapters.get(json.loads(meta.read_text())["adapter"])
        if adapter is None or adapter.family != family or adapter.spec.transcripts is None:
            continue
        root = meta.parent / "files"
        pattern = glob_regex(adapter.spec.transcripts.glob)
        files = sorted(
            (p for p in root.rglob("*") if p.is_file() and pattern.fullmatch(p.relative_to(root).as_posix())),
            key=lambda p: (len(p.relative_to(root).parts), p.name),
        )
        if not files:
            continue
        target = files[0]  # the shallowest: a main session, not a subagent's
        content = target.read_bytes()
        return Sample(
            root, target.relative_to(root), content, _records(content), _events(reader_of(family), target)
        )
    return None


def _records(content: bytes) -> tuple[dict[str, Any], ...]:
    found = []
    for line in content.splitlines():
        try:
            data = json.loads(line)
        except ValueError:
            return ()
        if not isinstance(data, dict):
            return ()
        found.append(data)
    return tuple(found)


def _events(reader: TranscriptReader, path: Path) -> tuple[str, ...]:
    return tuple(_event_key(i) for i in reader.read(path, Cursor()) if _comparable(i))


def _comparable(item: TraceItem) -> bool:
    """An event whose content comes from its own line alone, whatever lines came before it.

    Junk of the harness's own shape may legitimately set a reader's state: name the session first
    (SessionStarted comes once), set the model (codex's turn_context), or move a cumulative usage
    counter (codex's token_count), so usage after junk is not compared here (the golden tests pin it).
    """
    return isinstance(item, TraceEvent) and not isinstance(item.event, SessionStarted | UsageReport)


def _event_key(item: TraceItem) -> str:
    assert isinstance(item, TraceEvent)
    data = item.to_json()
    for carried in ("session_id", "line", "model", "key"):
        data.pop(carried, None)
    return json.dumps(data, sort_keys=True)


# --- what must hold for any file ----------------------------------------------------------------


def check(path: Path, items: list[TraceItem], data: bytes | None = None) -> None:
    """Every item is well formed; usage is never negative nor more than the file's numbers allow.

    A usage count read from a line that holds no JSON integer at all was invented (a missing figure
    written as 0): it must be none.
    """
    bound = _bound(data) if data is not None else None
    lines = data.split(b"\n") if data is not None else []
    for item in items:
        assert isinstance(item, TraceEvent | SessionMeta | TraceIssue), item
        if isinstance(item, TraceIssue):
            assert item.path == path and item.line >= 0 and item.message, item
            orjson.dumps(item.to_json())
            continue
        orjson.dumps(item.to_json())  # refuses lone surrogates: whatever is kept can be stored and shown
        if isinstance(item, TraceEvent):
            assert item.line >= 0
            if isinstance(item.event, UsageReport):
                usage = item.event.usage
                for name in FIGURES:
                    value = getattr(usage, name)
                    assert value is None or (type(value) is int and value >= 0), (name, value)
                    if value is not None and bound is not None:
                        assert value <= bound, f"{name}={value}: more than all the numbers in the file"
                if 0 < item.line <= len(lines) and not _has_int(lines[item.line - 1]):
                    assert not any(getattr(usage, n) is not None for n in FIGURES), f"invented: {usage}"


def _bound(data: bytes) -> int:
    """The sum of every digit run in the file: no count read from it can be larger."""
    return sum(int(run) for run in re.findall(rb"\d+", data))


def _has_int(line: bytes) -> bool:
    """Whether ``line`` is JSON holding an integer anywhere (True when it is not JSON: nothing to say)."""
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return True
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, int) and not isinstance(value, bool):
            return True
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return False


def read_all(reader: TranscriptReader, path: Path) -> list[TraceItem]:
    """A full read and a usage-only read from the start; the cursor stays within the file."""
    cursor = Cursor()
    items = list(reader.read(path, cursor))
    fast = list(reader.read(path, Cursor(), usage_only=True))
    try:
        size = path.stat().st_size
    except OSError:
        size = 0
    assert 0 <= cursor.offset <= max(size, 0) or not reader.incremental
    check(path, fast)
    # The rows a report reads say what the full read says, call for call; the problems it meets are
    # the full read's (a fast path passes over lines that cannot hold usage, unparsed).
    rows = list(reader.usage(path, Cursor()))
    calls = [usage_row(i) for i in items if isinstance(i, TraceEvent) and isinstance(i.event, UsageReport)]
    assert calls == [[*r[:R_UNKNOWN], r[R_UNKNOWN] & FIGURE_BITS] for r in rows if isinstance(r, list)]
    issues = [i for i in items if isinstance(i, TraceIssue)]
    assert all(i in issues for i in rows if isinstance(i, TraceIssue))
    return items


# --- hostile JSON ---------------------------------------------------------------------------

_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([-1, 0, 2**63, 2**64 + 1, -(2**63), 10**30]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.sampled_from(["\ud800", "a\udfffb", "\ud83d", "12", "-5", "1e9", "", "null", "NaN"]),
)
HOSTILE = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _replace(value[head], rest, new)}
    copy = list(value)
    copy[head] = _replace(copy[head], rest, new)
    return copy


def _numbers_to(value: Any, new: Any) -> Any:
    """Every number in ``value`` swapped for ``new``: a string, a list, a negative... where a count goes."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return new
    if isinstance(value, dict):
        return {k: _numbers_to(v, new) for k, v in value.items()}
    if isinstance(value, list):
        return [_numbers_to(v, new) for v in value]
    return value


def _fresh_ids(value: Any) -> Any:
    """``value`` with every id (a string under a key naming an id) made its own: ``junk-<id>``.

    Readers merge records that share an id (a message rewritten, a streamed block re-emitted), so
    junk that copies a golden id may rightly change how the golden line after it is read.
    """
    if isinstance(value, dict):
        return {
            k: f"junk-{v}" if isinstance(v, str) and "id" in str(k).lower() else _fresh_ids(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_fresh_ids(v) for v in value]
    return value


@st.composite
def wrong_types(draw: st.DrawFn, records: tuple[dict[str, Any], ...], fresh: bool = False) -> bytes:
    """A golden line with some of its values (or all its numbers) replaced by hostile ones."""
    record = draw(st.sampled_from(records))
    if fresh:
        record = _fresh_ids(record)
    if draw(st.booleans()):
        record = _numbers_to(record, draw(HOSTILE))
    paths = _paths(record)
    for path in draw(st.lists(st.sampled_from(paths), max_size=4)) if paths else []:
        try:
            record = _replace(record, path, draw(HOSTILE))
        except (KeyError, IndexError, TypeError):
            continue  # an earlier swap removed this path
    # ensure_ascii keeps lone surrogates as \\ud800 escapes, as a harness's JSON encoder may write them.
    return json.dumps(record, ensure_ascii=True, allow_nan=True).encode()


@st.composite
def cut_lines(draw: st.DrawFn, content: bytes) -> bytes:
    """A golden line cut short anywhere, mid UTF-8 sequence included."""
    lines = [line for line in content.splitlines() if line.strip()]
    line = draw(st.sampled_from(lines))
    return line[: draw(st.integers(min_value=0, max_value=max(len(line) - 1, 0)))]


def junk_for(item: Sample, fresh: bool = False) -> st.SearchStrategy[bytes]:
    options = [st.binary(max_size=2048), cut_lines(item.content)]
    if item.records:
        options.append(wrong_types(item.records, fresh))
        options.append(HOSTILE.map(lambda v: json.dumps(v, ensure_ascii=True, allow_nan=True).encode()))
    return st.lists(st.one_of(options), min_size=1, max_size=4).map(b"\n".join)


def _setup(family: str, tmp: Path) -> tuple[Sample, Path]:
    item = sample(family)
    if item is None:
        pytest.skip(f"{family}: no golden transcript case yet (tests/golden/<family>/transcripts/)")
    shutil.copytree(item.root, tmp, dirs_exist_ok=True)  # sidecars (a subagent's .meta.json) come along
    return item, tmp / item.target


# --- the properties -------------------------------------------------------------------------


@pytest.mark.parametrize("family", JSONL_READERS)
def test_lines_after_junk_are_still_read(family: str, tmp_path: Path) -> None:
    reader = reader_of(family)
    item, path = _setup(family, tmp_path / "case")
    if not item.records:
        pytest.skip(
            f"{family}: its transcripts are not JSON lines; junk may legitimately change what follows"
        )

    @FUZZ
    @given(junk=junk_for(item, fresh=True))
    @example(junk=b'{"":[18446744073709551617,"\\ud800"]}')  # beyond 64 bits, where orjson gives up
    @example(
        junk=b'{"type":"assistant","sessionId":"s","message":{"model":"m","usage":{"output_tokens":NaN}}}'
    )
    @example(junk=b'{"type":"assistant","sessionId":"s","message":{"model":"m","usage":{"input_tokens":-5}}}')
    def run(junk: bytes) -> None:
        data = junk + b"\n" + item.content
        path.write_bytes(data)
        items = read_all(reader, path)
        check(path, items, data)
        events = tuple(_event_key(i) for i in items if _comparable(i))
        assert events[len(events) - len(item.events) :] == item.events, "the golden lines after the junk"

    run()


@pytest.mark.parametrize("family", READERS)
def test_any_bytes_give_only_events_and_issues(family: str, tmp_path: Path) -> None:
    reader = reader_of(family)
    item, path = _setup(family, tmp_path / "case")

    @FUZZ
    @given(data=st.one_of(st.binary(max_size=4096), junk_for(item)), at_end=st.booleans())
    def run(data: bytes, at_end: bool) -> None:
        if at_end:  # junk after good lines: a harness that died mid-write
            data = item.content + data
        path.write_bytes(data)
        check(path, read_all(reader, path), data)

    run()


@pytest.mark.parametrize("family", READERS)
def test_corrupted_golden_files(family: str, tmp_path: Path) -> None:
    """The golden file with bytes overwritten, deleted or cut: a database's pages, a log's lines."""
    reader = reader_of(family)
    item, path = _setup(family, tmp_path / "case")
    size = len(item.content)

    @FUZZ
    @given(
        edits=st.lists(
            st.tuples(
                st.integers(min_value=0, max_value=max(size - 1, 0)), st.binary(min_size=1, max_size=64)
            ),
            max_size=6,
        ),
        cut=st.one_of(st.none(), st.integers(min_value=0, max_value=size)),
    )
    def run(edits: list[tuple[int, bytes]], cut: int | None) -> None:
        data = bytearray(item.content)
        for at, new in edits:
            data[at : at + len(new)] = new
        if cut is not None:
            data = data[:cut]
        path.write_bytes(bytes(data))
        check(path, read_all(reader, path), bytes(data))

    run()


@pytest.mark.parametrize("family", JSONL_READERS)
def test_deep_nesting_and_a_50mb_line(family: str, tmp_path: Path) -> None:
    reader = reader_of(family)
    item, path = _setup(family, tmp_path / "case")
    if not item.records:
        pytest.skip(f"{family}: its transcripts are not JSON lines")
    big = dict(item.records[0], pad="x" * (50 * 1024 * 1024))
    junk = [
        b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
        b"[" * 1_000_000,
        json.dumps(dict(item.records[0], deep=0)).encode().replace(b'"deep": 0', b'"deep": ' + _nest(5000)),
        orjson.dumps(big),
    ]
    data = b"\n".join(junk) + b"\n" + item.content
    path.write_bytes(data)
    del big, junk
    started = time.monotonic()
    items = list(reader.read(path, Cursor()))
    took = time.monotonic() - started
    check(path, items)
    events = tuple(_event_key(i) for i in items if _comparable(i))
    assert events[len(events) - len(item.events) :] == item.events
    issues = [i for i in items if isinstance(i, TraceIssue)]
    assert {i.line for i in issues} >= {1, 2}, "the two over-nested lines are reported by line"
    assert took < 30, f"{family}: {took:.1f}s for a 50 MB line"


def _nest(depth: int) -> bytes:
    return b"[" * depth + b"1" + b"]" * depth


@pytest.mark.parametrize("family", READERS)
def test_a_file_that_cannot_be_read_is_an_issue(family: str, tmp_path: Path) -> None:
    reader = reader_of(family)
    item, path = _setup(family, tmp_path / "case")
    outside = tmp_path / "outside.jsonl"
    outside.write_bytes(item.content)
    cases = {
        "missing": tmp_path / "case" / "vanished.jsonl",
        "a directory": tmp_path / "case",
        "under a file": path / "below.jsonl",
        "a symlink out of the root": tmp_path / "case" / "link.jsonl",
    }
    cases["a symlink out of the root"].symlink_to(outside)
    for what, target in cases.items():
        items = list(reader.read(target, Cursor()))
        assert any(isinstance(i, TraceIssue) for i in items), f"{what}: reported"
        assert not any(isinstance(i, TraceEvent) for i in items), f"{what}: nothing read"
        check(target, items)


@pytest.mark.parametrize("family", READERS)
def test_a_fifo_where_a_log_should_be_does_not_hang_the_reader(family: str, tmp_path: Path) -> None:
    reader = reader_of(family)
    _item, path = _setup(family, tmp_path / "case")
    path.unlink()
    os.mkfifo(path)
    found: list[TraceItem] = []
    thread = threading.Thread(target=lambda: found.extend(reader.read(path, Cursor())), daemon=True)
    thread.start()
    thread.join(10)
    assert not thread.is_alive(), f"{family}: reading a FIFO blocks (nothing will ever write to it)"
    assert [type(i) for i in found if not isinstance(i, SessionMeta)] == [TraceIssue]


@pytest.mark.parametrize("family", READERS)
def test_a_file_that_vanishes_between_listing_and_reading(family: str, tmp_path: Path) -> None:
    reader = reader_of(family)
    _item, path = _setup(family, tmp_path / "case")
    listed = [p for p in (tmp_path / "case").rglob("*") if p.is_file()]
    assert path in listed
    path.unlink()
    items = list(reader.read(path, Cursor()))
    assert [type(i) for i in items if not isinstance(i, SessionMeta)] == [TraceIssue]
    check(path, items)


@pytest.mark.parametrize("family", JSONL_READERS)
def test_a_file_truncated_while_it_is_read(family: str, tmp_path: Path) -> None:
    reader = reader_of(family)
    item, path = _setup(family, tmp_path / "case")
    # Larger than one read chunk, so the reader goes back to the file after the truncation.
    path.write_bytes(item.content * (2 * 1024 * 1024 // max(len(item.content), 1) + 2))
    cursor = Cursor()
    stream = reader.read(path, cursor)
    first = [item for item in [next(stream, None)] if item is not None]
    path.write_bytes(b"")
    rest = list(stream)
    check(path, [*first, *rest])
    assert cursor.offset <= 2 * 1024 * 1024 + 2 * len(item.content) * 2


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode")
@pytest.mark.parametrize("family", READERS)
def test_an_unreadable_file_is_an_issue(family: str, tmp_path: Path) -> None:
    reader = reader_of(family)
    _item, path = _setup(family, tmp_path / "case")
    path.chmod(0)
    try:
        items = list(reader.read(path, Cursor()))
    finally:
        path.chmod(0o600)
    assert [type(i) for i in items if not isinstance(i, SessionMeta)] == [TraceIssue]


@pytest.mark.parametrize("family", DB_READERS)
def test_a_database_reader_takes_random_and_empty_files(family: str, tmp_path: Path) -> None:
    reader = reader_of(family)
    item, path = _setup(family, tmp_path / "case")
    for data in (b"", b"SQLite format 3\x00" + b"\xff" * 4096, os.urandom(8192), item.content[:100]):
        path.write_bytes(data)
        items = read_all(reader, path)
        check(path, items, data)
        assert not any(isinstance(i, TraceEvent) and not isinstance(i.event, Record) for i in items) or data


def test_every_reader_is_fuzzed() -> None:
    """A family with a reader is in the lists above: the parametrization cannot silently miss one."""
    assert "claude-code" in JSONL_READERS
    assert set(READERS) == set(JSONL_READERS) | set(DB_READERS)


def test_a_schema_damaged_into_bytes_that_are_not_utf8_is_an_issue(tmp_path: Path) -> None:
    """Found by the fuzzer: SQLite's message about such a schema is not UTF-8, and Python's sqlite3
    raised UnicodeDecodeError decoding it (this golden file, these bytes)."""
    reader = reader_of("opencode")
    item, path = _setup("opencode", tmp_path / "case")
    data = bytearray(item.content)
    data[71799 : 71799 + 6] = b"\x00\x00\x00\x00\x00\x80"
    path.write_bytes(bytes(data))
    found = read_all(reader, path)
    check(path, found, bytes(data))
    assert any(isinstance(x, TraceIssue) and "cannot be read" in x.message for x in found)
