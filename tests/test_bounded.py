"""``tackroom._bounded.ask``: a short question to a program whose answer may flood, hang or fork."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from tackroom._bounded import ask

ENV = {"PATH": os.environ["PATH"]}


def test_an_answer_comes_back_whole_with_its_exit_status() -> None:
    done = ask(
        [sys.executable, "-c", "import sys; print('v 1.2.3'); sys.stderr.write('note'); sys.exit(3)"],
        env=ENV,
        timeout_s=30,
    )
    assert (done.returncode, done.stdout, done.stderr, done.cut, done.timed_out) == (
        3,
        b"v 1.2.3\n",
        b"note",
        False,
        False,
    )


def test_a_flood_is_cut_at_the_limit_and_stopped_at_once() -> None:
    started = time.monotonic()
    done = ask(["yes"], env=ENV, timeout_s=30, limit=1000)
    assert time.monotonic() - started < 5
    assert done.cut and done.returncode is None and done.stdout == b"y\n" * 500


def test_a_hang_with_a_child_holding_the_pipe_ends_at_the_timeout_and_leaves_no_process(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "child"
    script = f"sleep 60 & echo $! > {pid_file}; wait"
    started = time.monotonic()
    done = ask(["sh", "-c", script], env=ENV, timeout_s=1)
    assert 1 <= time.monotonic() - started < 5
    assert done.timed_out and done.returncode is None
    child = int(pid_file.read_text())
    time.sleep(0.2)
    assert not Path(f"/proc/{child}").exists() or "Z" in Path(f"/proc/{child}/stat").read_text().split()[2]


def test_a_leader_that_exits_while_its_child_keeps_the_pipe_open_is_not_waited_for_past_the_timeout(
    tmp_path: Path,
) -> None:
    done = ask(["sh", "-c", "echo 2.0.1; sleep 60 &"], env=ENV, timeout_s=1)
    assert done.stdout == b"2.0.1\n" and done.timed_out
