"""``tackroom resident``: a command forked from one loaded process runs as it runs by itself.

Issue 24 item 4: a cold ``tackroom run`` spends most of its fixed cost loading modules; a resident
keeps them loaded and forks each command from them. Every test here runs the installed CLI as
processes against a real resident over its real socket, and compares what a served command does
with what the same command does by itself (``TACKROOM_NO_RESIDENT=1``): output, exit code, files,
and the resident's own count of what it served, so a command quietly run by itself fails the test.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import clikit
from prockit import processes
from residentkit import AUTO, TACKROOM, answering, gone, resident_running, run_cli, status, stop
from runkit import RECORDED, RECORDED_TEXT, fake_adapter, script_adapter
from tackroom.handover import framed, socket_path
from tackroom.resident import _RunRequest

ALONE = {"TACKROOM_NO_RESIDENT": "1"}
MARKERS = Path(__file__).parent / "profiles" / "markers"
#: What differs between two runs of the same thing.
_PER_RUN = ("run_dir", "started_at", "duration_s", "trace", "events", "argv", "workdir")


def _same_run(served: str, alone: str) -> dict[str, object]:
    one, other = json.loads(served), json.loads(alone)
    for key in _PER_RUN:
        one.pop(key, None)
        other.pop(key, None)
    assert one == other
    return one


def test_a_served_run_is_the_run_by_itself(config_dir: Path, tmp_path: Path) -> None:
    fake_adapter(config_dir, "--replay", str(RECORDED))
    args = ("run", "fake", "say hi", "--json", "--workdir", str(tmp_path))
    with resident_running() as started:
        assert started["state"] == "started" and started["served"] == 0
        served = run_cli(*args)
        alone = run_cli(*args, env=ALONE)
        after = status()
    assert served.returncode == alone.returncode == 0, served.stderr
    assert _same_run(served.stdout, alone.stdout)["final_text"] == RECORDED_TEXT
    assert after["served"] == 1 and after["refused"] == {} and after["running"] == 0
    assert Path(after["log"]).read_text() == ""  # where a fault in the resident's handling goes
    assert Path(after["log"]).stat().st_mode & 0o777 == 0o600


def test_exit_codes_errors_and_both_streams_come_back(config_dir: Path, tmp_path: Path) -> None:
    commands = [
        ("run", "no-such", "hi", "--workdir", str(tmp_path)),  # exit 1, the error on stderr
        ("run", "claude-code", "hi", "--no-such-option"),  # exit 2, Click's usage error
        ("adapters", "list", "--json"),  # exit 0, stdout
        ("adapters", "show", "codex"),  # Rich's output, to a pipe
    ]
    with resident_running():
        served = [run_cli(*command) for command in commands]
        assert status()["served"] == len(commands)
    alone = [run_cli(*command, env=ALONE) for command in commands]
    assert [done.returncode for done in served] == [done.returncode for done in alone] == [1, 2, 0, 0]
    for one, other in zip(served, alone, strict=True):
        assert (one.stdout, one.stderr) == (other.stdout, other.stderr)
    assert "tackroom: error: unknown adapter 'no-such'" in served[0].stderr


def test_commands_at_once_each_run_once(config_dir: Path) -> None:
    """Each command is run by exactly one child, whichever of the one forked ahead (the spare) or one
    forked for it runs it: a command run twice prints its output twice."""
    alone = run_cli("adapters", "show", "codex", env=ALONE)
    with resident_running(), concurrent.futures.ThreadPoolExecutor(4) as pool:
        served = list(pool.map(lambda _: run_cli("adapters", "show", "codex"), range(24)))
        assert status()["served"] == 24
    assert [(done.returncode, done.stdout, done.stderr) for done in served] == [
        (0, alone.stdout, alone.stderr)
    ] * 24


def test_a_spare_child_killed_is_forked_again(config_dir: Path) -> None:
    """The child forked ahead for the next command (the spare) dying is no command's failure."""
    with resident_running() as started:
        for _ in range(2):
            spares = _children_of(started["pid"])
            assert len(spares) == 1  # idle: the spare alone
            os.kill(spares[0], signal.SIGKILL)
            assert gone(spares[0], within_s=10)
            listed = run_cli("adapters", "list", "--json")
            assert listed.returncode == 0 and json.loads(listed.stdout)
        assert status()["served"] == 2


