"""The process layer, driven against the scripted fake harness as a real subprocess."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tackroom.errors import RunError
from tackroom.run import process
from tackroom.run.process import ProcessResult, group_alive, run_process, run_process_sync

# Timing: these assert how soon a process is stopped, so CI runs them alone after the rest.
pytestmark = [pytest.mark.timeout(30), pytest.mark.timing]

FAKES = Path(__file__).parent / "fakes"
FAKE = FAKES / "fake_harness.py"
STREAMS = FAKES / "streams"
TIMEOUT = 0.5
GRACE = 0.5
# Scheduling noise on a loaded CI machine; every bound below is far looser than the real time.
SLACK = 1.5


def fake(*args: str) -> list[str]:
    """argv for the fake; the interpreter is named so the test does not depend on PATH."""
    return [sys.executable, str(FAKE), *args]


def big_output(size: int) -> bytes:
    """What ``fake_harness.py --big-output size`` prints (kept in step by test_output_cap_*)."""
    return b"".join(b"%09d\n" % i for i in range(size // 10 + 1))[:size]


def pid_gone(pid: int) -> bool:
    """Not running: either reaped or a zombie of someone else's."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat[stat.rindex(")") + 2] in "ZX"


def is_fake(pid: int) -> bool:
    try:
        return b"fake_harness" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def pid_reaped(pid: int) -> bool:
    return not Path(f"/proc/{pid}").exists()


class Recorder:
    """Collects live lines with arrival times, and the pids the fake announces."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.err: list[str] = []
        self.out_times: list[float] = []

    def on_out(self, line: str) -> None:
        self.out.append(line)
        self.out_times.append(time.monotonic())

    def on_err(self, line: str) -> None:
        self.err.append(line)

    @property
    def leader(self) -> int:
        [pid] = [int(line.split()[1]) for line in self.err if line.startswith("pid ")]
        return pid

    @property
    def children(self) -> list[int]:
        return [int(line.split()[1]) for line in self.err if line.startswith("child ")]


@pytest.fixture
def rec() -> Iterator[Recorder]:
    """A recorder that, whatever the test's outcome, kills every process the fake announced."""
    recorder = Recorder()
    yield recorder
    pids = [int(line.split()[1]) for line in recorder.err if line.split()[0] in ("pid", "child")]
    for pid in pids:
        if is_fake(pid):  # never signal a pid the kernel has since handed to someone else
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"}


def run(argv: list[str], tmp_path: Path, env: dict[str, str], rec: Recorder, **kw: Any) -> ProcessResult:
    kw.setdefault("timeout_s", 10.0)
    kw.setdefault("grace_s", GRACE)
    return run_process_sync(
        argv, env=env, cwd=tmp_path, on_stdout_line=rec.on_out, on_stderr_line=rec.on_err, **kw
    )


def assert_all_gone(rec: Recorder) -> None:
    assert not group_alive(rec.leader)
    assert pid_reaped(rec.leader), "the leader is ours to reap"
    assert all(pid_gone(pid) for pid in rec.children)


# --- normal runs ---------------------------------------------------------------------


def test_normal_exit_delivers_every_line_and_the_tails(
    tmp_path: Path, env: dict[str, str], rec: Recorder
) -> None:
    stream = STREAMS / "claude_code_hello.jsonl"
    result = run(fake("--replay", str(stream), "--stderr", "warming up"), tmp_path, env, rec)

    assert result.exit_code == 0
    assert not result.timed_out
    assert result.signalled is None
    assert result.leftover_killed == 0
    assert rec.out == stream.read_text(encoding="utf-8").splitlines()
    assert rec.err == ["warming up"]
    assert result.stdout_tail == stream.read_bytes()
    assert result.stderr_tail == b"warming up\n"
    assert not result.stdout_truncated
    assert not result.stderr_truncated


