"""The trace index and usage reports, on Claude Code logs written the way Claude Code writes them.

Totals are counted by hand from the lines each test writes; the reports must
equal them to the token, first time and after appends, rewrites and deletions.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from prockit import children
from tackroom.errors import TraceError
from tackroom.state.db import StateDB
from tackroom.trace import api, index
from tackroom.trace import usage as usage_module
from tackroom.trace.api import Where
from tackroom.trace.index import TraceIndex
from tackroom.trace.usage import UsageOptions, usage_report

SONNET = "claude-sonnet-4-5"


def line(
    session: str,
    ts: str,
    message_id: str | None,
    usage: dict[str, Any] | None,
    *,
    model: str = SONNET,
    request: str | None = "req_1",
    kind: str = "assistant",
    text: str = "ok",
) -> str:
    message: dict[str, Any] = {"role": kind, "content": [{"type": "text", "text": text}]}
    if kind == "assistant":
        message.update(type="message", model=model)
        if message_id is not None:
            message["id"] = message_id
        if usage is not None:
            message["usage"] = usage
    data: dict[str, Any] = {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/u/project",
        "sessionId": session,
        "version": "2.1.197",
        "type": kind,
        "message": message,
        "uuid": f"u-{ts}",
        "timestamp": ts,
    }
    if request is not None and kind == "assistant":
        data["requestId"] = request
    return json.dumps(data, separators=(",", ":"))


def u(i: int, o: int, cr: int = 0, cw: int = 0) -> dict[str, int]:
    return {
        "input_tokens": i,
        "output_tokens": o,
        "cache_read_input_tokens": cr,
        "cache_creation_input_tokens": cw,
    }


@pytest.fixture
def projects(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    path = isolated_home / ".claude" / "projects"
    path.mkdir(parents=True)
    return path


def write(path: Path, *lines: str, end: str = "\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + end, encoding="utf-8")
    return path


def append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)


def daily(**kwargs: Any) -> dict[str, Any]:
    return api.usage("daily", harness="claude-code", timezone="UTC", **kwargs)


def by_day(report: dict[str, Any]) -> dict[str, tuple[Any, ...]]:
    return {
        r["key"]: (r["input"], r["output"], r["cache_read"], r["cache_write"], r["calls"])
        for r in report["rows"]
    }


def test_streamed_lines_of_one_call_count_once_with_their_last_figures(projects: Path) -> None:
    write(
        projects / "-home-u-project" / "s1.jsonl",
        line("s1", "2026-11-01T10:00:00.000Z", None, None, kind="user", text="hi"),
        line("s1", "2026-11-01T10:00:01.000Z", "msg_a", u(10, 1, 100, 5)),
        line("s1", "2026-11-01T10:00:02.000Z", "msg_a", u(10, 7, 100, 5)),  # same call, streamed on
        line("s1", "2026-11-01T10:00:03.000Z", "msg_b", u(3, 4), request="req_2"),
        line("s1", "2026-11-02T09:00:00.000Z", "msg_c", u(1, 2), request=None),
        line("s1", "2026-11-02T09:00:00.000Z", "msg_c", u(1, 2), request=None),
        line("s1", "2026-11-02T09:00:01.000Z", "msg_d", u(0, 0), model="<synthetic>"),
    )
    report = daily()
    assert by_day(report) == {"2026-11-01": (13, 11, 100, 5, 2), "2026-11-02": (1, 2, 0, 0, 1)}
    assert report["totals"]["reasoning"] == "not_reported"  # Claude Code logs no separate figure
    assert report["totals"]["total"] == 13 + 11 + 100 + 5 + 1 + 2


def test_a_scan_says_once_when_its_readers_leave_a_core_free(
    projects: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``released`` (the price table's go): at once when one process reads, when fewer batches than
    workers are left when several do, and with nothing to read as the scan ends; always once."""
    for n in range(12):
        write(
            projects / f"p{n % 3}" / f"s{n}.jsonl",
            line(f"s{n}", "2026-11-01T10:00:00.000Z", f"m{n}", u(n, 1)),
        )
    said: list[str] = []

    def scan(db: str, jobs: int) -> None:
        api.scan(
            harness="claude-code",
            db=StateDB(Path(os.environ["HOME"]) / db),
            jobs=jobs,
            progress=lambda done, total: said.append("read"),
            released=lambda: said.append("released"),
        )

    scan("one.db", 1)
    assert said[0] == "released" and said.count("released") == 1 and said.count("read") >= 1
    said.clear()
    monkeypatch.setattr(index, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(index, "BATCH_FILES", 2)  # six batches for two workers
    scan("two.db", 2)
    assert said == ["read"] * 5 + ["released", "read"]
    said.clear()
    scan("two.db", 2)  # nothing changed: nothing to read
    assert said == ["released"]


def test_a_call_copied_into_another_session_file_counts_once(projects: Path) -> None:
    first = line("s1", "2026-11-01T10:00:01.000Z", "msg_a", u(10, 1))
    write(projects / "p" / "s1.jsonl", first)
    write(
        projects / "p" / "s2.jsonl",
        first.replace('"sessionId":"s1"', '"sessionId":"s2"'),
        line("s2", "2026-11-01T11:00:00.000Z", "msg_b", u(5, 5), request="req_9"),
    )
    assert by_day(daily()) == {"2026-11-01": (15, 6, 0, 0, 2)}


def test_a_repeat_report_reads_nothing_and_an_append_reads_only_the_new_bytes(projects: Path) -> None:
    log = write(projects / "p" / "s1.jsonl", line("s1", "2026-11-01T10:00:00.000Z", "msg_a", u(1, 1)))
    other = write(projects / "p" / "s2.jsonl", line("s2", "2026-11-01T10:00:00.000Z", "msg_z", u(100, 100)))
    first = api.scan(harness="claude-code")
    assert (first.read, first.bytes_read) == (2, log.stat().st_size + other.stat().st_size)
    assert by_day(daily(refresh=False)) == {"2026-11-01": (101, 101, 0, 0, 2)}
    again = api.scan(harness="claude-code")
    assert (again.read, again.bytes_read) == (0, 0)
    generation = TraceIndex(StateDB.default()).generation()

    added = line("s1", "2026-11-01T10:05:00.000Z", "msg_b", u(2, 2), request="req_2") + "\n"
    append(log, added)
    grown = api.scan(harness="claude-code")
    assert (grown.read, grown.bytes_read) == (1, len(added.encode()))
    assert TraceIndex(StateDB.default()).generation() == generation + 1
    assert by_day(daily(refresh=False)) == {"2026-11-01": (103, 103, 0, 0, 3)}


def test_a_half_written_last_line_is_counted_once_it_is_whole(projects: Path) -> None:
    whole = line("s1", "2026-11-01T10:00:00.000Z", "msg_a", u(1, 1))
    later = line("s1", "2026-11-01T10:01:00.000Z", "msg_b", u(4, 4), request="req_2")
    log = write(projects / "p" / "s1.jsonl", whole, later[:50], end="")
    assert by_day(daily()) == {"2026-11-01": (1, 1, 0, 0, 1)}
    append(log, later[50:] + "\n")
    assert by_day(daily()) == {"2026-11-01": (5, 5, 0, 0, 2)}


def test_a_log_rewritten_in_place_or_deleted_is_read_again_or_forgotten(projects: Path) -> None:
    log = write(
        projects / "p" / "s1.jsonl",
        line("s1", "2026-11-01T10:00:00.000Z", "msg_a", u(1, 1)),
        line("s1", "2026-11-01T10:00:01.000Z", "msg_b", u(2, 2), request="req_2"),
    )
    assert by_day(daily())["2026-11-01"][4] == 2
    # Rewritten (compacted) in place: shorter, other content, same inode.
    with log.open("r+", encoding="utf-8") as handle:
        handle.seek(0)
        handle.write(line("s1", "2026-11-03T10:00:00.000Z", "msg_c", u(7, 7)) + "\n")
        handle.truncate()
    assert by_day(daily()) == {"2026-11-03": (7, 7, 0, 0, 1)}
    # Same size, other first bytes (another day): still read again, not appended to.
    text = log.read_text(encoding="utf-8")
    log.write_text(text.replace("2026-11-03", "2026-11-04"), encoding="utf-8")
    assert by_day(daily()) == {"2026-11-04": (7, 7, 0, 0, 1)}
    log.unlink()
    assert daily()["rows"] == []


def test_the_logs_are_never_modified(projects: Path) -> None:
    log = write(projects / "p" / "s1.jsonl", line("s1", "2026-11-01T10:00:00.000Z", "msg_a", u(1, 1)))
    before = (log.read_bytes(), log.stat().st_mtime_ns, sorted(p.name for p in log.parent.iterdir()))
    daily()
    api.list_sessions()
    api.read_trace("s1")
    assert (log.read_bytes(), log.stat().st_mtime_ns, sorted(p.name for p in log.parent.iterdir())) == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a directory whatever its mode")
def test_an_unreadable_directory_is_reported_and_the_rest_read(projects: Path) -> None:
    write(projects / "ok" / "s1.jsonl", line("s1", "2026-11-01T10:00:00.000Z", "msg_a", u(1, 1)))
    locked = projects / "locked"
    write(locked / "s2.jsonl", line("s2", "2026-11-01T10:00:00.000Z", "msg_b", u(2, 2)))
    locked.chmod(0)
    try:
        report = api.scan(harness="claude-code")
        assert [str(i.path) for i in report.issues] == [str(locked)]
        assert by_day(daily(refresh=False)) == {"2026-11-01": (1, 1, 0, 0, 1)}
    finally:
        locked.chmod(0o755)


def test_bad_lines_are_reported_by_file_and_line_and_the_rest_counted(projects: Path) -> None:
    log = write(
        projects / "p" / "s1.jsonl",
        line("s1", "2026-11-01T10:00:00.000Z", "msg_a", u(1, 1)),
        '{"type":"assistant","usage": broken',
        '"a string, not an object" "usage"',
        line(
            "s1",
            "2026-11-01T10:00:02.000Z",
            "msg_b",
            {"input_tokens": "many", "output_tokens": 3},
            request="r2",
        ),
        line("s1", "2026-11-01T10:00:03.000Z", "msg_c", u(4, 4), request="req_3"),
    )
    report = daily()
    # msg_b reported output but its input is a string: input for that day is unknown, never a guess.
    assert report["rows"][0]["input"] == "unknown"
    assert report["rows"][0]["output"] == 8
    with StateDB.default().connect() as db:
        (issues,) = db.execute("SELECT issues FROM trace_files WHERE path = ?", (str(log),)).fetchone()
    assert [number for number, _ in json.loads(issues)] == [2, 3]


def test_days_are_counted_in_the_asked_time_zone(projects: Path) -> None:
    write(projects / "p" / "s1.jsonl", line("s1", "2026-11-01T23:30:00.000Z", "msg_a", u(1, 1)))
    assert list(by_day(daily())) == ["2026-11-01"]
    berlin = api.usage("daily", harness="claude-code", timezone="Europe/Berlin")
    assert [r["key"] for r in berlin["rows"]] == ["2026-11-02"]
    monthly = api.usage("monthly", harness="claude-code", timezone="UTC")
    assert [r["key"] for r in monthly["rows"]] == ["2026-11"]
    assert api.usage("daily", harness="claude-code", timezone="UTC", since="2026-11-02")["rows"] == []


@pytest.mark.parametrize(
    ("group", "asked", "said"),
    [
        ("weekly", {}, "unknown grouping 'weekly'"),
        ("daily", {"since": "yesterday"}, "since 'yesterday' is not a day"),
        ("daily", {"until": "2026-13-01"}, "until '2026-13-01' is not a day"),
    ],
)
def test_a_report_asked_for_badly_is_refused_by_name(
    projects: Path, group: Any, asked: dict[str, str], said: str
) -> None:
    """Never an empty report for a question that cannot be answered: the API says what is wrong."""
    with pytest.raises(TraceError, match=said):
        api.usage(group, harness="claude-code", **asked)


def test_cost_is_priced_per_call_and_unknown_for_a_model_the_table_does_not_know(projects: Path) -> None:
    write(
        projects / "p" / "s1.jsonl",
        line("s1", "2026-11-01T10:00:00.000Z", "msg_a", u(1_000_000, 0)),
        line(
            "s1", "2026-11-01T10:00:01.000Z", "msg_b", u(300_000, 0), request="r2"
        ),  # past the 200k threshold
        line("s1", "2026-11-02T10:00:00.000Z", "msg_c", u(5, 5), model="mock-model-x", request="r3"),
    )
    report = daily()
    day1, day2 = report["rows"]
    # Sonnet 4.5 input: $3 / MTok, and $6 / MTok for a call whose input passes 200k: both calls do.
    assert day1["cost_usd"] == "7.8"
    assert day2["cost_usd"] is None
    assert report["totals"]["cost_usd"] is None  # one unknown part: the total is unknown, not 7.8
    assert api.usage("daily", harness="claude-code", timezone="UTC", cost=False)["totals"]["cost_usd"] is None


def test_reading_in_worker_processes_gives_the_same_report(
    projects: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(12):
        write(
            projects / f"p{n % 3}" / f"s{n}.jsonl",
            *(
                line(f"s{n}", f"2026-11-{1 + k % 5:02d}T10:00:00.000Z", f"m{n}-{k}", u(n, k))
                for k in range(40)
            ),
        )
    serial = daily(jobs=1)
    monkeypatch.setattr(index, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(index, "BATCH_FILES", 2)
    workers = Path(os.environ["HOME"]) / "workers"
    start = index._start_worker

    def started(db: StateDB) -> None:  # the pool forks: each worker runs this, inherited
        with workers.open("a") as out:
            out.write(f"{os.getpid()}\n")
        start(db)

    monkeypatch.setattr(index, "_start_worker", started)
    where = Where.of()
    db = StateDB(Path(os.environ["HOME"]) / "other.db")
    parallel = api.usage("daily", harness="claude-code", timezone="UTC", jobs=2, where=where, db=db)
    assert parallel["rows"] == serial["rows"]
    pids = set(workers.read_text().split())
    assert len(pids) == 2 and str(os.getpid()) not in pids  # six batches, stored by two other processes


def test_sessions_of_runs_are_found_in_their_isolated_homes(projects: Path, isolated_home: Path) -> None:
    run = isolated_home / ".local/share/tackroom/runs/20261201-120000-claude-code-abcdef"
    write(
        run / "home/.claude/projects/-work/s9.jsonl", line("s9", "2026-11-05T10:00:00.000Z", "msg_r", u(3, 3))
    )
    write(projects / "p" / "s1.jsonl", line("s1", "2026-11-01T10:00:00.000Z", "msg_a", u(1, 1)))
    sessions = {s.session_id: s for s in api.list_sessions(harness="claude-code")}
    assert sessions["s9"].run_id == run.name
    assert sessions["s1"].run_id is None
    assert by_day(daily(refresh=False)) == {"2026-11-01": (1, 1, 0, 0, 1), "2026-11-05": (3, 3, 0, 0, 1)}


def test_read_trace_reads_a_session_whole_with_its_subagents(projects: Path) -> None:
    import shutil

    golden = Path(__file__).parent / "golden/claude-code/transcripts/subagents-2.1.332/files"
    shutil.copytree(golden, projects, dirs_exist_ok=True)
    trace = api.read_trace("1bfc3a8c")
    assert trace.session_id == "1bfc3a8c-9a20-4dff-8c1e-48329e059f5e"
    kinds = [e.event.kind for e in trace.events]
    assert kinds.count("usage") == 4 and "tool_call" in kinds and "user_text" in kinds
    # Three nested helpers: the first is the session's, each next one its predecessor's.
    chain, node = [], trace
    while node.children:
        (node,) = node.children
        chain.append(node.meta.agent)
    assert chain == ["helper", "helper", "helper"]
    with pytest.raises(Exception, match="no session"):
        api.read_trace("nope")


def test_a_directory_that_cannot_be_listed_is_reported_even_as_root(projects: Path) -> None:
    """A path longer than the system allows (ENAMETOOLONG) cannot be listed, whoever asks."""
    write(projects / "ok" / "s1.jsonl", line("s1", "2026-11-01T10:00:00.000Z", "msg_a", u(1, 1)))
    fd = os.open(projects, os.O_RDONLY)
    try:
        for _ in range(18):  # 18 components of 250 characters: past PATH_MAX (4096)
            os.mkdir("d" * 250, dir_fd=fd)
            inner = os.open("d" * 250, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)
    report = api.scan(harness="claude-code")
    assert report.issues and all(
        "cannot be" in i.message and "File name too long" in i.message for i in report.issues
    )
    assert by_day(daily(refresh=False)) == {"2026-11-01": (1, 1, 0, 0, 1)}


def test_a_database_log_changes_when_its_write_ahead_log_does(tmp_path: Path) -> None:
    """opencode's new rows sit in opencode.db-wal until a checkpoint: the index must see them."""
    from tackroom.trace.discover import Root, walk

    db = tmp_path / "opencode.db"
    db.write_bytes(b"x" * 100)
    root = Root("opencode", tmp_path, "opencode.db", sidecars=("-wal",))
    (before,) = list(walk(root, []))
    (tmp_path / "opencode.db-wal").write_bytes(b"y" * 7)
    (after,) = list(walk(root, []))
    assert after.size == before.size + 7 and after.path == db
    assert [s.path.name for s in walk(Root("opencode", tmp_path, "*"), [])] == [
        "opencode.db",
        "opencode.db-wal",
    ]


def test_days_in_a_half_hour_zone_split_inside_the_hour(projects: Path) -> None:
    """Reports add up folds of a quarter hour: in UTC+05:30 the day ends at 18:30 UTC, mid-hour."""
    write(
        projects / "p" / "s1.jsonl",
        line("s1", "2026-11-01T18:29:59.000Z", "msg_a", u(1, 1)),
        line("s1", "2026-11-01T18:30:00.000Z", "msg_b", u(2, 2)),
        line("s1", "2026-11-01T18:44:00.000Z", "msg_c", u(4, 4)),
    )
    india = api.usage("daily", harness="claude-code", timezone="Asia/Kolkata")
    assert by_day(india) == {"2026-11-01": (1, 1, 0, 0, 1), "2026-11-02": (6, 6, 0, 0, 2)}
    write(
        projects / "p" / "s2.jsonl",
        line("s2", "2026-11-03T18:14:59.000Z", "msg_d", u(8, 8)),
        line("s2", "2026-11-03T18:15:00.000Z", "msg_e", u(16, 16)),
    )
    nepal = api.usage("daily", harness="claude-code", timezone="Asia/Kathmandu", since="2026-11-03")  # +05:45
    assert by_day(nepal) == {"2026-11-03": (8, 8, 0, 0, 1), "2026-11-04": (16, 16, 0, 0, 1)}


def test_the_price_bands_hold_every_threshold_of_the_price_table() -> None:
    """Folds keep calls apart by :data:`~tackroom.trace.summary.BOUNDS`: a threshold genai-prices
    gains must be added there (a model with another one is priced call by call, slowly)."""
    from genai_prices.data import providers

    from tackroom.trace.summary import BOUNDS

    found = set()
    for provider in providers:
        for model in provider.models:
            for price in model.prices if isinstance(model.prices, list) else [model.prices]:
                for value in vars(getattr(price, "prices", price)).values():
                    found.update(tier.start for tier in getattr(value, "tiers", None) or ())
    assert found and found <= set(BOUNDS), sorted(found - set(BOUNDS))


def _book(tmp_path: Path, thresholds: list[int]) -> Any:
    """A price table for Sonnet with these thresholds: $1 / token of input below the first, then $k+1."""
    from tackroom.prices import PriceBook

    rates = [[str(k + 1), "0", "0", "0"] for k in range(len(thresholds) + 1)]
    table = {SONNET: {"model": SONNET, "provider": "anthropic", "thresholds": thresholds, "rates": rates}}
    (tmp_path / "prices.json").write_text(json.dumps(table), encoding="utf-8")
    return PriceBook(tmp_path / "prices.json")


@pytest.mark.parametrize("thresholds", [[200_000], [150_000], [32_000, 150_000]])
def test_each_call_is_priced_in_its_own_class_whatever_the_thresholds(
    projects: Path, tmp_path: Path, thresholds: list[int]
) -> None:
    """Calls of one hour on both sides of a threshold: thresholds among the fold bands are priced
    from the folds, another (a newer table's) call by call; the cost is the same sum either way."""

    inputs = [10_000, 120_000, 160_000, 210_000, 90_000]
    write(
        projects / "p" / "s1.jsonl",
        *(line("s1", f"2026-11-01T10:0{n}:00.000Z", f"msg_{n}", u(i, 0)) for n, i in enumerate(inputs)),
    )
    api.scan(harness="claude-code")
    options = UsageOptions("daily", "claude-code", timezone="UTC")
    report = usage_report(TraceIndex(StateDB.default()), options, _book(tmp_path, thresholds))
    expected = sum(i * (1 + sum(1 for t in thresholds if i > t)) for i in inputs)
    assert report["totals"]["cost_usd"] == str(expected)


def test_a_copy_with_an_unknown_figure_is_taken_out_by_folding_its_file_again(projects: Path) -> None:
    """A call copied into a second file counts once: its copy comes out of that file's fold by
    subtraction, or, when a figure of it is unknown (which does not subtract), by folding again."""
    best = line("s1", "2026-11-01T10:00:01.000Z", "msg_a", u(10, 1, 3))
    worse = line("s1", "2026-11-01T10:00:00.000Z", "msg_a", {"input_tokens": 10, "output_tokens": -1})
    write(projects / "p" / "a.jsonl", best)
    write(
        projects / "p" / "b.jsonl",
        worse.replace('"sessionId":"s1"', '"sessionId":"s2"'),
        line("s2", "2026-11-01T10:30:00.000Z", "msg_b", u(5, 5), request="r2"),
    )
    report = daily()
    assert by_day(report) == {"2026-11-01": (15, 6, 3, 0, 2)}
    sessions = api.usage("session", harness="claude-code", timezone="UTC")
    assert {r["key"]: r["calls"] for r in sessions["rows"]} == {"s1": 1, "s2": 1}


def test_a_figure_too_large_to_be_a_count_is_unknown_and_the_rest_counted(projects: Path) -> None:
    """Figures above summary.MAX_TOKENS (up to the largest JSON integer a parser takes whole) would not
    add up in the index's 64 bits: they are unknown, like a negative one, never a crash."""
    write(
        projects / "p" / "s1.jsonl",
        line("s1", "2026-11-01T10:00:00.000Z", "msg_a", u(2**64 - 1, 2**63, 2**41, 1)),
        line("s1", "2026-11-01T10:00:01.000Z", "msg_b", u(2**40, 7), request="r2"),
        line("s1", "2026-11-02T10:00:00.000Z", "msg_c", u(3, 4), request="r3"),
    )
    write(projects / "p" / "s2.jsonl", line("s2", "2026-11-01T11:00:00.000Z", "msg_z", u(1, 1)))
    report = daily()
    assert by_day(report) == {
        "2026-11-01": ("unknown", "unknown", "unknown", 1, 3),
        "2026-11-02": (3, 4, 0, 0, 1),
    }
    assert report["rows"][0]["models"][0]["cost_usd"] is None
    assert by_day(daily()) == by_day(report)  # the index and the cached report hold them too


def test_damaged_copy_records_in_the_index_are_an_error_naming_the_fix(projects: Path) -> None:
    write(projects / "p" / "a.jsonl", line("s1", "2026-11-01T10:00:01.000Z", "msg_a", u(10, 1)))
    write(projects / "p" / "b.jsonl", line("s2", "2026-11-01T10:00:01.000Z", "msg_a", u(10, 1)))
    assert by_day(daily()) == {"2026-11-01": (10, 1, 0, 0, 1)}
    db = StateDB.default()
    with db.transaction() as conn:
        conn.execute("UPDATE trace_files SET copies = x'00'")
        conn.execute("UPDATE trace_generation SET value = value + 1")
    with pytest.raises(
        TraceError, match=r"copy records of .*a\.jsonl are damaged: clear the index"
    ) as caught:
        daily(refresh=False)
    fix = str(caught.value).split("(sqlite3 ", 1)[1].split(")", 1)[0]
    database, statements = fix.split(" ", 1)
    with sqlite3.connect(database) as conn:
        conn.executescript(statements.strip("'"))
    assert by_day(daily()) == {"2026-11-01": (10, 1, 0, 0, 1)}  # the fix it names works


def test_a_report_past_64_bits_is_given_but_not_cached(
    projects: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sums of billions of calls at the largest count would not fit the cache's JSON: the report is
    still given whole (Python's integers have no limit), only not kept."""
    write(projects / "p" / "a.jsonl", line("s1", "2026-11-01T10:00:01.000Z", "msg_a", u(10, 1)))
    api.scan(harness="claude-code")
    huge = {"rows": [], "totals": {"input": 2**70}}
    monkeypatch.setattr(usage_module, "_build", lambda *args: huge)
    index = TraceIndex(StateDB.default())
    assert usage_report(index, UsageOptions("daily", "claude-code", timezone="UTC"), None) is huge
    with StateDB.default().connect() as db:
        assert db.execute("SELECT count(*) FROM trace_cache").fetchone() == (0,)


def test_a_call_with_an_unknown_cache_figure_has_an_unknown_cost(projects: Path) -> None:
    """A negative cache read is a contradiction, so the figure is unknown: the cost of its row cannot be
    known either (pricing the other figures alone would present a number lower than what was spent)."""
    bad = {"input_tokens": 10, "output_tokens": 1, "cache_read_input_tokens": -5}
    write(
        projects / "p" / "s1.jsonl",
        line("s1", "2026-11-01T10:00:00.000Z", "msg_a", bad),
        line("s1", "2026-11-02T10:00:00.000Z", "msg_b", u(10, 1, 5), request="r2"),
    )
    report = daily()
    assert by_day(report) == {
        "2026-11-01": (10, 1, "unknown", "not_reported", 1),
        "2026-11-02": (10, 1, 5, 0, 1),
    }
    first, second = report["rows"]
    assert first["cost_usd"] is None and first["models"][0]["cost_usd"] is None
    assert second["cost_usd"] not in (None, "0")  # the same call with every figure known is priced
    assert report["totals"]["cost_usd"] is None


def test_a_files_identity_is_its_first_bytes_as_read(projects: Path) -> None:
    """The head the index keeps (what tells a file rewritten in place) is taken from the bytes the read
    began with: the same as reading them again, for a long log, a short one, a half-written one and an
    empty one."""
    long = [line("s1", f"2026-11-01T10:00:{n:02d}.000Z", f"m{n}", u(n, 1), request=f"{n}") for n in range(40)]
    write(projects / "p" / "long.jsonl", *long)
    write(projects / "p" / "short.jsonl", line("s2", "2026-11-01T10:00:00.000Z", "m", u(1, 1)))
    write(projects / "p" / "half.jsonl", long[0], long[1][:50], end="")
    write(projects / "p" / "empty.jsonl", end="")
    api.scan(harness="claude-code")
    with StateDB.default().connect() as db:
        found = db.execute("SELECT path, head, offset FROM trace_files").fetchall()
    assert len(found) == 4
    for path, head, offset in found:
        assert head == index.head_of(path, min(index.HEAD, max(offset, 1))), path
    assert {Path(p).name: h.split(":")[0] for p, h, _ in found} == {
        "long.jsonl": "1024",
        "short.jsonl": str(len(line("s2", "2026-11-01T10:00:00.000Z", "m", u(1, 1))) + 1),
        "half.jsonl": str(len(long[0]) + 1),  # as far as the read consumed
        "empty.jsonl": "0",
    }


def test_prices_are_derived_in_a_child_process_and_cached(projects: Path, tmp_path: Path) -> None:
    """The first report of a release derives its models' prices in a child (genai-prices' table is
    about 20 MB the report's process does not keep); the next finds them in the cache file."""
    import subprocess
    import sys

    write(projects / "p" / "s1.jsonl", line("s1", "2026-11-01T10:00:00.000Z", "msg_a", u(1_000_000, 0)))
    probe = (
        "import sys\n"
        "from tackroom.trace import api\n"
        "report = api.usage('daily', harness='claude-code', timezone='UTC')\n"
        "print(report['totals']['cost_usd'], 'genai_prices' in sys.modules)\n"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    for _ in range(2):
        found = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, env=env
        )
        assert found.stdout.split() == ["6", "False"], found.stderr  # $6 / MTok past 200k
    assert list((tmp_path / "cache" / "tackroom").glob("prices-*.json"))


def test_a_worker_waits_its_turn_at_the_write_lock_and_gives_up_after_its_patience(tmp_path: Path) -> None:
    """The scan's workers wait for the write lock themselves (_begin), in steps finer than SQLite's."""
    import threading
    import time

    db = StateDB(tmp_path / "state.db")
    waiter = db.open()
    holder = sqlite3.connect(db.path, isolation_level=None, check_same_thread=False)  # released by a timer
    waiter.execute("PRAGMA busy_timeout=0")  # as a scan worker's connection
    try:
        holder.execute("BEGIN IMMEDIATE")
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            index._begin(waiter, patience=0.05)  # the lock is held past its patience: it gives up
        assert not waiter.in_transaction
        release = threading.Timer(0.05, holder.execute, ("COMMIT",))
        release.start()
        started = time.monotonic()
        index._begin(waiter, patience=5)  # taken as soon as the holder lets go
        waited = time.monotonic() - started
        release.join()
        assert waiter.in_transaction and not holder.in_transaction
        assert 0.04 < waited < 2
        waiter.execute("ROLLBACK")
        # An error that is not a busy lock is not waited on.
        waiter.execute("BEGIN")
        with pytest.raises(sqlite3.OperationalError, match="within a transaction"):
            index._begin(waiter, patience=5)
    finally:
        holder.close()
        waiter.close()


def test_a_cached_report_is_worked_out_again_for_another_price_table(
    projects: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Costs come from the installed genai-prices: after an upgrade the same logs are another report."""
    write(projects / "p" / "a.jsonl", line("s1", "2026-11-01T10:00:01.000Z", "msg_a", u(10, 1)))
    api.scan(harness="claude-code")
    index = TraceIndex(StateDB.default())
    options = UsageOptions("daily", "claude-code", timezone="UTC")
    first = usage_report(index, options, None)
    built: list[object] = []
    real_build = usage_module._build
    monkeypatch.setattr(usage_module, "_build", lambda *args: built.append(args) or real_build(*args))
    assert usage_report(index, options, None) == first and not built  # from the cache
    monkeypatch.setattr(usage_module, "table_version", lambda: "999.0.0")
    assert usage_report(index, options, None) == first and len(built) == 1  # worked out again
    assert usage_report(index, UsageOptions("daily", "claude-code", timezone="UTC", cost=False), None)
    assert len(built) == 2


def test_an_index_from_before_calls_were_stored_last_is_read_again(projects: Path) -> None:
    """m007 makes the files' table again with each file's calls as its row's last column: what the
    older index held is dropped, and the next report reads the logs again, to the same figures."""
    from tackroom.state.migrations import MIGRATIONS

    write(projects / "p" / "a.jsonl", line("s1", "2026-11-01T10:00:01.000Z", "msg_a", u(10, 1)))
    path = StateDB.default().path
    older = StateDB(path, upto=[m.__name__ for m in MIGRATIONS].index("m007_trace_calls_stored_last"))
    api.scan(harness="claude-code", db=older)
    before = usage_report(TraceIndex(older), UsageOptions("daily", "claude-code", timezone="UTC"), None)
    with sqlite3.connect(path) as db:
        columns = [row[1] for row in db.execute("PRAGMA table_info(trace_files)")]
        assert columns[-1] == "copies" and db.execute("SELECT count(*) FROM trace_files").fetchone() == (1,)
    index = TraceIndex(StateDB(path))
    with index.db.connect() as db:
        columns = [row[1] for row in db.execute("PRAGMA table_info(trace_files)")]
        assert columns[-1] == "usage" and db.execute("SELECT count(*) FROM trace_files").fetchone() == (0,)
    assert api.scan(harness="claude-code").read == 1
    assert usage_report(index, UsageOptions("daily", "claude-code", timezone="UTC"), None) == before


def test_a_scans_log_is_copied_aside_and_a_copy_that_cannot_start_loses_nothing(
    projects: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scan's write-ahead log is copied into the database by a thread (index._close_aside), and
    no log is left behind; if that thread cannot open the database, the scan's own close copies it
    (nothing printed, nothing lost)."""
    import threading

    from tackroom.errors import StateError

    write(projects / "p" / "a.jsonl", line("s1", "2026-11-01T10:00:01.000Z", "msg_a", u(10, 1)))
    api.scan(harness="claude-code")
    index._finish_checkpoints()
    state = StateDB.default().path
    assert not Path(f"{state}-wal").exists()  # copied and removed by the last connection to close

    real_open = StateDB.open
    refused: list[str] = []

    def open_(self: StateDB) -> sqlite3.Connection:
        if threading.current_thread().name == "tackroom-checkpoint":
            refused.append("checkpoint")
            raise StateError("refused for the test")
        return real_open(self)

    printed: list[object] = []
    monkeypatch.setattr(StateDB, "open", open_)
    monkeypatch.setattr(threading, "excepthook", printed.append)
    write(projects / "p" / "b.jsonl", line("s2", "2026-11-01T11:00:01.000Z", "msg_b", u(20, 2)))
    assert api.scan(harness="claude-code").read == 1
    index._finish_checkpoints()
    assert refused == ["checkpoint"] and printed == []
    assert not Path(f"{state}-wal").exists()
    report = usage_report(
        TraceIndex(StateDB.default()), UsageOptions("daily", "claude-code", timezone="UTC"), None
    )
    assert report["totals"]["input"] == 30 and report["totals"]["calls"] == 2


def _price_children() -> list[int]:
    """This process's children running ``python -m tackroom.prices``."""
    return children(lambda argv: b"tackroom.prices" in argv)


def test_a_first_report_starts_the_price_table_early_and_leaves_no_child(tmp_path: Path) -> None:
    """Nothing cached for this genai-prices release: the child that derives prices is started before
    the logs are read (it imports the table meanwhile), gives what a child started late gives, and
    is gone afterwards, asked or not."""
    from tackroom.prices import PriceBook

    early = PriceBook(tmp_path / "early.json")
    early.warm()
    assert len(_price_children()) == 1
    early.prefetch([SONNET, "no-such-model"])
    assert _price_children() == []
    late = PriceBook(tmp_path / "late.json")
    late.prefetch([SONNET, "no-such-model"])
    assert early.lookup(SONNET) == late.lookup(SONNET) is not None
    assert early.lookup("no-such-model") is None
    unasked = PriceBook(tmp_path / "unasked.json")
    unasked.warm()
    unasked.close()
    assert _price_children() == []
    early.save()
    cached = PriceBook(tmp_path / "early.json")
    cached.warm()  # its release's prices are cached: nothing to start
    assert _price_children() == []
