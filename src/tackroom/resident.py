"""A resident tackroom: the command line's modules loaded once, every command forked from them.

A cold ``tackroom run`` spends most of its fixed cost loading modules (asyncio, the run core, some
sixty dataclasses); the run itself takes about 10 ms once they are loaded. A resident (started by
``tackroom resident start``, or by a command when none runs: :func:`tackroom.handover.start_for_next`)
keeps one process with them loaded, listening on a UNIX socket in the user's cache
directory (:func:`~tackroom.handover.socket_path`, mode 0600). A command hands itself over
(:mod:`tackroom.handover`); the resident forks, the child takes the command's streams, working
directory, umask, variables and argv and runs it as ``tackroom`` would, and its exit status goes
back to the command, which exits with it. A signal to the command (Ctrl-C, SIGTERM, SIGHUP, ...)
is passed on to the child, and a command that goes away hangs its child up (SIGHUP, as a closed
terminal would).

The child runs the same code on the same inputs, so nothing a command does changes. The resident
serves only what it can serve exactly, and the command runs by itself otherwise:

- no resident is listening, or ``TACKROOM_NO_RESIDENT`` is set;
- the command is another user's (the kernel says who is on the other end of the socket);
- its interpreter, ``sys.path``, interpreter flags, ``PYTHON*`` or locale variables differ from
  the resident's;
- a module the resident loaded, a built-in adapter file or an installed distribution changed on
  disk since (an upgrade, an edit, a plugin installed): the resident then stops too.

The next command's child is forked ahead, while the last one runs (the spare), so a command does
not wait for the fork; and the built-in adapters and the installed distributions' entry points are
looked up once, before the resident serves, as their files are watched.

It stops after ``idle_s`` seconds with nothing to do, on ``tackroom resident stop``, and on
SIGTERM: it takes no more commands at once, and ends when those it runs have ended.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import TYPE_CHECKING, Any

from tackroom.errors import ResidentError
from tackroom.handover import (
    RELAYED,
    SERVE,
    SUN_PATH,
    framed,
    interpreter,
    interpreter_options,
    socket_path,
    start_variables,
)

if TYPE_CHECKING:
    import socket
    from collections.abc import Callable

PRELOAD = (
    "tackroom.cli.quick",
    "tackroom.cli._run",
    "tackroom.cli._render",
    "tackroom.cli.app",
    "tackroom.cli.adapters",
    "tackroom.cli.profile",
    "tackroom.cli.run",
    "tackroom.cli.usage",
    "tackroom.adapters",
    "tackroom.families",
    "tackroom.mock",
    "tackroom.profile",
    "tackroom.run",
    "tackroom.trace",
    "tackroom.repo",
    "tackroom.trust_records",
    "concurrent.futures.thread",
    "shlex",
    "tomli_w",
)
"""What the resident loads before it serves, packages with every module in them: what the commands
run over and over (a run, a render, a usage report, the adapter listing) load. A module not loaded
here is loaded by the child that needs it, as a command by itself would."""


def start(entry: str, idle_s: float = 3600.0, timeout_s: float = 30.0) -> dict[str, Any]:
    """Start a resident for this user's cache directory and return its :func:`status` once it
    listens. Each command it takes runs ``entry`` (``module:function``, the command line's main:
    ``tackroom.cli:main``) in a child. One running already is a
    :class:`~tackroom.errors.ResidentError`, and so is one that does not start."""
    import subprocess

    path = socket_path()
    if len(os.fsencode(path)) > SUN_PATH:
        raise ResidentError(
            f"{path} is too long for a UNIX socket ({SUN_PATH} bytes at most): "
            "set XDG_CACHE_HOME to a shorter directory"
        )
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    read, write = os.pipe()
    arguments = [json.dumps(sys.path), path, str(idle_s), str(write), entry]
    with subprocess.Popen(
        [sys.executable, *interpreter_options(), "-c", SERVE, *arguments],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        pass_fds=(write,),
        start_new_session=True,
    ) as child:
        os.close(write)
        said = _read_all(read, timeout_s)
        assert child.stderr is not None
        if said.startswith(b"busy"):
            child.wait()
            running = status()
            if running is None:
                raise ResidentError(
                    "a resident tackroom is stopping: it ends when the commands it runs end; start one then"
                )
            raise ResidentError(
                f"a resident tackroom is already running (pid {running['pid']}, {path}): stop it first"
            )
        if said != _ready():
            child.kill()
            child.wait()
            if said.startswith(b"ready"):
                raise ResidentError(
                    "the resident tackroom started with other interpreter flags than this command's "
                    "and would run no command: start it without interpreter options"
                )
            error = child.stderr.read().decode(errors="replace").strip().splitlines()
            raise ResidentError(
                f"the resident tackroom did not start: {error[-1] if error else 'it said nothing'}"
            )
        child.stderr.close()
        child.returncode = 0  # it goes on by itself, in its own session: not ours to wait for
    found = status()
    if found is None:
        raise ResidentError(f"the resident tackroom started but does not answer at {path}")
    return found


def _ready() -> bytes:
    """What a resident says once it listens: ``ready`` and its interpreter's flags (a resident
    with other flags than its starter's would refuse every command)."""
    return b"ready " + interpreter()[1] + b"\n"