def _children_of(parent: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == parent and fields[0] != "Z":
            found.append(int(entry.name))
    return found


def test_the_commands_own_variables_directory_and_umask(config_dir: Path, tmp_path: Path) -> None:
    """What the command has, not what the resident had when it started."""
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "adapters.d").mkdir(parents=True)
    here = tmp_path / "here"
    here.mkdir()
    with resident_running():
        fake_adapter(elsewhere, "--replay", str(RECORDED), name="only-there")
        listed = run_cli("adapters", "list", "--json", env={"TACKROOM_CONFIG_DIR": str(elsewhere)})
        render = ("profile", "render", "claude-code", "--profile", str(MARKERS), "--into", "out", "--json")
        rendered = run_cli(*render, cwd=here, preexec_fn=lambda: os.umask(0o077))
        assert status()["served"] == 2
    assert listed.returncode == 0, listed.stderr
    assert "only-there" in {adapter["name"] for adapter in json.loads(listed.stdout)}
    assert rendered.returncode == 0, rendered.stderr
    written = [path for path in (here / "out").rglob("*") if path.is_file()]
    assert written, rendered.stdout
    assert {path.stat().st_mode & 0o777 for path in written} == {0o600}


def test_what_it_cannot_run_exactly_runs_by_itself(config_dir: Path, tmp_path: Path) -> None:
    fake_adapter(config_dir, "--replay", str(RECORDED))
    args = ("run", "fake", "say hi", "--json", "--workdir", str(tmp_path))
    with resident_running():
        warned = run_cli(*args, env={"PYTHONWARNINGS": "ignore"})  # read as the interpreter starts
        moved = subprocess.run(  # `python -m` puts its directory on sys.path
            [str(Path(TACKROOM).parent / "python"), "-m", "tackroom", *args],
            capture_output=True, text=True, cwd=tmp_path, timeout=120, check=False,
        )  # fmt: skip
        after = status()
    assert after["served"] == 0
    assert after["refused"] == {"other interpreter variables": 1, "another interpreter": 1}
    for done in (warned, moved):
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["final_text"] == RECORDED_TEXT


def test_a_changed_module_stops_it_and_its_commands_run_by_themselves(
    config_dir: Path, tmp_path: Path
) -> None:
    fake_adapter(config_dir, "--replay", str(RECORDED))
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("# loaded by every interpreter here\n")
    env = {"PYTHONPATH": str(site)}
    args = ("run", "fake", "say hi", "--json", "--workdir", str(tmp_path))
    with resident_running(env=env) as started:
        assert run_cli(*args, env=env).returncode == 0
        assert status(env)["served"] == 1
        (site / "sitecustomize.py").write_text("# loaded by every interpreter here, changed\n")
        assert status(env)["stale"].startswith(f"{site / 'sitecustomize.py'}: ")
        done = run_cli(*args, env=env)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["final_text"] == RECORDED_TEXT
        assert gone(started["pid"], within_s=10)
        log = Path(started["log"]).read_text()
        assert f"stale, stopping: {site / 'sitecustomize.py'}: " in log
        assert status(env)["state"] == "none"


@pytest.mark.parametrize("change", ["installed", "entry points edited"])
def test_a_distribution_installed_or_changed_stops_it(config_dir: Path, tmp_path: Path, change: str) -> None:
    """The resident keeps the installed distributions' entry points (families, sandboxes) it looked
    up: one installed on ``sys.path``, or an ``entry_points.txt`` edited in place, is a stale resident."""
    site = tmp_path / "site"
    (site / "plugin-1.0.dist-info").mkdir(parents=True)
    listed = site / "plugin-1.0.dist-info" / "entry_points.txt"
    listed.write_text("[tackroom.families]\n")
    env = {"PYTHONPATH": str(site)}
    with resident_running(env=env) as started:
        assert run_cli("adapters", "list", "--json", env=env).returncode == 0
        assert status(env)["served"] == 1
        if change == "installed":
            (site / "other-2.0.dist-info").mkdir()
        else:
            with listed.open("a") as out:
                out.write("mine = my_family:Family\n")
        done = run_cli("adapters", "list", "--json", env=env)
        assert done.returncode == 0, done.stderr
        assert gone(started["pid"], within_s=10)


