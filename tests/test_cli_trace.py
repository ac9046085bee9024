"""``tackroom usage`` and ``tackroom trace`` as a user runs them: real processes, real logs."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from clikit import run_cli
from tackroom.cli.app import app
from tackroom.cli.quick import parse

GOLDEN = Path(__file__).parent / "golden/claude-code/transcripts/subagents-2.1.332/files"
SESSION = "1bfc3a8c-9a20-4dff-8c1e-48329e059f5e"


@pytest.fixture
def logs(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    projects = isolated_home / ".claude" / "projects"
    shutil.copytree(GOLDEN, projects)
    return projects


ARGS = [
    ["daily", "--json"],
    ["daily", "--json", "--harness", "claude-code", "--timezone", "UTC"],
    ["monthly", "--json", "-H", "claude-code", "-z", "UTC", "--since", "20261101", "--until=2026-12-31"],
    ["session", "--json", "--no-cost", "--jobs", "1"],
    ["model", "--json", "--timezone=Asia/Tokyo"],
]


@pytest.mark.parametrize("args", ARGS, ids=[" ".join(a) for a in ARGS])
def test_the_quick_path_answers_as_the_full_command_does(logs: Path, args: list[str]) -> None:
    assert parse(args) is not None, "the quick path should take these arguments"
    quick = run_cli("usage", *args)
    assert quick.returncode == 0, quick.stderr
    full = CliRunner().invoke(app, ["usage", *args])
    assert full.exit_code == 0, full.output
    assert json.loads(quick.stdout) == json.loads(full.stdout)


@pytest.mark.parametrize(
    "args",
    [
        ["daily"],  # a table: the full command prints it
        ["daily", "--json", "--help"],
        ["daily", "--json", "--since", "yesterday"],
        ["daily", "--json", "--since", "2026-13-45"],
        ["daily", "--json", "--until", "20260230"],
        ["daily", "--json", "--bogus"],
        ["weekly", "--json"],
        ["daily", "--json", "--jobs", "0"],
        ["daily", "--json", "--harness"],
    ],
)
def test_anything_else_goes_to_the_full_command(args: list[str]) -> None:
    assert parse(args) is None


def test_mistakes_are_reported_by_the_full_command_with_the_flag(logs: Path) -> None:
    bad_day = run_cli("usage", "daily", "--json", "--since", "yesterday")
    assert bad_day.returncode == 2
    assert "--since" in bad_day.stderr and "YYYY-MM-DD" in bad_day.stderr
    for args in (
        ("usage", "daily", "--json", "--since", "2026-13-45"),
        ("trace", "list", "--since", "20260230"),
    ):
        no_day = run_cli(*args)
        assert no_day.returncode == 2 and "is no day of the calendar" in no_day.stderr, no_day.stderr
    bad_zone = run_cli("usage", "daily", "--json", "--timezone", "Mars/Olympus")
    assert bad_zone.returncode == 1
    assert "unknown time zone 'Mars/Olympus'" in bad_zone.stderr
    unknown = run_cli("usage", "daily", "--json", "--harness", "nope")
    assert unknown.returncode == 1 and "no adapter named 'nope'" in unknown.stderr


def test_usage_table_shows_the_totals(logs: Path) -> None:
    done = run_cli("usage", "model", "--timezone", "UTC", env={"COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    assert "claude-opus-5-5" in done.stdout
    assert "14,808" in done.stdout  # 12 calls of 1,234 uncached input tokens each


def test_trace_list_shows_sessions_and_their_subagents(logs: Path) -> None:
    listed = run_cli("trace", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    sessions = json.loads(listed.stdout)
    assert [s["session_id"] for s in sessions if s["parent_id"] is None] == [SESSION]
    assert len(sessions) == 4
    table = run_cli("trace", "list", env={"COLUMNS": "200"})
    assert SESSION in table.stdout and "(helper)" in table.stdout


def test_trace_show_prints_the_session_whole(logs: Path) -> None:
    shown = run_cli("trace", "show", SESSION[:8], "--json")
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["session"]["session_id"] == SESSION
    assert len(data["children"]) == 1
    assert {e["type"] for e in data["events"]} >= {"user_text", "tool_call", "tool_result", "usage", "record"}
    table = run_cli("trace", "show", SESSION, env={"COLUMNS": "200"})
    assert table.returncode == 0, table.stderr
    assert "tool_call" in table.stdout and "DONE" in table.stdout
    missing = run_cli("trace", "show", "zzz")
    assert missing.returncode == 1 and "no session 'zzz'" in missing.stderr


def test_markup_in_a_log_is_printed_as_text(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    log = isolated_home / ".claude/projects/p/s1.jsonl"
    log.parent.mkdir(parents=True)
    line = {
        "type": "user",
        "sessionId": "s1",
        "cwd": "[red]/x[/red]",
        "timestamp": "2026-11-01T10:00:00.000Z",
        "message": {"role": "user", "content": "[bold red]boom[/] \x1b[31mred\x1b[0m"},
    }
    log.write_text(json.dumps(line) + "\n", encoding="utf-8")
    shown = run_cli("trace", "show", "s1", env={"COLUMNS": "200"})
    assert shown.returncode == 0, shown.stderr
    assert "[bold red]boom[/]" in shown.stdout
    assert "\x1b[31m" not in shown.stdout


def _shortcut(key: list[object]) -> str | None:
    from tackroom._files import config_dir, data_dir
    from tackroom.trace.shortcut import answer, report_key

    data = data_dir(os.environ)
    return answer(
        data / "state.db", report_key(*key), os.environ, str(Path.cwd()), data / "runs", config_dir()
    )


def test_a_repeat_report_over_unchanged_logs_is_answered_from_the_index(
    logs: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    from tackroom.trace.api import usage_text

    key: list[object] = ["daily", "claude-code", None, None, "UTC", True]
    assert _shortcut(key) is None  # nothing remembered yet
    first = usage_text("daily", harness="claude-code", timezone="UTC")
    assert _shortcut(key) == first
    assert _shortcut(["daily", "claude-code", None, None, "Asia/Tokyo", True]) is None  # another report

    log = next(logs.rglob("agent-*.jsonl"))
    before = log.read_bytes()
    with log.open("a", encoding="utf-8") as handle:
        handle.write("\n")  # any change to any log: the full path decides
    assert _shortcut(key) is None
    log.write_bytes(before)
    assert _shortcut(key) is None  # same bytes, but a new time: still the full path
    again = usage_text("daily", harness="claude-code", timezone="UTC")
    assert again == first and _shortcut(key) == first

    # What the roots were expanded from changes: another config dir, a new run, an operator file.
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(isolated_home / "elsewhere"))
    assert _shortcut(key) is None
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    assert _shortcut(key) == first
    (isolated_home / ".local/share/tackroom/runs/20261201-120000-claude-code-abcdef").mkdir(parents=True)
    assert _shortcut(key) is None
    again = usage_text("daily", harness="claude-code", timezone="UTC")
    assert _shortcut(key) == again
    # Another genai-prices release (installed ahead of this one on sys.path): costs may differ.
    shadow = isolated_home / "site" / "genai_prices"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("", encoding="utf-8")
    monkeypatch.syspath_prepend(str(shadow.parent))
    assert _shortcut(key) is None
    monkeypatch.setattr("sys.path", [p for p in sys.path if p != str(shadow.parent)])
    assert _shortcut(key) == again
    config = Path(os.environ["TACKROOM_CONFIG_DIR"]) / "adapters.d"
    config.mkdir(parents=True)
    (config / "10-x.toml").write_text("", encoding="utf-8")
    assert _shortcut(key) is None
    log.unlink()
    gone = json.loads(usage_text("daily", harness="claude-code", timezone="UTC"))
    assert gone["totals"]["calls"] < json.loads(first)["totals"]["calls"]


def _plan(key: list[object]) -> dict[str, object]:
    import sqlite3

    from tackroom._files import data_dir
    from tackroom.trace.shortcut import PLAN, report_key

    with sqlite3.connect(data_dir() / "state.db") as db:
        query = "SELECT value FROM trace_cache WHERE name = ?"
        (value,) = db.execute(query, (PLAN + report_key(*key),)).fetchone()
    plan: dict[str, object] = json.loads(value)
    return plan


def test_a_repeat_looks_only_at_the_directories_and_logs_found_until_a_directory_changes(
    logs: Path, isolated_home: Path
) -> None:
    import time

    from tackroom.trace.api import usage_text
    from tackroom.trace.shortcut import unchanged

    settle = 50_000_000  # the test's logs were just written: a short settle lets the fast look engage
    time.sleep(0.1)
    key: list[object] = ["daily", "claude-code", None, None, "UTC", True]
    first = usage_text("daily", harness="claude-code", timezone="UTC")
    assert unchanged(_plan(key), settle) is True
    assert unchanged(_plan(key)) is None  # with the default settle every directory is too recent to tell
    assert _shortcut(key) == first  # so the roots are walked, and they agree

    log = next(logs.rglob("agent-*.jsonl"))
    before = log.stat()
    with log.open("a", encoding="utf-8") as handle:
        handle.write("\n")
    assert unchanged(_plan(key), settle) is False  # a log grew: no directory changed, the log did
    os.truncate(log, before.st_size)
    os.utime(log, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert unchanged(_plan(key), settle) is True  # same size and time again (as a repeat compares)

    (log.parent / "agent-new.jsonl").write_text("", encoding="utf-8")  # a new log beside it
    assert unchanged(_plan(key), settle) is None
    assert _shortcut(key) is None
    (log.parent / "agent-new.jsonl").unlink()
    assert unchanged(_plan(key), settle) is None  # the directory changed again: still walked
    time.sleep(0.1)
    again = usage_text("daily", harness="claude-code", timezone="UTC")
    assert unchanged(_plan(key), settle) is True

    deep = logs / "another-project"  # a new directory under a root, holding a log
    deep.mkdir()
    shutil.copy(log, deep / "s2.jsonl")
    assert unchanged(_plan(key), settle) is None and _shortcut(key) is None
    shutil.rmtree(deep)

    hidden = log.parent
    hidden.chmod(0)  # a directory made unreadable: its logs are no longer found (as root, they are)
    try:
        assert unchanged(_plan(key), settle) is None
    finally:
        hidden.chmod(0o755)
    assert json.loads(again) == json.loads(first)


def test_a_repeat_report_loads_neither_the_cli_framework_nor_the_index_code(logs: Path) -> None:
    import subprocess
    import sys

    first = run_cli("usage", "daily", "--json")
    assert first.returncode == 0, first.stderr
    probe = (
        "import contextlib, io, sys\n"
        "from tackroom.cli.quick import usage_quickly\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    assert usage_quickly(['daily', '--json'])\n"
        "heavy = ('json', 'pathlib', 'orjson', 'typer', 'rich', 'typing', 'tackroom.trace.api', 'sqlite3')\n"
        "print(out.getvalue().strip() == sys.argv[1], [m for m in heavy if m in sys.modules])\n"
    )
    found = subprocess.run(
        [sys.executable, "-c", probe, first.stdout.strip()], capture_output=True, text=True, timeout=60
    )
    assert found.stdout.split("\n")[0] == "True []", found.stderr


def test_the_quick_paths_dirs_are_the_files_modules(tmp_path: Path) -> None:
    from tackroom._files import config_dir, data_dir
    from tackroom.cli.quick import dirs

    for env in (
        {"HOME": str(tmp_path)},
        {"HOME": str(tmp_path), "XDG_DATA_HOME": "/d", "XDG_CONFIG_HOME": "/c"},
        {"HOME": str(tmp_path), "TACKROOM_CONFIG_DIR": "~/conf", "XDG_DATA_HOME": ""},
        {},
    ):
        assert dirs(env) == (str(data_dir(env)), str(config_dir(env))), env


def test_without_a_zone_days_follow_tz(logs: Path) -> None:
    utc = json.loads(run_cli("usage", "daily", "--json", env={"TZ": "UTC"}).stdout)
    tokyo = json.loads(run_cli("usage", "daily", "--json", env={"TZ": "Asia/Tokyo"}).stdout)
    assert utc["rows"][0]["key"] == "2026-12-01" and tokyo["rows"][0]["key"] == "2026-12-01"
    late = json.loads(run_cli("usage", "daily", "--json", env={"TZ": "Pacific/Kiritimati"}).stdout)
    assert late["rows"][0]["key"] == "2026-12-02"  # 13:01 UTC is 03:01 the next day at UTC+14


def test_trace_export_writes_atif_and_otel(logs: Path, tmp_path: Path) -> None:
    atif = run_cli("trace", "export", SESSION[:8])
    assert atif.returncode == 0, atif.stderr
    trajectory = json.loads(atif.stdout)
    assert trajectory["schema_version"].startswith("ATIF-v1.") and trajectory["session_id"] == SESSION
    assert len(trajectory["subagent_trajectories"]) == 1
    out = tmp_path / "spans.json"
    spans = run_cli("trace", "export", SESSION, "--format", "otel", "--out", str(out))
    assert spans.returncode == 0, spans.stderr
    names = {
        s["name"].split()[0]
        for rs in json.loads(out.read_text())["resourceSpans"]
        for ss in rs["scopeSpans"]
        for s in ss["spans"]
    }
    assert {"invoke_agent", "chat", "execute_tool"} <= names


def test_trace_export_errors_name_the_flag_or_the_collector(logs: Path) -> None:
    wide = {"COLUMNS": "300"}
    bad = run_cli("trace", "export", SESSION, "--format", "csv", env=wide)
    assert bad.returncode == 2 and "--format" in bad.stderr
    mixed = run_cli("trace", "export", SESSION, "--otlp", "http://127.0.0.1:9", env=wide)
    assert mixed.returncode == 2 and "--format otel" in mixed.stderr
    dead = run_cli("trace", "export", SESSION, "--format", "otel", "--otlp", "http://127.0.0.1:9")
    assert dead.returncode == 1 and "127.0.0.1:9" in dead.stderr


@pytest.mark.parametrize("args", [["usage", "daily", "--json"], ["trace", "list"]])
def test_a_reader_that_goes_away_stops_the_output_without_a_traceback(logs: Path, args: list[str]) -> None:
    """`tackroom usage daily --json | head -1`: the pipe closes before the report is written."""
    import subprocess
    import sys

    reading, writing = os.pipe()
    os.close(reading)  # nobody will read: the first write fails
    try:
        done = subprocess.run(
            [sys.executable, "-m", "tackroom", *args],
            stdout=writing,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        os.close(writing)
    assert done.returncode == 1, done.stderr
    assert done.stderr == ""


_NAMES = st.one_of(
    st.text(alphabet="ab.*?-_[]", min_size=1, max_size=6).filter(lambda n: n not in (".", "..")),
    st.sampled_from(
        ["s.jsonl", ".jsonl", "agent-1.jsonl", "agent-.jsonl", "x.jsonl.bak", "a1.b", "ab.b", "*.b"]
    ),
)


@settings(max_examples=400, deadline=None)
@given(
    glob=st.one_of(
        st.sampled_from(
            ["**/*.jsonl", "**/*", "*.jsonl", "**/agent-*.jsonl", "**/a?.b", "a/**/*.b", "**/**", "**"]
        ),
        st.lists(st.one_of(_NAMES, st.just("**"), st.just("*")), min_size=1, max_size=3).map("/".join),
    ),
    path=st.lists(_NAMES, min_size=1, max_size=4).map("/".join),
)
def test_a_roots_glob_matches_by_name_exactly_as_its_regular_expression_does(glob: str, path: str) -> None:
    """The repeat's walk tests ``**/NAME`` globs on the name alone, ``**/*.ending`` by its ending."""
    from tackroom._glob import glob_matcher as matcher
    from tackroom._glob import glob_regex

    by_name, match = matcher(glob)
    assert match(path.rsplit("/", 1)[-1] if by_name else path) == (
        glob_regex(glob).fullmatch(path) is not None
    )