def _read_all(fd: int, timeout_s: float) -> bytes:
    """What the resident writes to its readiness pipe before it closes it, or within the timeout."""
    import select

    said = b""
    with os.fdopen(fd, "rb", buffering=0) as pipe:
        while select.select([pipe], [], [], timeout_s)[0]:
            chunk = pipe.read(256)
            if not chunk:
                break
            said += chunk
    return said


def status() -> dict[str, Any] | None:
    """The running resident: its pid, socket, start (seconds since the epoch), the commands it ran,
    refused (by reason) and runs now, its idle timeout; None when none runs."""
    answer = _ask(b"status")
    if answer is None:
        return None
    found: dict[str, Any] = json.loads(answer)
    return found


def stop() -> dict[str, Any] | None:
    """Stop the resident: it takes no more commands, and ends once those it runs have ended. What
    :func:`status` said of it, or None when none was running."""
    answer = _ask(b"stop")
    if answer is None:
        return None
    found: dict[str, Any] = json.loads(answer)
    if not found["running"]:
        _released(socket_path() + ".lock", within_s=10)  # so a start right after finds it gone
    return found


def _released(lock: str, within_s: float) -> bool:
    """Whether the resident holding ``lock`` ended (it holds it for as long as it runs) in time."""
    import fcntl
    import time

    deadline = time.monotonic() + within_s
    try:
        fd = os.open(lock, os.O_WRONLY | os.O_CLOEXEC)
    except OSError:  # no lock file: no resident ever held it
        return True
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if time.monotonic() > deadline:
                    return False
                time.sleep(0.005)
                continue
            fcntl.flock(fd, fcntl.LOCK_UN)
            return True
    finally:
        os.close(fd)


def _ask(word: bytes) -> bytes | None:
    """Send the resident a request of one word; its one-line answer, or None when none answers."""
    import socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        try:
            sock.connect(socket_path())
            sock.sendall(framed([word]))
            return sock.makefile("rb").readline() or None
        except OSError:
            return None


def serve() -> None:
    """The resident itself, as :func:`start` starts it: ``argv`` holds its socket path, idle seconds,
    the pipe to say it is ready on and the entry point, then ``auto`` and the command's pid when a
    command started it (:func:`tackroom.handover.start_for_next`): it loads its modules once that
    command has ended, taking no processor from it (a first usage report scans on every core)."""
    import importlib

    path, idle_s, ready, entry = sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    auto = sys.argv[6:7] == ["auto"]
    if auto:
        _after(int(sys.argv[7]))
    module, _, function = entry.partition(":")
    Resident(path, idle_s, getattr(importlib.import_module(module), function), auto=auto).serve(ready)