@pytest.mark.parametrize("code", [1, 3, 42])
def test_exit_code_is_passed_through(code: int, tmp_path: Path, env: dict[str, str], rec: Recorder) -> None:
    result = run(fake("--exit-code", str(code)), tmp_path, env, rec)

    assert result.exit_code == code
    assert not result.timed_out


def test_lines_arrive_live_in_order(tmp_path: Path, env: dict[str, str], rec: Recorder) -> None:
    stream = STREAMS / "codex_exec_hello.jsonl"
    delay = 0.15
    result = run(fake("--replay", str(stream), "--line-delay", str(delay)), tmp_path, env, rec)
    returned = time.monotonic()

    assert rec.out == stream.read_text().splitlines()
    # The fake sleeps `delay` after each line: had the lines been delivered
    # only at exit, they would all arrive at about the same instant.
    lines = len(rec.out)
    assert returned - rec.out_times[0] >= (lines - 1) * delay
    gaps = [later - earlier for earlier, later in itertools.pairwise(rec.out_times)]
    assert min(gaps) >= delay / 2
    assert result.duration_s >= lines * delay


def test_cwd_is_the_one_given(tmp_path: Path, env: dict[str, str], rec: Recorder) -> None:
    result = run(fake("--write-file", "out.txt", "written"), tmp_path, env, rec)

    assert result.exit_code == 0
    assert (tmp_path / "out.txt").read_text() == "written"


def test_sync_and_async_entry_points_agree(tmp_path: Path, env: dict[str, str]) -> None:
    argv = fake("--stderr", "e", "--exit-code", "5")

    async_result = asyncio.run(run_process(argv, env=env, cwd=tmp_path, timeout_s=10))
    sync_result = run_process_sync(argv, env=env, cwd=tmp_path, timeout_s=10)

    for result in (async_result, sync_result):
        assert (result.exit_code, result.stderr_tail) == (5, b"e\n")


# --- timeouts and signals -------------------------------------------------------------


def test_timeout_terminates_the_group(tmp_path: Path, env: dict[str, str], rec: Recorder) -> None:
    result = run(fake("--announce", "--hang"), tmp_path, env, rec, timeout_s=TIMEOUT)

    assert result.timed_out
    assert result.signalled == "SIGTERM"
    assert result.exit_code == -signal.SIGTERM
    assert TIMEOUT <= result.duration_s < TIMEOUT + SLACK
    assert_all_gone(rec)


def test_timeout_gives_the_harness_its_grace(tmp_path: Path, env: dict[str, str], rec: Recorder) -> None:
    saved = tmp_path / "session.json"
    argv = fake("--announce", "--hang", "--trap-sigterm", str(saved))
    result = run(argv, tmp_path, env, rec, timeout_s=TIMEOUT)

    assert saved.read_text() == "saved on SIGTERM\n"
    assert result.signalled == "SIGTERM"
    assert result.exit_code == 128 + signal.SIGTERM
    assert_all_gone(rec)


def test_ignored_sigterm_escalates_to_sigkill_after_the_grace(
    tmp_path: Path, env: dict[str, str], rec: Recorder
) -> None:
    result = run(fake("--announce", "--hang", "--ignore-sigterm"), tmp_path, env, rec, timeout_s=TIMEOUT)

    assert result.timed_out
    assert result.signalled == "SIGKILL"
    assert result.exit_code == -signal.SIGKILL
    assert TIMEOUT + GRACE <= result.duration_s < TIMEOUT + GRACE + SLACK
    assert_all_gone(rec)


def test_children_ignoring_sigterm_all_die(tmp_path: Path, env: dict[str, str], rec: Recorder) -> None:
    argv = fake("--announce", "--hang", "--spawn-children", "3", "--children-ignore-sigterm")
    result = run(argv, tmp_path, env, rec, timeout_s=TIMEOUT)

    assert len(rec.children) == 3
    assert result.timed_out
    assert result.exit_code == -signal.SIGTERM  # the leader itself obeyed
    assert result.signalled == "SIGKILL"  # its children did not
    assert_all_gone(rec)


# --- leftovers --------------------------------------------------------------------------