def test_idle_stop_start_twice_and_a_killed_resident(config_dir: Path, tmp_path: Path) -> None:
    with resident_running("--idle", "0.3") as started:
        assert gone(started["pid"], within_s=10)
        assert not Path(socket_path()).exists()
    with resident_running() as started:
        again = run_cli("resident", "start")
        assert again.returncode == 1
        assert f"a resident tackroom is already running (pid {started['pid']}" in again.stderr
        os.kill(started["pid"], signal.SIGKILL)
        assert gone(started["pid"], within_s=10)
        assert Path(socket_path()).exists()  # a socket left behind: nothing answers on it
        listed = run_cli("adapters", "list", "--json")
        assert listed.returncode == 0 and "claude-code" in listed.stdout
        with resident_running() as restarted:
            assert restarted["pid"] != started["pid"]
    stopped = run_cli("resident", "stop")
    assert stopped.returncode == 0 and "no resident tackroom is running" in stopped.stdout
    for _ in range(3):  # a stop returns once it has ended: a start right after it starts
        with resident_running() as started:
            pass
        assert gone(started["pid"], within_s=1)  # its descriptors are closed: it is on its way out


def test_hostile_requests_are_refused_and_it_goes_on(config_dir: Path) -> None:
    run_request = [b"run", b"/usr/bin/python3", b"0", b"1", b"/", b"18", b"0", b"1", b"tackroom", b"HOME=/"]
    requests = [
        b"\xff\x00garbage",  # a length that is not followed
        (1 << 31).to_bytes(4, "big") + b"run",  # a length past any request
        framed([b"run", b"x"]),  # cut short
        framed([b"run", b"/usr/bin/python3", b"0", b"99999"]),  # counts past its end
        framed(run_request),  # well formed, but no descriptors came with it
        framed([b"status", b"extra"]),
        b"",
    ]
    with resident_running():
        for request in requests:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.connect(socket_path())
                sock.sendall(request)
                sock.shutdown(socket.SHUT_WR)
                sock.settimeout(10)
                assert sock.recv(100) in (b"", b"refused malformed\n")
        after = status()
        listed = run_cli("adapters", "list", "--json")
        assert listed.returncode == 0 and status()["served"] == 1
    assert after["served"] == 0 and after["refused"] == {"malformed": 3}


@given(st.lists(st.binary(max_size=12), max_size=12))
def test_any_fields_parse_or_are_a_value_error(fields: list[bytes]) -> None:
    """Whatever a peer sends: a request, or a ValueError (an IndexError or a decoding error fails it)."""
    try:
        request = _RunRequest([b"run", *fields])
    except ValueError:
        return
    assert 0 <= request.umask <= 0o777
    assert all(b"=" not in key for key in request.environ)


def test_a_request_reads_back_as_it_was_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    from tackroom import handover

    monkeypatch.setattr("sys.argv", ["tackroom", "run", "x", "caf\udce9", ""])
    monkeypatch.setitem(os.environb, b"ODD", b"\xff\xfe=still one value")
    request = _RunRequest(framed(handover._run_request())[4:].split(b"\0"))
    assert request.argv == ["tackroom", "run", "x", "caf\udce9", ""]
    assert request.environ == dict(os.environb)
    umask = os.umask(0o022)
    os.umask(umask)
    assert request.umask == umask
    assert request.interpreter == handover.interpreter()


def test_a_cache_directory_too_deep_for_a_socket_is_a_clear_error(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 120)
    done = run_cli("resident", "start", env={"XDG_CACHE_HOME": str(deep)})
    assert done.returncode == 1
    assert "is too long for a UNIX socket (107 bytes at most): set XDG_CACHE_HOME" in done.stderr
    assert not deep.exists()


@pytest.mark.parametrize("inotify", [True, False], ids=["inotify", "every-file"])
def test_a_change_to_a_loaded_file_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, inotify: bool
) -> None:
    """Whether the kernel tells the resident (inotify) or it looks at every file again."""
    from tackroom import resident

    if not inotify:
        monkeypatch.setattr(resident._Watch, "_inotify", lambda self, directories: None)
    loaded = tmp_path / "loaded.py"
    loaded.write_text("x = 1\n")
    watch = resident._Watch({str(loaded): resident._stamp(str(loaded))})
    assert (watch.fd is not None) is inotify
    assert not watch.changed()
    assert not watch.changed()  # asking again changes nothing
    # What another process's import or an editor leaves beside a module changes nothing it loads.
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "loaded.cpython-311.pyc").write_bytes(b"\0")
    for name in ("stray.pyc", ".loaded.py.swp", "loaded.py~", ".#loaded.py"):
        (tmp_path / name).write_text("")
    assert not watch.changed()
    loaded.write_text("x = 22\n")
    assert watch.changed() and watch.changed()  # and stays changed
    assert watch.why.startswith(f"{loaded}: ")  # named, for the log
    if watch.fd is not None:
        os.close(watch.fd)


