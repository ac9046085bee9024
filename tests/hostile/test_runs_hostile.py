"""Hostile harnesses, as real subprocesses through the runner and the CLI: every run ends, with its result.

The harness is the scripted fake (``tests/fakes/fake_harness.py``) behind an
operator adapter extending claude-code: it floods, never exits, ignores
SIGTERM, leaves a ``setsid`` child, prints bytes that are not UTF-8, lone
surrogates, Rich markup and lines no parser expects, or exits 0 having said
nothing. Every fake process is announced in a pid file, and every test
checks that none is left running.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from clikit import run_cli
from residentkit import TACKROOM, resident_running, status
from runkit import RECORDED, RECORDED_TEXT, fake_adapter, jsonl, script_adapter
from tackroom.run.result import Result
from tackroom.run.runner import arun, run
from tackroom.trace.events import ErrorEvent, Event

pytestmark = pytest.mark.timeout(120)

SLACK = 3.0


@pytest.fixture
def pids(tmp_path: Path) -> Iterator[Path]:
    """A pid file for ``--announce --pid-file``; whatever it lists is killed afterwards, and must be gone."""
    path = tmp_path / "pids.txt"
    yield path
    for pid in announced(path):
        if fake_alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def announced(path: Path) -> list[int]:
    if not path.exists():
        return []
    return [int(line.split()[1]) for line in path.read_text().splitlines() if line.strip()]


def _fake_run(workdir: Path, **popen: Any) -> subprocess.Popen[bytes]:
    """``tackroom run fake p --json`` in ``workdir`` as the installed command (a resident serves it
    when one runs), its stdout thrown away."""
    argv = [TACKROOM, "run", "fake", "p", "--json", "--workdir", str(workdir)]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, **popen)


def wait_announced(path: Path, count: int = 1) -> list[int]:
    """The pids announced once there are ``count`` of them (the harness and what it started), or
    those there are after 30 s."""
    deadline = time.monotonic() + 30
    while len(announced(path)) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    return announced(path)


def fake_alive(pid: int) -> bool:
    """A live (not zombie) process that is one of our fakes (a recycled pid is someone else's)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] not in "ZX" and b"fake_harness" in cmdline


def assert_none_running(path: Path) -> None:
    listed = announced(path)
    assert listed, "the fake announced no pids: the test checked nothing"
    assert [pid for pid in listed if fake_alive(pid)] == []


def run_dir_size(run_dir: Path) -> int:
    return sum(p.stat().st_size for p in run_dir.rglob("*") if p.is_file() and not p.is_symlink())


# --- floods --------------------------------------------------------------------------------


def test_a_harness_that_floods_like_yes_is_stopped_by_its_timeout(
    config_dir: Path, tmp_path: Path, pids: Path
) -> None:
    adapter = fake_adapter(
        config_dir, "--announce", "--pid-file", str(pids), "--flood", "y", "--lifetime", "60"
    )
    started = time.monotonic()
    result = run(adapter, "p", workdir=tmp_path, runs_dir=tmp_path / "runs", timeout_s=2)

    assert time.monotonic() - started < 2 + SLACK
    assert result.timed_out and not result.ok and result.error is not None
    assert result.error.startswith("timed out after 2s")
    assert json.loads((result.run_dir / "result.json").read_text())["timed_out"] is True
    assert_none_running(pids)


def test_a_flood_of_events_keeps_memory_and_the_run_directory_bounded(
    config_dir: Path, tmp_path: Path, pids: Path
) -> None:
    line = jsonl({"type": "assistant", "message": {"content": [{"type": "text", "text": "x" * 400}]}})
    size = 60 * 1024 * 1024
    adapter = fake_adapter(
        config_dir,
        "--announce",
        "--pid-file",
        str(pids),
        "--flood",
        line,
        "--flood-bytes",
        str(size),
        "--replay",
        str(RECORDED),
    )
    result = run(adapter, "p", workdir=tmp_path, runs_dir=tmp_path / "runs", timeout_s=100)

    # Every event was folded, so the result is exact although most events were not kept.
    assert result.ok and result.final_text == RECORDED_TEXT and result.usage.input == 1234
    stdout_log, events_file = result.run_dir / "stdout.log", result.run_dir / "events.jsonl"
    assert stdout_log.stat().st_size < 40 * 1024 * 1024 < size
    assert events_file.stat().st_size < 40 * 1024 * 1024
    assert run_dir_size(result.run_dir) < 90 * 1024 * 1024
    # Head and tail are kept, and the gap between them is marked: the log ends as the stream did.
    logged = stdout_log.read_text().splitlines()
    assert logged[-1] == RECORDED.read_text().splitlines()[-1]
    assert sum("left out here" in text for text in logged) == 1
    entries = [json.loads(text) for text in events_file.read_text().splitlines()]
    assert entries[-1]["type"] == "finished"
    assert [e["type"] for e in entries].count("truncated") == 1
    assert result.events[-1].kind == "finished" and len(result.events) < size // len(line)
    notes = " ".join(result.truncated)
    assert "stdout.log" in notes and "events.jsonl" in notes and "Result.events" in notes
    saved = json.loads((result.run_dir / "result.json").read_text())
    assert saved["truncated"] == list(result.truncated)
    assert_none_running(pids)


_YES_RUN = """
import json, sys, time
from pathlib import Path
from typing import Any
from tackroom.adapters.resolve import load_adapters
from tackroom.run.runner import run
config, workdir = Path(sys.argv[1]), Path(sys.argv[2])
started = time.monotonic()
adapter = load_adapters(config=config)["yes"]
result = run(adapter, "p", workdir=workdir, runs_dir=workdir / "runs", timeout_s=3)
print(json.dumps({
    "took": time.monotonic() - started,
    # VmHWM is this process's own peak: ru_maxrss keeps the parent's across fork and exec.
    "peak_mb": next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM")) / 1024,
    "timed_out": result.timed_out,
}))
"""


@pytest.mark.timing
@pytest.mark.parametrize("text", ["y", "x" * 100_000], ids=["short-lines", "100k-lines"])
def test_a_harness_that_is_yes_with_one_json_event_costs_bounded_memory_and_time(
    config_dir: Path, tmp_path: Path, text: str
) -> None:
    # The real `yes`, as fast as a pipe goes, answering every question (its `--version` too) with the
    # same event: tackroom kept the version probe's whole answer, 20 GB in 30 s before its own timeout.
    event = json.dumps({"type": "assistant", "message": {"content": [{"type": "text", "text": text}]}})
    script_adapter(config_dir, "yes", tmp_path / "yes-harness", f"exec yes '{event}'\n")
    workdir = tmp_path / "work"
    workdir.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", _YES_RUN, str(config_dir), str(workdir)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout)
    assert figures["timed_out"] is True
    assert figures["took"] < 3 + 2, figures
    assert figures["peak_mb"] < 150, figures


# --- processes that will not go --------------------------------------------------------------


def test_a_harness_that_ignores_sigterm_and_never_exits_is_killed(
    config_dir: Path, tmp_path: Path, pids: Path
) -> None:
    adapter = fake_adapter(
        config_dir,
        "--announce",
        "--pid-file",
        str(pids),
        "--hang",
        "--ignore-sigterm",
        "--spawn-children",
        "2",
        "--children-ignore-sigterm",
    )
    started = time.monotonic()
    result = run(adapter, "p", workdir=tmp_path, runs_dir=tmp_path / "runs", timeout_s=1)

    assert result.timed_out and time.monotonic() - started < 1 + 3 + SLACK  # timeout, grace, kill
    assert_none_running(pids)


def test_a_setsid_child_is_found_stopped_and_reported(config_dir: Path, tmp_path: Path, pids: Path) -> None:
    adapter = fake_adapter(
        config_dir, "--announce", "--pid-file", str(pids), "--replay", str(RECORDED), "--escape-child"
    )
    result = run(adapter, "p", workdir=tmp_path, runs_dir=tmp_path / "runs")

    [_leader, child] = announced(pids)
    assert [e.pid for e in result.escaped] == [child]
    assert result.ok, "an escape is reported, not a failure of the harness's answer"
    saved = json.loads((result.run_dir / "result.json").read_text())
    assert [e["pid"] for e in saved["escaped"]] == [child] and "fake_harness" in saved["escaped"][0][
        "command"
    ]
    assert_none_running(pids)


def test_a_setsid_child_does_not_outlive_a_timeout(config_dir: Path, tmp_path: Path, pids: Path) -> None:
    adapter = fake_adapter(config_dir, "--announce", "--pid-file", str(pids), "--escape-child", "--hang")
    result = run(adapter, "p", workdir=tmp_path, runs_dir=tmp_path / "runs", timeout_s=1)

    assert result.timed_out and [e.pid for e in result.escaped] == announced(pids)[1:]
    assert_none_running(pids)


def test_a_child_that_leaves_the_group_and_clears_its_environment_is_found_stopped_and_reported(
    config_dir: Path, tmp_path: Path, pids: Path
) -> None:
    # It calls setsid(), lets go of the run's pipes and execs with an empty environment: neither the
    # process group nor the run's marker finds it. The cgroup the harness was put in does.
    adapter = fake_adapter(
        config_dir, "--announce", "--pid-file", str(pids), "--replay", str(RECORDED), "--hide-child"
    )
    from tackroom.run.cgroup import cage

    probe = cage("probe")
    if probe is None:
        pytest.skip("this machine lets tackroom make no cgroup: escapes are found by their marker only")
    probe.remove()
    result = run(adapter, "p", workdir=tmp_path, runs_dir=tmp_path / "runs")

    [_leader, child] = announced(pids)
    assert [e.pid for e in result.escaped] == [child]
    assert result.ok
    assert_none_running(pids)
    left = [p for p in Path("/sys/fs/cgroup").glob("*/tackroom-*") if result.run_dir.name in p.name]
    assert left == [], "the run's cgroup is removed once it is empty"


# --- what a harness prints -----------------------------------------------------------------------

# Backslash escapes are decoded to bytes by the fake (``--emit``): \xff is a byte that is not UTF-8,
# and \\ud83d reaches the stream as the JSON escape of a lone surrogate.
HOSTILE_LINES = [
    r'{"type": "assistant", "message": "hi"}',  # a shape no parser expected
    r'{"type": "assistant", "message": {"content": [{"type": "text", "text": "bad \xff byte"} ]} }',
    r'{"type": "assistant", "message": {"content": [{"type": "text", "text": "lone \\ud83d surrogate"} ]} }',
    jsonl(
        {"type": "assistant", "message": {"content": [{"type": "text", "text": "[bold red]not markup[/]"}]}}
    ),
    jsonl(
        {
            "type": "user",
            "message": {"content": [{"type": "tool_result", "tool_use_id": "t", "content": "[/usr/bin]"}]},
        }
    ),
    '{"type": "assistant", "message": ' + '{"content": [' * 1000 + "]}" * 1000 + " }",
    r"\xff\xfe not UTF-8 at all",
]


@pytest.fixture
def hostile(config_dir: Path, pids: Path) -> Path:
    emitted = [arg for line in HOSTILE_LINES for arg in ("--emit", line)]
    fake_adapter(
        config_dir, "--announce", "--pid-file", str(pids), "--replay", str(RECORDED), *emitted, name="hostile"
    )
    return pids


def test_unexpected_lines_are_error_events_that_keep_their_text_and_the_run_goes_on(
    config_dir: Path, tmp_path: Path, hostile: Path
) -> None:
    seen: list[Event] = []
    result = run("hostile", "p", workdir=tmp_path, runs_dir=tmp_path / "runs", on_event=seen.append)

    assert result.ok and result.final_text == RECORDED_TEXT
    errors = [e for e in result.events if isinstance(e, ErrorEvent)]
    assert [e.fatal for e in errors] == [False]
    assert "nested deeper than" in errors[0].message and errors[0].raw.startswith('{"type": "assistant"')
    texts = [e.to_json().get("text") for e in result.events if e.kind == "assistant_text"]
    assert (
        "bad \ufffd byte" in texts and "lone \ufffd surrogate" in texts and "[bold red]not markup[/]" in texts
    )
    assert len(seen) == len(result.events)
    for text in (result.run_dir / "events.jsonl").read_text(encoding="utf-8").splitlines():
        json.loads(text)
    assert "\ufffd\ufffd not UTF-8 at all" in (result.run_dir / "stdout.log").read_text(encoding="utf-8")
    assert_none_running(hostile)


@pytest.mark.parametrize("mode", ["--json", "--events", "live"])
def test_the_cli_prints_hostile_text_in_every_mode(mode: str, hostile: Path, tmp_path: Path) -> None:
    done = run_cli("run", "hostile", "p", "--workdir", str(tmp_path), *([mode] if mode != "live" else []))

    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    if mode == "--json":
        assert json.loads(done.stdout)["final_text"] == RECORDED_TEXT
    elif mode == "--events":
        lines = [json.loads(line) for line in done.stdout.splitlines()]
        assert lines[-1]["type"] == "result" and "lone \ufffd surrogate" in done.stdout
    else:
        assert "[/usr/bin]" in done.stdout and "[bold red]not markup[/]" in done.stdout
        assert "lone \ufffd surrogate" in done.stdout and "ok" in done.stdout


def test_a_silent_exit_0_is_an_incomplete_run_not_a_success(
    config_dir: Path, tmp_path: Path, pids: Path
) -> None:
    adapter = fake_adapter(config_dir, "--announce", "--pid-file", str(pids), "--exit-code", "0")
    result = run(adapter, "p", workdir=tmp_path, runs_dir=tmp_path / "runs")

    assert result.exit_code == 0 and not result.ok and not result.finished
    assert result.error == 'incomplete stream: claude-code ended without its "result" line'
    saved = json.loads((result.run_dir / "result.json").read_text())
    assert saved["ok"] is False and saved["finished"] is False
    assert run_cli("run", "fake", "p", "--json", "--workdir", str(tmp_path)).returncode == 1
    assert_none_running(pids)


# --- the caller's side ---------------------------------------------------------------------------


def test_a_failing_on_event_callback_does_not_lose_the_run(
    config_dir: Path, tmp_path: Path, pids: Path
) -> None:
    adapter = fake_adapter(config_dir, "--announce", "--pid-file", str(pids), "--replay", str(RECORDED))
    calls: list[str] = []

    def broken(event: Event) -> None:
        calls.append(event.kind)
        raise RuntimeError("display crashed")

    result = run(adapter, "p", workdir=tmp_path, runs_dir=tmp_path / "runs", on_event=broken)

    assert result.ok and result.final_text == RECORDED_TEXT and calls == ["session_started"]
    [note] = [e for e in result.events if isinstance(e, ErrorEvent)]
    assert "on_event callback raised RuntimeError: display crashed" in note.message and not note.fatal
    assert (result.run_dir / "result.json").exists()
    assert_none_running(pids)


def _sigint_as_from_a_terminal() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("served", [False, True], ids=["alone", "served"])
@pytest.mark.parametrize(
    "sig",
    [
        signal.SIGTERM,
        signal.SIGHUP,
        signal.SIGINT,
        signal.SIGQUIT,
        signal.SIGUSR1,
        signal.SIGUSR2,
        signal.SIGALRM,
    ],
    ids=lambda s: s.name,
)
def test_a_signal_to_the_cli_stops_the_run_and_everything_it_started(
    sig: signal.Signals, served: bool, config_dir: Path, tmp_path: Path, pids: Path
) -> None:
    """By itself, or served by a resident tackroom (the command passes the signal on to its child)."""
    with resident_running() if served else contextlib.nullcontext() as started:
        _signal_the_cli(
            sig, [TACKROOM] if served else [sys.executable, "-m", "tackroom"], tmp_path, pids, config_dir
        )
        assert started is None or _served_or_gone(started) == 1


def _served_or_gone(started: dict[str, Any]) -> int:
    """The commands the test's resident served; 1 when it stopped as stale: a resident stops when a
    file it loaded changes (the suite's other worker may install or write where it watches), after
    which a command runs by itself, as it must. Gone for any other reason is a failure."""
    found = status()
    if "served" in found:
        return int(found["served"])
    log = Path(started["log"]).read_text()
    assert "stale, stopping: " in log, f"the resident went away on its own: {log}"
    return 1


def _signal_the_cli(
    sig: signal.Signals, cli_argv: list[str], tmp_path: Path, pids: Path, config_dir: Path
) -> None:
    fake_adapter(
        config_dir,
        "--announce",
        "--pid-file",
        str(pids),
        "--hang",
        "--spawn-children",
        "2",
        "--escape-child",
        "--lifetime",
        "60",
    )
    cli = subprocess.Popen(
        [*cli_argv, "run", "fake", "p", "--json", "--workdir", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(os.environ),
        # As from a terminal: a test suite started in the background (`cmd &` in a script) inherits
        # SIGINT ignored, and a process started with SIGINT ignored rightly keeps ignoring it.
        preexec_fn=_sigint_as_from_a_terminal,
    )
    try:
        assert len(wait_announced(pids, 4)) == 4, "the harness did not start"
        cli.send_signal(sig)
        _, stderr = cli.communicate(timeout=30)
    finally:
        cli.kill()
        cli.wait()

    assert cli.returncode == 128 + sig, stderr
    assert b"Traceback" not in stderr
    assert_none_running(pids)
    [run_dir] = (Path(os.environ["XDG_DATA_HOME"]) / "tackroom" / "runs").iterdir()
    saved = json.loads((run_dir / "result.json").read_text())
    assert saved["ok"] is False and "stopped" in saved["error"]


@pytest.mark.parametrize("served", [False, True], ids=["alone", "served"])
def test_a_cli_started_with_sigint_ignored_keeps_ignoring_it(
    served: bool, config_dir: Path, tmp_path: Path, pids: Path
) -> None:
    """As a command in a script's background job: Ctrl-C's signal does nothing, SIGTERM still stops it."""
    fake_adapter(config_dir, "--announce", "--pid-file", str(pids), "--hang", "--lifetime", "60")
    with resident_running() if served else contextlib.nullcontext() as started:
        cli = _fake_run(
            tmp_path,
            stderr=subprocess.PIPE,
            env={**os.environ, **({} if served else {"TACKROOM_NO_RESIDENT": "1"})},
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
        )
        try:
            assert wait_announced(pids), "the harness did not start"
            cli.send_signal(signal.SIGINT)
            with pytest.raises(subprocess.TimeoutExpired):
                cli.wait(timeout=1)
            cli.send_signal(signal.SIGTERM)
            _, stderr = cli.communicate(timeout=30)
        finally:
            cli.kill()
            cli.wait()
        assert started is None or _served_or_gone(started) == 1
    assert cli.returncode == 128 + signal.SIGTERM, stderr
    assert_none_running(pids)


def test_a_served_command_killed_hangs_up_its_run(config_dir: Path, tmp_path: Path, pids: Path) -> None:
    """A command served by a resident tackroom that is killed (SIGKILL: it passes nothing on) hangs
    its child up: the run stops, its harness and what it started with it, and its result is saved,
    as with a terminal closed on it."""
    fake_adapter(config_dir, "--announce", "--pid-file", str(pids), "--hang", "--spawn-children", "2")
    with resident_running() as started:
        cli = _fake_run(tmp_path, stderr=subprocess.DEVNULL)
        try:
            assert len(wait_announced(pids, 3)) == 3, "the harness did not start"
        finally:
            cli.kill()
            cli.wait()
        deadline = time.monotonic() + 30
        while status().get("running") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _served_or_gone(started) == 1 and status().get("running", 0) == 0
    assert_none_running(pids)
    [run_dir] = (Path(os.environ["XDG_DATA_HOME"]) / "tackroom" / "runs").iterdir()
    saved = json.loads((run_dir / "result.json").read_text())
    assert saved["ok"] is False and "stopped" in saved["error"]


def test_a_resident_killed_under_its_command_is_said_not_a_traceback(
    config_dir: Path, tmp_path: Path, pids: Path
) -> None:
    """The command cannot know how its run ended: it says the resident went away and exits 1."""
    fake_adapter(config_dir, "--announce", "--pid-file", str(pids), "--hang", "--lifetime", "60")
    with resident_running() as started:
        cli = _fake_run(tmp_path, stderr=subprocess.PIPE)
        try:
            assert wait_announced(pids), "the harness did not start"
            children = [
                int(entry.name)
                for entry in Path("/proc").iterdir()
                if entry.name.isdigit() and _parent(entry) == started["pid"]
            ]
            os.kill(started["pid"], signal.SIGKILL)
            cli.wait(timeout=30)  # its child, an orphan now, still holds its stderr: no communicate
        finally:
            cli.kill()
            cli.wait()
            for child in children:  # the run's child and the spare: the test's to end
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(child, signal.SIGTERM)
        assert cli.stderr is not None
        with cli.stderr:
            stderr = cli.stderr.read()
    assert cli.returncode == 1
    # then the orphan's own line, once the test stops it (its stderr is the command's)
    assert stderr.startswith(b"tackroom: error: the resident tackroom went away while it ran this command\n")
    assert b"Traceback" not in stderr
    deadline = time.monotonic() + 30
    while [pid for pid in announced(pids) if fake_alive(pid)] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert_none_running(pids)


def _parent(entry: Path) -> int | None:
    try:
        return int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def test_sigpipe_to_the_cli_neither_kills_it_nor_orphans_the_harness(
    config_dir: Path, tmp_path: Path, pids: Path
) -> None:
    """SIGPIPE is what a closed reader sends: the run goes on to its end and its ``result.json``."""
    fake_adapter(
        config_dir, "--announce", "--pid-file", str(pids), "--replay", str(RECORDED), "--line-delay", "0.2"
    )
    cli = subprocess.Popen(
        [sys.executable, "-m", "tackroom", "run", "fake", "p", "--json", "--workdir", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(os.environ),
    )
    try:
        assert wait_announced(pids), "the harness did not start"
        cli.send_signal(signal.SIGPIPE)
        stdout, stderr = cli.communicate(timeout=60)
    finally:
        cli.kill()
        cli.wait()
    assert cli.returncode == 0, stderr
    assert json.loads(stdout)["final_text"] == RECORDED_TEXT
    assert_none_running(pids)


def test_a_reader_that_goes_away_does_not_crash_the_cli(config_dir: Path, tmp_path: Path, pids: Path) -> None:
    """``tackroom run --events | head -1``: stdout closes mid-run; the run still ends well, quietly."""
    fake_adapter(
        config_dir, "--announce", "--pid-file", str(pids), "--replay", str(RECORDED), "--line-delay", "0.1"
    )
    cli = subprocess.Popen(
        [sys.executable, "-m", "tackroom", "run", "fake", "p", "--events", "--workdir", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(os.environ),
    )
    assert cli.stdout is not None and cli.stderr is not None
    with cli:
        first = cli.stdout.readline()
        cli.stdout.close()
        stderr = cli.stderr.read()
        cli.wait(timeout=60)

    assert json.loads(first)["type"] == "session_started"
    assert cli.returncode == 0 and b"Traceback" not in stderr and b"Exception ignored" not in stderr, stderr
    [run_dir] = (Path(os.environ["XDG_DATA_HOME"]) / "tackroom" / "runs").iterdir()
    assert json.loads((run_dir / "result.json").read_text())["ok"] is True
    assert_none_running(pids)


def test_cancelling_arun_stops_everything_and_leaves_a_result(
    config_dir: Path, tmp_path: Path, pids: Path
) -> None:
    adapter = fake_adapter(config_dir, "--announce", "--pid-file", str(pids), "--hang", "--escape-child")

    async def scenario() -> None:
        task = asyncio.create_task(
            arun(adapter, "p", workdir=tmp_path, runs_dir=tmp_path / "runs", timeout_s=60)
        )
        deadline = time.monotonic() + 30
        while len(announced(pids)) < 2 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())

    assert_none_running(pids)
    [run_dir] = (tmp_path / "runs").iterdir()
    assert "stopped" in json.loads((run_dir / "result.json").read_text())["error"]


def test_twenty_concurrent_runs_are_right_distinct_and_leave_nothing(
    config_dir: Path, tmp_path: Path, pids: Path
) -> None:
    adapter = fake_adapter(
        config_dir,
        "--announce",
        "--pid-file",
        str(pids),
        "--replay",
        str(RECORDED),
        "--substitute",
        RECORDED_TEXT,
        "--spawn-children",
        "1",
    )

    async def all_of_them() -> list[Result]:
        runs = [
            arun(adapter, f"answer-{n}", workdir=tmp_path, runs_dir=tmp_path / "runs", timeout_s=100)
            for n in range(20)
        ]
        return list(await asyncio.gather(*runs))

    results = asyncio.run(all_of_them())

    assert [r.final_text for r in results] == [f"answer-{n}" for n in range(20)]
    assert all(r.ok and not r.escaped for r in results)
    assert len({r.run_dir for r in results}) == 20
    saved = [json.loads((r.run_dir / "result.json").read_text())["final_text"] for r in results]
    assert saved == [f"answer-{n}" for n in range(20)]
    assert len(announced(pids)) == 40
    assert_none_running(pids)