def test_daemon_left_after_a_normal_exit_is_killed_and_counted(
    tmp_path: Path, env: dict[str, str], rec: Recorder
) -> None:
    result = run(fake("--announce", "--daemonize-child"), tmp_path, env, rec)

    assert len(rec.children) == 1
    assert result.exit_code == 0
    assert not result.timed_out
    assert result.signalled is None
    assert result.leftover_killed == 1
    assert result.duration_s < GRACE + SLACK
    assert_all_gone(rec)


def test_leftovers_ignoring_sigterm_are_killed(tmp_path: Path, env: dict[str, str], rec: Recorder) -> None:
    argv = fake("--announce", "--spawn-children", "2", "--children-ignore-sigterm")
    result = run(argv, tmp_path, env, rec)

    assert result.exit_code == 0
    assert result.leftover_killed == 2
    assert result.duration_s >= GRACE  # SIGTERM was tried, and ignored, first
    assert_all_gone(rec)


def test_a_process_outside_the_group_cannot_hang_the_drain(
    tmp_path: Path, env: dict[str, str], rec: Recorder
) -> None:
    result = run(fake("--announce", "--escape-child"), tmp_path, env, rec)

    [escaped] = rec.children
    assert not pid_gone(escaped), "the escaped child must still hold the pipes for this test to mean anything"
    assert result.exit_code == 0
    assert result.leftover_killed == 0  # outside the group: not found, not ours to kill
    assert result.duration_s < process._DRAIN_S + SLACK
    assert not group_alive(rec.leader)


# --- escapes: descendants that left the group ----------------------------------------------


MARKER = "TACKROOM_TEST_MARKER=run-1"


@pytest.mark.parametrize("how", ["exit", "timeout"])
def test_an_escaped_child_is_found_by_its_marker_stopped_and_reported(
    how: str, tmp_path: Path, env: dict[str, str], rec: Recorder
) -> None:
    argv = fake("--announce", "--escape-child", *(["--hang"] if how == "timeout" else []))
    result = run(
        argv, tmp_path, env, rec, timeout_s=TIMEOUT if how == "timeout" else 10.0, escape_marker=MARKER
    )

    [escaped] = rec.children
    assert [e.pid for e in result.escaped] == [escaped]
    assert "fake_harness" in result.escaped[0].command
    assert result.escaped[0].to_json() == {"pid": escaped, "command": result.escaped[0].command}
    assert result.timed_out is (how == "timeout")
    assert result.leftover_killed == 0  # not in the group: an escape, reported as such
    # Stopped before the drain, so the pipes it held close at once.
    assert result.duration_s < (TIMEOUT if how == "timeout" else 0) + GRACE + SLACK
    assert_all_gone(rec)


def test_an_escaped_child_that_ignores_sigterm_is_killed(
    tmp_path: Path, env: dict[str, str], rec: Recorder
) -> None:
    script = tmp_path / "escape.py"
    script.write_text(
        "import os, signal, sys, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid(); signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "    os.write(2, f'child {os.getpid()}\\n'.encode()); time.sleep(30); os._exit(0)\n"
        "time.sleep(0.3); os.write(2, f'pid {os.getpid()}\\n'.encode())\n"
    )
    result = run([sys.executable, str(script)], tmp_path, env, rec, escape_marker=MARKER)

    assert [e.pid for e in result.escaped] == rec.children
    assert all(pid_gone(pid) for pid in rec.children)


def test_the_marker_is_in_the_childs_environment_and_other_values_are_left_alone(
    tmp_path: Path, env: dict[str, str], rec: Recorder
) -> None:
    bystander = run_process_sync(
        fake("--announce", "--escape-child", "--lifetime", "20"),
        env={**env, "TACKROOM_TEST_MARKER": "run-2"},
        cwd=tmp_path,
        timeout_s=10,
        on_stderr_line=rec.on_err,
    )
    result = run(fake("--print-env", "TACKROOM_TEST_MARKER"), tmp_path, env, rec, escape_marker=MARKER)

    assert rec.out == ["TACKROOM_TEST_MARKER=run-1"]
    assert result.escaped == () and bystander.escaped == ()
    assert not pid_gone(rec.children[0]), "another run's marker is not this run's"