def test_every_common_glob_and_name_pair_matches_as_its_regular_expression_does() -> None:
    from tackroom._glob import glob_matcher as matcher
    from tackroom._glob import glob_regex

    globs = ["**/*.jsonl", "**/*", "*.jsonl", "**/agent-*.jsonl", "**/a?.b", "a/**/*.b", "**/**", "**/*.j*"]
    names = [
        "s.jsonl",
        "sjsonl",
        "s.json",
        ".jsonl",
        "agent-1.jsonl",
        "x.jsonl.bak",
        "a1.b",
        "ab.b",
        "*.b",
        "s.jx",
    ]
    for glob in globs:
        by_name, match = matcher(glob)
        for name in names:
            for path in (name, f"a/{name}", f"a/b/{name}"):
                expected = glob_regex(glob).fullmatch(path) is not None
                assert match(name if by_name else path) == expected, (glob, path)


def test_a_report_is_written_as_the_standard_encoder_writes_it() -> None:
    """dumps_report_json (orjson, for speed) gives dumps_json's text, byte for byte, for what a report
    holds; what orjson refuses (a lone surrogate, an integer past 64 bits) goes the standard way."""
    from tackroom.cli._output import dumps_json, dumps_report_json

    report = {
        "group": "session",
        "rows": [
            {
                "key": "s1",
                "title": 'café ☕ "quoted" \\ tab\t',
                "models": [],
                "extra": {},
                "calls": 2**63 - 1,
            },
            {"key": "s2", "title": None, "models": ["m"], "ok": True, "no": False, "cost_usd": "0.25"},
        ],
        "totals": {"input": 0, "output": -3},
    }
    assert dumps_report_json(report) == dumps_json(report)
    for odd in ({"title": "half \ud83d emoji"}, {"input": 2**70}):
        assert dumps_report_json(odd) == dumps_json(odd)
    assert "\\ud83d" in dumps_report_json({"title": "half \ud83d emoji"})