def _after(pid: int) -> None:
    """Return once process ``pid`` (this process's parent, the command that started it) has ended."""
    import select
    import time

    try:
        fd = os.pidfd_open(pid)
    except OSError:  # ended already, or a kernel before 5.3: its parent changes when it ends
        while os.getppid() == pid:
            time.sleep(0.1)
        return
    try:
        select.select([fd], [], [])  # readable once it has ended
    finally:
        os.close(fd)


class Resident:
    """The listening process: it loads :data:`PRELOAD`, accepts commands, forks a child for each
    and tells each command how its child ended."""

    def __init__(self, path: str, idle_s: float, entry: Callable[[], object], *, auto: bool = False) -> None:
        import gc
        import time

        self.path, self.idle_s, self.entry = path, idle_s, entry
        self.auto = auto
        """Whether a command started it (else ``tackroom resident start``)."""
        self.started = time.time()
        self.served = 0
        self.refused: dict[str, int] = {}
        self.interpreter = interpreter()
        self.variables = start_variables(os.environb)
        for name in PRELOAD:
            _load(name)
        self.watch = _Watch(_stamps() | _warm())
        gc.freeze()  # what is loaded stays shared with the children: their collections pass it by
        self.children: dict[int, socket.socket | None] = {}
        self.listener: socket.socket | None = None
        self.spare: tuple[int, socket.socket] | None = None
        self.stopping = False

    def serve(self, ready: int) -> None:
        """Listen, say so on ``ready``, and serve until stopped or idle."""
        import fcntl
        import selectors
        import signal
        import time

        self.lock = os.open(self.path + ".lock", os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(self.lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # one resident per socket, for its life
        except OSError:
            os.write(ready, b"busy\n")
            return
        self.selector = selectors.DefaultSelector()
        self.listener = self._listen()
        self.wake = os.pipe()
        for fd in self.wake:
            os.set_blocking(fd, False)
        signal.set_wakeup_fd(self.wake[1])
        signal.signal(signal.SIGCHLD, lambda number, frame: None)
        signal.signal(signal.SIGTERM, lambda number, frame: setattr(self, "stopping", True))
        self.selector.register(self.wake[0], selectors.EVENT_READ, "signal")
        log = os.open(self.path + ".log", os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
        os.dup2(log, 2)  # what goes wrong from now on: no one reads the pipe any more
        os.close(log)
        os.write(ready, _ready())
        os.close(ready)
        self._fork_spare()
        idle_since = time.monotonic()
        while self.listener is not None or self.children:
            left = idle_since + self.idle_s - time.monotonic()
            events = self.selector.select(None if self.children else max(0.0, left))
            if not events and not self.children and left <= 0:
                break
            for key, _ in events:
                try:
                    if key.data == "accept":
                        self._accept()
                    elif key.data == "signal":
                        _drain(self.wake[0])
                        self._reap()
                    else:
                        self._relay(key.fileobj, key.data)  # type: ignore[arg-type]
                except Exception:  # a fault in one command's handling: said in the log, the rest served
                    import traceback

                    _log(traceback.format_exc())
            if events or self.children:
                idle_since = time.monotonic()  # idle from the last thing it did
            if self.stopping:
                self._close()
        self._close()

    def _listen(self) -> socket.socket:
        import selectors
        import socket

        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        with _suppressed():
            os.unlink(self.path)  # a resident that died: the lock says none runs
        old = os.umask(0o177)
        try:
            listener.bind(self.path)  # 0600: the user's alone, in the user's own cache directory
        finally:
            os.umask(old)
        listener.listen(64)
        self.inode = os.stat(self.path).st_ino
        self.selector.register(listener, selectors.EVENT_READ, "accept")
        return listener

    def _close(self) -> None:
        """Take no more commands: the socket goes at once (and the spare child, which then ends);
        those running go on to their end."""
        if self.spare is not None:
            self.spare[1].close()
            self.spare = None
        if self.listener is None:
            return
        self.selector.unregister(self.listener)
        self.listener.close()
        self.listener = None
        with _suppressed():
            if os.stat(self.path).st_ino == self.inode:  # still ours
                os.unlink(self.path)

    def _accept(self) -> None:
        import socket
        import struct

        assert self.listener is not None
        try:
            conn, _ = self.listener.accept()
        except OSError:  # gone before it was taken, or out of descriptors: it runs by itself
            return
        conn.settimeout(5)  # a command sends all of its request at once
        try:
            creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            if struct.unpack("3i", creds)[1] != os.getuid():
                conn.close()  # another user's: nothing to say to it
                return
            fields, fds = _receive(conn)
        except (OSError, ValueError):
            conn.close()
            return
        try:
            if fields in ([b"status"], [b"stop"]):
                with _suppressed():
                    conn.sendall(json.dumps(self._status()).encode() + b"\n")
                conn.close()
                self.stopping = self.stopping or fields == [b"stop"]
            elif fields[0] == b"run":
                self._run(conn, fields, fds)
            else:
                conn.close()
        finally:
            for fd in fds:
                os.close(fd)
        self._fork_spare()  # now that the command's descriptors are closed here: it must not hold them

    def _status(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "socket": self.path,
            "log": self.path + ".log",
            "started": self.started,
            "served": self.served,
            "refused": self.refused,
            "running": len(self.children),
            "idle_s": self.idle_s,
            "auto": self.auto,
            "stale": self.watch.why if self.watch.changed() else None,
        }

    def _run(self, conn: socket.socket, fields: list[bytes], fds: list[int]) -> None:
        import selectors

        try:
            request = _RunRequest(fields)
            refused = self._refusal(request, fds)
        except ValueError:
            refused = "malformed"
        if refused:
            self._refuse(conn, refused)
            if refused == "stale" and not self.stopping:
                _log(f"stale, stopping: {self.watch.why}")
                self.stopping = True
            return
        pid = self._to_spare(fields, fds)
        if pid is None:
            try:
                pid = os.fork()
            except OSError as exc:  # out of processes or memory: the command runs by itself
                self._refuse(conn, f"no fork: {exc.strerror}")
                return
            if pid == 0:
                self._in_child(lambda: self._become(request, fds), conn)
        self.served += 1
        self.children[pid] = conn
        conn.setblocking(False)
        self.selector.register(conn, selectors.EVENT_READ, pid)
        try:
            conn.sendall(b"pid %d\n" % pid)
        except OSError:
            self._relay(conn, pid)

    def _refuse(self, conn: socket.socket, reason: str) -> None:
        self.refused[reason] = self.refused.get(reason, 0) + 1
        with _suppressed():
            conn.sendall(f"refused {reason}\n".encode())
        conn.close()

    def _fork_spare(self) -> None:
        """Fork the child of the next command now, while this one runs: it waits for its command,
        and the fork is not part of the command's time."""
        import socket

        if self.spare is not None or self.listener is None:
            return
        ours, theirs = socket.socketpair()
        try:
            pid = os.fork()
        except OSError:  # the next command forks its own
            ours.close()
            theirs.close()
            return
        if pid == 0:
            ours.close()
            self._in_child(lambda: self._wait_for_command(theirs))
        theirs.close()
        self.spare = (pid, ours)

    def _to_spare(self, fields: list[bytes], fds: list[int]) -> int | None:
        """Hand the command to the spare child; its pid, or None when there is none (it died)."""
        import socket

        if self.spare is None:
            return None
        pid, sock = self.spare
        self.spare = None
        request = framed(fields)
        try:
            sent = socket.send_fds(sock, [request], fds)
            if sent < len(request):  # not a send of nothing: the spare may have closed its end already
                sock.sendall(request[sent:])
        except OSError:  # it died before it had it all: this command forks its own
            return None
        finally:
            sock.close()
        return pid

    def _in_child(self, work: Callable[[], None], *conns: socket.socket) -> None:
        """In a child just forked: leave the resident's part behind (its socket, lock, pipes and the
        other commands' connections), do ``work``, which ends the process, and never return."""
        try:
            import signal

            from tackroom import handover

            handover.serving = True
            signal.set_wakeup_fd(-1)
            for number in (signal.SIGCHLD, signal.SIGTERM):
                signal.signal(number, signal.SIG_DFL)
            os.setpgid(0, 0)  # signals to the resident's group are not the command's
            self.selector.close()
            for other in (self.listener, *conns, *self.children.values()):
                if other is not None:
                    other.close()
            for fd in (*self.wake, self.lock, *([] if self.watch.fd is None else [self.watch.fd])):
                os.close(fd)  # the lock above all: a child must not hold it after the resident ends
            work()
        except BaseException:
            import traceback

            said = f"tackroom: error: the resident could not run this command\n{traceback.format_exc()}"
            with _suppressed():
                os.write(2, said.encode())
        finally:
            os._exit(70)

    def _wait_for_command(self, sock: socket.socket) -> None:
        """The spare child: wait for the command the resident hands over, then become it. The
        resident going away (or stopping) closes the socket: then end."""
        try:
            fields, fds = _receive(sock)  # as long as it takes: the next command may be hours away
        except (OSError, ValueError):
            os._exit(0)
        sock.close()
        self._become(_RunRequest(fields), fds)

    def _refusal(self, request: _RunRequest, fds: list[int]) -> str:
        """Why this resident cannot run ``request`` exactly as its command would; empty when it can."""
        if len(fds) != 4:
            return "malformed"
        if request.interpreter != self.interpreter:
            return "another interpreter"
        if start_variables(request.environ) != self.variables:
            return "other interpreter variables"
        if self.watch.changed():
            return "stale"
        return ""

    def _become(self, request: _RunRequest, fds: list[int]) -> None:
        """In the child: become the command (its streams, directory, umask, variables and argv), run
        it as ``tackroom`` would and end with its exit code."""
        import signal

        # Ctrl-C as the command has it: Python's KeyboardInterrupt, or ignored (as in a background job)
        signal.signal(signal.SIGINT, signal.SIG_IGN if request.sigint_ignored else signal.default_int_handler)
        for target, fd in enumerate(fds[:3]):
            os.dup2(fd, target)
        os.fchdir(fds[3])
        for fd in fds:
            os.close(fd)
        os.umask(request.umask)
        os.environb.clear()
        os.environb.update(request.environ)
        if os.environ.get("TACKROOM_NO_CACHE"):
            _forget_warm()  # it asks tackroom to look again: it does, as a command by itself does
        sys.argv = request.argv
        _fresh_streams()
        if "tempfile" in sys.modules:
            sys.modules["tempfile"].tempdir = None  # type: ignore[attr-defined]  # found again here
        code = 0
        try:
            self.entry()
        except SystemExit as done:
            code = _exit_code(done.code)
        except BaseException:
            import traceback

            traceback.print_exc()
            code = 1
        with _suppressed():
            sys.stdout.flush()
        with _suppressed():
            sys.stderr.flush()
        os._exit(code)

    def _reap(self) -> None:
        """Tell each command whose child ended how it ended (and forget a spare that died)."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if self.spare is not None and self.spare[0] == pid:
                self.spare[1].close()
                self.spare = None
            conn = self.children.pop(pid, None)
            if conn is None:
                continue
            self.selector.unregister(conn)
            code = os.waitstatus_to_exitcode(status)
            with _suppressed():
                conn.setblocking(True)
                conn.sendall(b"exit %d\n" % code if code >= 0 else b"signal %d\n" % -code)
            conn.close()

    def _relay(self, conn: socket.socket, pid: int) -> None:
        """Pass the command's signals on to its child; a command gone hangs its child up."""
        import signal

        allowed = {getattr(signal, name).value for name in RELAYED}
        try:
            said = conn.recv(4096)
        except BlockingIOError:
            return
        except OSError:
            said = b""
        if not said:
            self.selector.unregister(conn)
            conn.close()
            self.children[pid] = None
            with _suppressed():
                os.kill(pid, signal.SIGHUP)
            return
        for line in said.splitlines():
            word, _, value = line.partition(b" ")
            if word == b"kill" and value.isdigit() and int(value) in allowed:
                with _suppressed():
                    os.kill(pid, int(value))


def _log(message: str) -> None:
    """A line in the resident's log (its stderr, once it serves), stamped."""
    import time

    print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {message}", file=sys.stderr)


def _drain(fd: int) -> None:
    """Read the wake-up pipe empty (each byte a signal that came)."""
    with _suppressed():
        while os.read(fd, 512):
            pass


def _load(name: str) -> None:
    """Import ``name``, and every module in it when it is a package; one that cannot be imported
    (a dependency not installed) is skipped, and a child that needs it says why, as a command would."""
    import importlib
    import pkgutil

    try:
        module = importlib.import_module(name)
    except Exception:  # whatever it is, the command that needs it will say it
        return
    for found in pkgutil.walk_packages(getattr(module, "__path__", []), f"{name}.", onerror=lambda _: None):
        try:
            importlib.import_module(found.name)
        except Exception:  # as above
            continue


def _receive(conn: socket.socket) -> tuple[list[bytes], list[int]]:
    """One request's fields (:func:`~tackroom.handover.framed`); the descriptors come with its first bytes."""
    import socket

    data, fds, _, _ = socket.recv_fds(conn, 65536, 4)
    try:
        while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big") <= 4 + (16 << 20):
            more = conn.recv(65536)
            if not more:
                break
            data += more
        if len(data) < 4 or len(data) != 4 + int.from_bytes(data[:4], "big"):
            raise ValueError("a request cut short, or longer than it said")
    except (OSError, ValueError):
        for fd in fds:
            os.close(fd)
        raise
    return data[4:].split(b"\0"), fds


class _RunRequest:
    """A run request (:func:`_run_request`), parsed; a ``ValueError`` for anything it does not hold."""

    def __init__(self, fields: list[bytes]) -> None:
        paths = _number(fields[3:4])
        at = 4 + paths
        self.interpreter = fields[1:at]
        if len(self.interpreter) != 3 + paths:
            raise ValueError("a request cut short")
        self.umask = _number(fields[at : at + 1])
        self.sigint_ignored = _number(fields[at + 1 : at + 2])
        arguments = _number(fields[at + 2 : at + 3])
        argv = fields[at + 3 : at + 3 + arguments]
        if self.umask > 0o777 or self.sigint_ignored > 1 or len(argv) != arguments:
            raise ValueError("a request cut short")
        self.argv = [os.fsdecode(arg) for arg in argv]
        self.environ = {}
        for entry in fields[at + 3 + arguments :]:
            key, equals, value = entry.partition(b"=")
            if not key or not equals:
                raise ValueError(f"not a variable: {entry[:40]!r}")
            self.environ[key] = value


def _number(field: list[bytes]) -> int:
    if len(field) != 1 or not field[0].isdigit() or len(field[0]) > 9:
        raise ValueError("not a count")
    return int(field[0])


class _Watch:
    """Whether a file or directory the resident read changed since: the kernel says so as it happens
    (inotify on the directories, where there is inotify: a change, a new file or one gone in any of
    them), else each is looked at again (about 700 of them, a few milliseconds a command). What
    changed is kept in :attr:`why`, for the log."""

    _EVENTS = 0x2 | 0x4 | 0x8 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800
    """IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE, IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE,
    IN_DELETE_SELF, IN_MOVE_SELF."""
    _NAMES = (
        (0x2, "modified"), (0x4, "attributes changed"), (0x8, "written"), (0x40, "moved away"),
        (0x80, "moved in"), (0x100, "created"), (0x200, "deleted"), (0x400, "deleted"),
        (0x800, "moved"), (0x4000, "too many changes to follow"),
    )  # fmt: skip

    def __init__(self, stamps: dict[str, tuple[int, int] | None]) -> None:
        self.stamps = stamps
        self.directories: dict[int, str] = {}
        self.why = ""
        self.fd = self._inotify({path if os.path.isdir(path) else os.path.dirname(path) for path in stamps})

    def _inotify(self, directories: set[str]) -> int | None:
        import ctypes

        try:
            libc = ctypes.CDLL(None, use_errno=True)  # this process's own C library
            fd = int(libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC))
        except (OSError, AttributeError):  # no inotify in it (macOS)
            return None
        if fd < 0:
            return None
        for directory in sorted(directories):
            watch = int(libc.inotify_add_watch(fd, os.fsencode(directory), self._EVENTS))
            if watch < 0:
                os.close(fd)  # too many watches for this user: look at every file instead
                return None
            self.directories[watch] = directory
        self.why = self._differs()  # a change between the loading and the watching
        return fd

    def changed(self) -> bool:
        """Whether anything that matters changed since the resident loaded it (once true, true for
        good)."""
        if not self.why:
            self.why = self._differs() if self.fd is None else self._events()
        return bool(self.why)

    def _events(self) -> str:
        """What the kernel reported since the last look that could change what a command loads: not
        Python's byte-code caches (written by any other process that imports a module first) nor an
        editor's swap and backup files."""
        import struct

        assert self.fd is not None
        while True:
            try:
                read = os.read(self.fd, 65536)
            except BlockingIOError:  # nothing (more) happened
                return ""
            at = 0
            while at + 16 <= len(read):
                watch, mask, _, size = struct.unpack_from("iIII", read, at)
                name = os.fsdecode(read[at + 16 : at + 16 + size].rstrip(b"\0"))
                at += 16 + size
                if name and _irrelevant(name):
                    continue
                what = next((text for bit, text in self._NAMES if mask & bit), f"event {mask:#x}")
                directory = self.directories.get(watch, "a watched directory")  # none: an overflow
                return f"{os.path.join(directory, name) if name else directory}: {what}"

    def _differs(self) -> str:
        for path, stamp in self.stamps.items():
            if _stamp(path) != stamp:
                return f"{path}: changed"
        return ""


def _irrelevant(name: str) -> bool:
    """Whether a file of this name, new or changed in a watched directory, cannot change what a
    command loads: byte-code caches, editors' swap, backup and lock files."""
    return (
        name == "__pycache__" or name.endswith((".pyc", ".pyo", ".swp", ".swx", "~")) or name.startswith(".#")
    )


def _warm() -> dict[str, tuple[int, int] | None]:
    """Fill the caches a command fills first whose answers depend only on files: the built-in
    adapters and the installed distributions' entry points; what they read, stamped (the ``sys.path``
    directories, each distribution's metadata directory, the built-ins' files), to be watched. A child
    whose command sets ``TACKROOM_NO_CACHE`` fills them again (:func:`_forget_warm`)."""
    from tackroom import _dists
    from tackroom.adapters import resolve

    with contextlib.suppress(Exception):  # a broken install: the command that needs them says so
        resolve.resolve_builtins()
        _dists.entry_points("tackroom.families")
    read = [*sys.path, *(str(path) for _, path in _dists.distributions())]
    read += [str(path) for path in resolve._builtin_inputs()]
    return {path: _stamp(path) for path in read if os.path.exists(path)}


def _forget_warm() -> None:
    from tackroom import _dists
    from tackroom.adapters import resolve

    resolve._BUILTINS = None
    _dists._groups.cache_clear()


def _stamps() -> dict[str, tuple[int, int] | None]:
    """Each loaded module's file with its size and modification time: a change makes the resident stale."""
    files = (getattr(module, "__file__", None) for module in list(sys.modules.values()))
    return {path: _stamp(path) for path in files if isinstance(path, str) and os.path.isfile(path)}


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_size, stat.st_mtime_ns


def _fresh_streams() -> None:
    """The standard streams over the command's descriptors, made as Python makes them at start (the
    resident's own were over /dev/null)."""
    import io

    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        old = getattr(sys, f"__{name}__")
        raw = io.FileIO(fd, "r" if fd == 0 else "w", closefd=False)
        stream = io.TextIOWrapper(
            io.BufferedReader(raw) if fd == 0 else io.BufferedWriter(raw),
            encoding=old.encoding,
            errors=old.errors,
            line_buffering=fd == 2 or raw.isatty(),
        )
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def _exit_code(code: object) -> int:
    """The exit status ``SystemExit(code)`` gives, as Python's own exit does."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _suppressed() -> Any:
    return contextlib.suppress(OSError)