def test_cancelling_stops_escaped_children_too(tmp_path: Path, env: dict[str, str], rec: Recorder) -> None:
    async def scenario() -> None:
        started = asyncio.Event()

        def on_err(line: str) -> None:
            rec.on_err(line)
            if rec.children:
                started.set()

        argv = fake("--announce", "--escape-child", "--hang")
        task = asyncio.create_task(
            run_process(
                argv,
                env=env,
                cwd=tmp_path,
                timeout_s=20,
                grace_s=GRACE,
                on_stderr_line=on_err,
                escape_marker=MARKER,
            )
        )
        await asyncio.wait_for(started.wait(), 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())

    assert_all_gone(rec)


@pytest.mark.parametrize("marker", ["", "NAME", "=value", "NAME=", "A=b\0c"])
def test_a_malformed_marker_is_refused(marker: str, tmp_path: Path, env: dict[str, str]) -> None:
    with pytest.raises(ValueError, match="escape_marker"):
        run_process_sync(fake(), env=env, cwd=tmp_path, timeout_s=5, escape_marker=marker)


# --- floods ------------------------------------------------------------------------------------


def parse_like(line: str) -> None:
    """A callback with a parser's cost per line: slower than a flood, so the pipe never runs dry."""
    json.loads(json.dumps({"line": [line] * 20}))


def test_a_flooding_harness_cannot_outlast_its_timeout(
    tmp_path: Path, env: dict[str, str], rec: Recorder
) -> None:
    lines = 0

    def count(line: str) -> None:
        nonlocal lines
        lines += 1
        parse_like(line)

    started = time.monotonic()
    result = run_process_sync(
        fake("--flood", "y", "--lifetime", "25"),
        env=env,
        cwd=tmp_path,
        timeout_s=TIMEOUT,
        grace_s=GRACE,
        on_stdout_line=count,
        output_cap=1024,
    )

    assert result.timed_out and result.signalled == "SIGTERM"
    assert time.monotonic() - started < TIMEOUT + SLACK
    assert lines > 1000 and result.stdout_size >= 2 * lines
    assert result.stdout_truncated and len(result.stdout_tail) == 1024


def test_a_flood_cannot_delay_a_cancellation(tmp_path: Path, env: dict[str, str]) -> None:
    async def scenario() -> None:
        task = asyncio.create_task(
            run_process(
                fake("--flood", "y", "--lifetime", "25"),
                env=env,
                cwd=tmp_path,
                timeout_s=20,
                grace_s=GRACE,
                on_stdout_line=parse_like,
            )
        )
        await asyncio.sleep(0.5)  # a reader that never yields would hold this up until the flood ends
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    started = time.monotonic()
    asyncio.run(scenario())
    # A reader that never yields holds the cancellation up until the flood's 25 s lifetime ends. A
    # cancelled run here ends in 1.3 to 1.8 s, and twice took 2.6 and 2.85 s on a busy 2-core CI
    # machine, tearing the loop down while its pipes were full: the bound tells 25 s from 3 s.
    assert time.monotonic() - started < 0.5 + GRACE + SLACK + 2.0


def test_output_sizes_count_every_byte(tmp_path: Path, env: dict[str, str], rec: Recorder) -> None:
    result = run(fake("--big-output", "5000", "--stderr", "abc"), tmp_path, env, rec, output_cap=100)

    assert (result.stdout_size, result.stderr_size) == (5000, 4)


# --- stdin, environment, output -----------------------------------------------------------


def test_stdin_is_dev_null_when_not_given(tmp_path: Path, env: dict[str, str], rec: Recorder) -> None:
    result = run(fake("--echo-stdin"), tmp_path, env, rec, timeout_s=5)

    assert not result.timed_out
    assert json.loads(rec.out[0]) == {"stdin": "", "fd0": "/dev/null"}