def test_a_watched_directory_removed_is_named(tmp_path: Path) -> None:
    """A directory on ``sys.path`` is watched itself: removed, the kernel's event names no file in it,
    and the resident says which directory went."""
    from tackroom import resident

    site = tmp_path / "site"
    site.mkdir()
    watch = resident._Watch({str(site): resident._stamp(str(site))})
    if watch.fd is None:
        pytest.skip("no inotify here: the every-file case is test_a_change_to_a_loaded_file_is_seen's")
    assert not watch.changed()
    site.rmdir()
    assert watch.changed()
    assert watch.why == f"{site}: deleted"
    os.close(watch.fd)


def test_a_command_starts_a_resident_for_the_next(config_dir: Path, tmp_path: Path) -> None:
    """The first ``tackroom adapters list`` runs by itself and leaves a resident behind, started with
    none of its secrets, from ``/``, in its own session; the next command is served by it, with the
    same output, and a terminal is told once."""
    import pty

    main, terminal = pty.openpty()
    try:
        first = subprocess.run(
            [TACKROOM, "adapters", "list", "--json"],
            env={**os.environ, **AUTO, "ANTHROPIC_API_KEY": "sk-secret-1"},
            stdout=subprocess.PIPE,
            stderr=terminal,
            text=True,
            timeout=120,
            check=False,
        )
        os.set_blocking(main, False)  # it has ended: what it told the terminal is there, or nothing
        try:
            told = os.read(main, 4096).decode()
        except BlockingIOError:
            told = ""
    finally:
        os.close(main)
        os.close(terminal)
    assert first.returncode == 0
    found = answering()
    pid = int(str(found["pid"]))
    try:
        assert f"tackroom: started a resident tackroom (pid {pid}) for the commands after this one" in told
        assert found["auto"] is True and found["idle_s"] == 900 and found["served"] == 0
        environ = Path(f"/proc/{pid}/environ").read_bytes()
        assert b"sk-secret-1" not in environ and b"HOME=" in environ
        assert str(Path(f"/proc/{pid}/cwd").readlink()) == "/"
        assert os.getsid(pid) == pid  # its own session: a terminal closing does not end it
        second = run_cli("adapters", "list", "--json", env=AUTO)
        assert second.returncode == 0 and second.stdout == first.stdout
        assert status()["served"] == 1
        assert "a command started it" in run_cli("resident", "status", env=ALONE).stdout
        assert Path(str(found["log"])).read_text() == ""
    finally:
        run_cli("resident", "stop", env=ALONE)
        if not gone(pid, within_s=10):
            os.kill(pid, signal.SIGKILL)
    assert gone(pid, within_s=10)


@pytest.mark.parametrize(
    ("args", "env", "command"),
    [
        (("adapters", "list", "--json"), {"TACKROOM_NO_RESIDENT_START": "1"}, "tackroom"),
        (("adapters", "list", "--json"), {**AUTO, "CI": "true"}, "tackroom"),
        (("adapters", "list", "--json"), {**AUTO, **ALONE}, "tackroom"),
        (("resident", "status"), AUTO, "tackroom"),
        (("--help",), AUTO, "tackroom"),
        (("runs", "list", "--json"), AUTO, "tackroom"),
        (("adapters", "list", "--json"), AUTO, "python -m tackroom"),
    ],
    ids=["switched-off", "ci", "no-resident", "resident-command", "help", "not-a-hot-command", "python-m"],
)
def test_commands_start_none_when_told_or_not_theirs_to(
    config_dir: Path, args: tuple[str, ...], env: dict[str, str], command: str
) -> None:
    started = Path(socket_path() + ".started")  # written before a start, whatever becomes of it
    python = str(Path(TACKROOM).with_name("python"))
    runner = (TACKROOM,) if command == "tackroom" else (python, "-m", "tackroom")
    done = clikit.run_cli(*args, command=runner, env=env)
    assert done.returncode in (0, 2), done.stderr
    assert not started.exists() and not Path(socket_path()).exists()


def test_a_started_resident_loads_once_its_command_has_ended(config_dir: Path, tmp_path: Path) -> None:
    """While the command that started it runs (a run of a harness that takes two seconds), the resident
    waits, having loaded nothing and listening nowhere: it takes no processor from its command."""
    script_adapter(config_dir, "slow", tmp_path / "slow", "sleep 2\n")
    command = subprocess.Popen(
        [TACKROOM, "run", "slow", "hi", "--workdir", str(tmp_path)],
        env={**os.environ, **AUTO},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        started = Path(socket_path() + ".started")
        while not started.exists():
            assert command.poll() is None, "the run ended before it started a resident"
            time.sleep(0.01)
        time.sleep(1)  # what a resident that did not wait would have loaded most of by now
        waiting = list(processes(lambda argv: b"tackroom.resident" in b" ".join(argv), parent=command.pid))
        assert len(waiting) == 1
        ticks = sum(
            int(n) for n in Path(f"/proc/{waiting[0]}/stat").read_text().rsplit(")", 1)[1].split()[11:13]
        )
        assert ticks < 15, f"{ticks} ticks of processor time: it is loading"  # loaded: some 40
        assert not Path(socket_path()).exists() and command.poll() is None
    finally:
        command.wait(timeout=60)
    found = answering()
    try:
        assert found["pid"] == waiting[0] and found["auto"] is True
    finally:
        stop(waiting[0], env=ALONE)


def test_ci_false_is_no_ci(config_dir: Path) -> None:
    """``CI=false`` (a developer's shell, a tool's own convention) does not keep a command from
    starting one."""
    assert run_cli("adapters", "list", "--json", env={**AUTO, "CI": "false"}).returncode == 0
    found = answering()
    try:
        assert found["auto"] is True
    finally:
        stop(int(str(found["pid"])), env=ALONE)


@pytest.mark.parametrize(
    ("env", "said"),
    [
        (AUTO, "the next run, usage, adapters or profile command starts one"),
        ({**AUTO, "CI": "1"}, "commands start none (CI is set)"),
        ({}, "commands start none (TACKROOM_NO_RESIDENT_START is set)"),
    ],
)
def test_status_says_whether_the_next_command_starts_one(
    config_dir: Path, env: dict[str, str], said: str
) -> None:
    shown = run_cli("resident", "status", env=env)
    assert shown.stdout == f"no resident tackroom is running; {said}\n"
    found = json.loads(run_cli("resident", "status", "--json", env=env).stdout)
    assert found["state"] == "none" and found["starts"] is (env == AUTO)
    assert found["why_not"] == (None if env == AUTO else said.partition("(")[2].rstrip(")"))
    assert not Path(socket_path()).exists()


def test_at_most_one_start_a_minute(config_dir: Path) -> None:
    """A start a moment ago (one that may have failed): the command does not try again."""
    started = Path(socket_path() + ".started")
    started.parent.mkdir(parents=True)
    started.touch()
    before = started.stat().st_mtime_ns
    assert run_cli("adapters", "list", "--json", env=AUTO).returncode == 0
    assert started.stat().st_mtime_ns == before and not Path(socket_path()).exists()


def test_a_cache_directory_it_cannot_use_starts_none_and_the_command_runs(tmp_path: Path) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache directory should be")
    done = run_cli("adapters", "list", "--json", env={**AUTO, "XDG_CACHE_HOME": str(blocker)})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) and blocker.read_text().startswith("a file")


def test_commands_at_once_leave_one_resident(config_dir: Path) -> None:
    """Four commands starting together each find none running: one resident is left serving (the
    lock decides), the others end on their own, and nothing else is left running."""
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        done = list(pool.map(lambda _: run_cli("adapters", "list", "--json", env=AUTO), range(4)))
    assert all(each.returncode == 0 for each in done)
    found = answering()
    pid = int(str(found["pid"]))
    path = socket_path()
    try:
        deadline = time.monotonic() + 30
        while True:
            residents = list(processes(lambda argv: os.fsencode(path) in argv))
            serving = [each for each in residents if each == pid or each not in _children_of(pid)]
            if serving == [pid] or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert serving == [pid]  # the others ended; what is left is it and the child it forked ahead
    finally:
        stop(pid, env=ALONE)


def test_a_resident_killed_outright_is_started_again(config_dir: Path) -> None:
    """A resident killed with SIGKILL leaves its socket behind; a command after it (a minute after
    the last start) starts a new one, which takes the socket over."""
    assert run_cli("adapters", "list", "--json", env=AUTO).returncode == 0
    first = int(str(answering()["pid"]))
    os.kill(first, signal.SIGKILL)
    assert gone(first, within_s=10) and Path(socket_path()).exists()
    started = Path(socket_path() + ".started")
    os.utime(started, (started.stat().st_atime - 61, started.stat().st_mtime - 61))
    assert run_cli("adapters", "list", "--json", env=AUTO).returncode == 0
    again = answering()
    try:
        assert again["state"] == "running" and again["pid"] != first and again["auto"] is True
    finally:
        stop(int(str(again["pid"])), env=ALONE)