@pytest.mark.parametrize("size", [11, 1024 * 1024], ids=["small", "larger-than-a-pipe-buffer"])
def test_stdin_bytes_are_delivered_then_closed(
    size: int, tmp_path: Path, env: dict[str, str], rec: Recorder
) -> None:
    data = (b"prompt \xc3\xa9\n" * size)[:size]
    result = run(fake("--echo-stdin"), tmp_path, env, rec, timeout_s=5, stdin=data)

    assert not result.timed_out
    assert json.loads(rec.out[0])["stdin"] == data.decode()


def test_stdin_the_child_never_reads_does_not_block(
    tmp_path: Path, env: dict[str, str], rec: Recorder
) -> None:
    result = run(fake(), tmp_path, env, rec, timeout_s=5, stdin=b"x" * (2 * 1024 * 1024))

    assert result.exit_code == 0
    assert not result.timed_out


def test_environment_is_exactly_the_mapping_given(
    tmp_path: Path, env: dict[str, str], rec: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TACKROOM_CANARY", "leaked")
    argv = fake("--print-env", "PATH", "HOME", "TACKROOM_CANARY", "--dump-environ")
    run(argv, tmp_path, env, rec)

    assert rec.out[:2] == ["PATH=/usr/bin:/bin", f"HOME={tmp_path}"]
    assert json.loads(rec.out[2]) == env


def test_executable_is_looked_up_on_the_given_path(
    tmp_path: Path, env: dict[str, str], rec: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Found through the run's PATH, via its #! line...
    interpreter_dir = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join([str(FAKES), interpreter_dir, "/usr/bin", "/bin"])
    result = run([FAKE.name, "--print-env", "HOME"], tmp_path, env, rec)
    assert result.exit_code == 0
    assert rec.out == [f"HOME={tmp_path}"]

    # ...and not through tackroom's own.
    monkeypatch.setenv("PATH", os.pathsep.join([str(FAKES), os.environ["PATH"]]))
    with pytest.raises(RunError, match=r"'fake_harness\.py' not found on the run's PATH='/usr/bin:/bin'"):
        run([FAKE.name], tmp_path, {"PATH": "/usr/bin:/bin"}, rec)


def test_output_cap_keeps_the_tail(tmp_path: Path, env: dict[str, str], rec: Recorder) -> None:
    size, cap = 100_000, 1000
    result = run(fake("--big-output", str(size)), tmp_path, env, rec, output_cap=cap)

    assert result.stdout_truncated
    assert result.stdout_tail == big_output(size)[-cap:]
    assert not result.stderr_truncated
    assert len(rec.out) == size // 10  # the cap bounds the tail, not the live lines


@pytest.mark.parametrize(("size", "truncated"), [(1000, False), (1001, True)])
def test_output_cap_boundary(
    size: int, truncated: bool, tmp_path: Path, env: dict[str, str], rec: Recorder
) -> None:
    result = run(fake("--big-output", str(size)), tmp_path, env, rec, output_cap=1000)

    assert result.stdout_truncated is truncated
    assert result.stdout_tail == big_output(size)[-1000:]


def test_long_lines_and_a_last_line_without_newline(
    tmp_path: Path, env: dict[str, str], rec: Recorder
) -> None:
    long_line = "x" * (3 * 1024 * 1024)
    stream = tmp_path / "long.jsonl"
    stream.write_text(f"{long_line}\nlast")
    run(fake("--replay", str(stream)), tmp_path, env, rec)

    assert rec.out == [long_line, "last"]


def test_a_line_longer_than_the_cap_arrives_in_pieces(
    tmp_path: Path, env: dict[str, str], rec: Recorder
) -> None:
    stream = tmp_path / "flood.txt"
    stream.write_text("a" * 2500 + "\nb\n")
    run(fake("--replay", str(stream)), tmp_path, env, rec, output_cap=1000)

    assert [len(line) for line in rec.out] == [1000, 1000, 500, 1]


def test_invalid_utf8_is_replaced_not_fatal(tmp_path: Path, env: dict[str, str], rec: Recorder) -> None:
    stream = tmp_path / "bad.txt"
    stream.write_bytes(b"ok \xff\xfe\n\xe2\x80\x9cquoted\xe2\x80\x9d\n")
    run(fake("--replay", str(stream)), tmp_path, env, rec)

    assert rec.out == ["ok \ufffd\ufffd", "\u201cquoted\u201d"]


def reference_lines(data: bytes, cap: int) -> list[str]:
    """What the callback must see: each line, overlong ones cut in cap-sized pieces."""
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()  # a final newline ends the last line; it does not start an empty one
    pieces = []
    for line in lines:
        while len(line) > cap:
            pieces.append(line[:cap])
            line = line[cap:]
        pieces.append(line)
    return [piece.decode("utf-8", errors="replace") for piece in pieces]


@given(
    parts=st.lists(st.sampled_from([b"a", b"bc", b"\n", b"\xff", b"\xc3\xa9", b"\r\n"]), max_size=60),
    cuts=st.lists(st.integers(min_value=0, max_value=120), max_size=8),
    cap=st.integers(min_value=1, max_value=12),
)
def test_lines_and_tail_do_not_depend_on_how_the_chunks_fell(
    parts: list[bytes], cuts: list[int], cap: int
) -> None:
    data = b"".join(parts)
    bounds = [0, *sorted(cut for cut in cuts if cut < len(data)), len(data)]
    lines: list[str] = []
    capture = process._Capture(lines.append, cap)
    for start, end in itertools.pairwise(bounds):
        capture.feed(data[start:end])
    capture.finish()

    assert lines == reference_lines(data, cap)
    assert capture.tail() == data[-cap:]
    assert capture.truncated is (len(data) > cap)


# --- failures to start -------------------------------------------------------------------------


def test_missing_executable_raises_run_error_naming_it(tmp_path: Path, env: dict[str, str]) -> None:
    missing = str(tmp_path / "no-such-harness")
    with pytest.raises(RunError, match="no-such-harness"):
        run_process_sync([missing], env=env, cwd=tmp_path, timeout_s=5)
    with pytest.raises(RunError, match="'tackroom-no-such-harness' not found"):
        run_process_sync(["tackroom-no-such-harness"], env=env, cwd=tmp_path, timeout_s=5)


def test_missing_interpreter_is_named_as_such(tmp_path: Path, env: dict[str, str]) -> None:
    script = tmp_path / "harness"
    script.write_text("#!/nonexistent/interpreter\n")
    script.chmod(0o755)
    with pytest.raises(RunError, match="exists but its #! interpreter was not found"):
        run_process_sync([str(script)], env=env, cwd=tmp_path, timeout_s=5)


def test_missing_working_directory_raises_run_error_naming_it(tmp_path: Path, env: dict[str, str]) -> None:
    with pytest.raises(RunError, match=r"working directory .*nowhere"):
        run_process_sync(fake(), env=env, cwd=tmp_path / "nowhere", timeout_s=5)


@pytest.mark.parametrize(
    "kw",
    [
        {"argv": []},
        {"argv": "echo hi"},
        {"timeout_s": 0},
        {"timeout_s": float("nan")},
        {"grace_s": -1},
        {"output_cap": 0},
    ],
    ids=["empty-argv", "shell-string", "timeout", "timeout-nan", "grace", "cap"],
)
def test_arguments_are_checked(kw: dict[str, Any], tmp_path: Path, env: dict[str, str]) -> None:
    args: dict[str, Any] = {"argv": fake(), "env": env, "cwd": tmp_path, "timeout_s": 5, **kw}
    with pytest.raises(ValueError):
        run_process_sync(args.pop("argv"), **args)


# --- cancellation and errors in callbacks ------------------------------------------------------


def test_cancelling_the_task_stops_the_group(tmp_path: Path, env: dict[str, str], rec: Recorder) -> None:
    saved = tmp_path / "session.json"

    async def scenario() -> float:
        started = asyncio.Event()

        def on_err(line: str) -> None:
            rec.on_err(line)
            if len(rec.children) == 2:
                started.set()

        argv = fake(
            "--announce",
            "--hang",
            "--trap-sigterm",
            str(saved),
            "--spawn-children",
            "2",
            "--children-ignore-sigterm",
        )
        task = asyncio.create_task(
            run_process(argv, env=env, cwd=tmp_path, timeout_s=20, grace_s=GRACE, on_stderr_line=on_err)
        )
        await asyncio.wait_for(started.wait(), 10)
        cancelled_at = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - cancelled_at

    took = asyncio.run(scenario())

    assert saved.read_text() == "saved on SIGTERM\n", "cancelling is a graceful stop: SIGTERM first"
    assert took < GRACE + SLACK
    assert_all_gone(rec)


def test_a_second_cancel_during_the_grace_still_kills_everything(
    tmp_path: Path, env: dict[str, str], rec: Recorder
) -> None:
    long_grace = 10.0

    async def scenario() -> float:
        started = asyncio.Event()

        def on_err(line: str) -> None:
            rec.on_err(line)
            if len(rec.children) == 2:
                started.set()

        argv = fake("--announce", "--hang", "--spawn-children", "2", "--children-ignore-sigterm")
        task = asyncio.create_task(
            run_process(argv, env=env, cwd=tmp_path, timeout_s=20, grace_s=long_grace, on_stderr_line=on_err)
        )
        await asyncio.wait_for(started.wait(), 10)
        cancelled_at = time.monotonic()
        task.cancel()
        await asyncio.sleep(0.2)  # now inside the grace, waiting for children that ignore SIGTERM
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - cancelled_at

    took = asyncio.run(scenario())

    assert took < long_grace / 2
    assert_all_gone(rec)


def test_a_failing_callback_stops_the_run_and_propagates(
    tmp_path: Path, env: dict[str, str], rec: Recorder
) -> None:
    class ParserBug(Exception):
        pass

    def on_out(line: str) -> None:
        raise ParserBug(line)

    argv = fake("--announce", "--replay", str(STREAMS / "codex_exec_hello.jsonl"), "--hang")
    started = time.monotonic()
    with pytest.raises(ParserBug, match=r"thread\.started"):
        run_process_sync(
            argv,
            env=env,
            cwd=tmp_path,
            timeout_s=20,
            grace_s=GRACE,
            on_stdout_line=on_out,
            on_stderr_line=rec.on_err,
        )

    assert time.monotonic() - started < GRACE + SLACK
    assert_all_gone(rec)


# --- resources ----------------------------------------------------------------------------------


def test_no_descriptor_is_leaked(tmp_path: Path, env: dict[str, str], rec: Recorder) -> None:
    def open_fds() -> set[str]:
        return {entry.name for entry in Path("/proc/self/fd").iterdir()}

    before = open_fds()
    run(fake("--stderr", "x"), tmp_path, env, rec, stdin=b"unread")
    run(fake("--hang"), tmp_path, env, rec, timeout_s=0.2, grace_s=0.1)
    with pytest.raises(RunError):
        run([str(tmp_path / "missing")], tmp_path, env, rec)

    assert open_fds() == before


def test_group_alive(tmp_path: Path) -> None:
    assert group_alive(os.getpgrp())
    result = run_process_sync(fake("--announce"), env={}, cwd=tmp_path, timeout_s=5)
    leader = int(result.stderr_tail.split()[1])
    assert not group_alive(leader)


def test_group_alive_without_proc(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Platforms without /proc can only probe whether the group exists.
    monkeypatch.setattr(process, "_PROC", tmp_path / "no-proc")
    assert group_alive(os.getpgrp())
    assert not group_alive(2**22 + 1)  # above Linux's largest pid_max
