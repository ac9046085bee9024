"""Hand a command over to the resident tackroom (:mod:`tackroom.resident`), when one runs and can run it.

Every command asks first, so this module imports only what Python loads at start: a command with no
resident to take it pays one ``stat`` of the socket path. With one, the command sends its argv,
environment, umask, interpreter, and its working directory and standard streams (the descriptors
themselves, over the socket), passes signals on while the child runs it, and exits with the
child's status. ``TACKROOM_NO_RESIDENT=1`` runs a command by itself.

The request is NUL-separated fields (no argument, variable or path holds a NUL), after their length:
``run``, the interpreter (:func:`interpreter`), the umask, ``1`` when SIGINT is ignored (a
command started in the background of a script) else ``0``, the number of arguments, the
arguments, then every variable as ``KEY=VALUE``. The resident answers ``pid N`` or ``refused REASON``, then
``exit N`` or ``signal N``; the command sends ``kill N`` for each signal it is sent.

With none running, one of the commands people and scripts run over and over (:data:`AUTO`, from the
``tackroom`` command) starts one in the background for the commands after it, and runs by itself
meanwhile (:func:`start_for_next`), as a Gradle or Bazel command starts its daemon.
``TACKROOM_NO_RESIDENT_START=1`` (or ``CI`` set, as continuous integration services set it) keeps
commands from starting one; one started by ``tackroom resident start`` still serves them.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing's: every command imports this module
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

RELAYED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM")
"""The signals a command passes on to the child running it (what ``tackroom run`` acts on)."""
LOCALE = (b"LANG", b"LC_ALL", b"LC_CTYPE")
AUTO = ("run", "usage", "adapters", "profile")
"""The commands that start a resident when none runs: what the resident loads ahead (a run, a usage
report, the adapter listing, a render), run over and over."""
AUTO_IDLE_S = 900.0
"""How long a resident a command started waits for the next command before it stops."""
AUTO_EVERY_S = 60.0
"""At most one start a minute: a resident that cannot start (a cache directory it cannot listen in,
a broken install) is not tried again by every command."""
KEPT = (b"PATH", b"HOME", b"USER", b"LOGNAME", b"TMPDIR", b"TZ")
KEPT_PREFIXES = (b"PYTHON", b"LC_", b"XDG_", b"TACKROOM_")
"""The variables a resident a command started keeps (with :data:`LOCALE`): where its socket, cache
and modules are, and what its interpreter reads as it starts. Never a key or token of the
command's: each command it serves brings its own variables."""
SUN_PATH = 107
"""The longest path a UNIX socket can be bound to on Linux (``sun_path`` less its NUL)."""
SERVE = "import json, sys; sys.path[:] = json.loads(sys.argv[1]); import tackroom.resident as r; r.serve()"
"""The resident's program: ``sys.path`` as its starter's, then :func:`tackroom.resident.serve`."""
serving = False
"""True in a child of the resident: its command runs here, it is not handed over again."""


def socket_path(env: Mapping[str, str] | None = None) -> str:
    """``$XDG_CACHE_HOME/tackroom/resident.sock`` (default ``~/.cache/tackroom/resident.sock``)."""
    env = os.environ if env is None else env
    cache = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "tackroom", "resident.sock")


def hand_over(start: str | None = None) -> int | None:
    """Run this process's command in the resident and return its exit code; None when there is
    no resident to take it, or it would not run the command exactly as this process would (then
    the command runs here, as it always did). With none running, a resident running ``start``
    (``module:function``) for each command is started for the next ones (:func:`start_for_next`)."""
    if serving or os.environ.get("TACKROOM_NO_RESIDENT"):
        return None
    path = socket_path()
    if not os.path.exists(path):
        if start is not None:
            start_for_next(start, path)
        return None
    # The C modules under socket.py and signal.py: those make enums of every constant they load,
    # a few milliseconds of a command the resident runs in twenty.
    import _socket

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        try:
            sock.connect(path)
        except OSError:  # a resident gone (killed, the machine restarted): its socket is left behind
            if start is not None:
                start_for_next(start, path)
            return None
        try:
            cwd = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
        except OSError:  # a working directory deleted
            return None
        try:
            for fd in (0, 1, 2):
                os.fstat(fd)  # a closed standard stream: Python makes it None; let it do so here
            request = framed(_run_request())
            fds = b"".join(fd.to_bytes(4, sys.byteorder) for fd in (0, 1, 2, cwd))
            sent = sock.sendmsg([request], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds)])
            if sent < len(request):
                sock.sendall(request[sent:])
        except OSError:
            return None
        finally:
            os.close(cwd)
        reply = _Reply(sock)
        if reply.line()[:4] != b"pid ":
            return None  # refused: the resident's status says why; this command runs here
        return _follow(sock, reply)
    finally:
        sock.close()


def _run_request() -> list[bytes]:
    """A run request's fields: what the resident must share with this command to run it exactly
    (interpreter, flags, ``sys.path``), then its umask, whether it ignores SIGINT, argv and
    environment."""
    import _signal  # type: ignore[import-not-found]

    umask = os.umask(0o022)
    os.umask(umask)
    return [
        b"run",
        *interpreter(),
        b"%d" % umask,
        b"1" if _signal.getsignal(_signal.SIGINT) == _signal.SIG_IGN else b"0",
        b"%d" % len(sys.argv),
        *(os.fsencode(arg) for arg in sys.argv),
        *(key + b"=" + value for key, value in os.environb.items()),
    ]


def start_for_next(entry: str, path: str) -> int | None:
    """Start a resident listening at ``path`` in the background, for the commands after this one,
    and return its pid; None when none is started. This command does not wait for it: it runs by
    itself, as it would have.

    One is started only by the ``tackroom`` command itself (``python -m tackroom`` has the working
    directory on its ``sys.path``: a resident of one directory), for the commands of :data:`AUTO`,
    with a cache directory of the user's own (``XDG_CACHE_HOME`` or ``HOME`` set), and neither
    ``TACKROOM_NO_RESIDENT_START`` nor ``CI`` set (``CI=false`` or ``0`` is not set, as ci-info
    reads it): :func:`no_start`; at most once in :data:`AUTO_EVERY_S`. It runs in a session of its
    own from ``/``, keeps only the variables of :data:`KEPT`, loads its modules once this command
    has ended (it takes no processor from it), writes what goes wrong to its log
    (``resident.sock.log``), and stops after :data:`AUTO_IDLE_S` idle."""
    if (
        os.path.basename(sys.argv[0]) != "tackroom"
        or sys.argv[1:2] == []
        or sys.argv[1] not in AUTO
        or no_start(os.environ, path) is not None
    ):
        return None
    import time

    stamp = path + ".started"
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        try:
            if abs(time.time() - os.stat(stamp).st_mtime) < AUTO_EVERY_S:
                return None
        except FileNotFoundError:
            pass
        os.close(os.open(stamp, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600))
        os.utime(stamp)
        pid = _spawn(entry, path)
    except OSError:  # a cache directory it cannot write, no processes left: commands run by themselves
        return None
    if os.isatty(2):
        print(
            f"tackroom: started a resident tackroom (pid {pid}) for the commands after this one; "
            "`tackroom resident stop` stops it, TACKROOM_NO_RESIDENT_START=1 starts none",
            file=sys.stderr,
        )
    return pid


def no_start(env: Mapping[str, str], path: str) -> str | None:
    """Why commands in ``env`` start no resident to listen at ``path``; None when they do."""
    if env.get("TACKROOM_NO_RESIDENT"):
        return "TACKROOM_NO_RESIDENT is set"
    if env.get("TACKROOM_NO_RESIDENT_START"):
        return "TACKROOM_NO_RESIDENT_START is set"
    if env.get("CI", "false").lower() not in ("false", "0", ""):
        return "CI is set"
    if not (env.get("XDG_CACHE_HOME") or env.get("HOME")):
        return "neither XDG_CACHE_HOME nor HOME is set"
    if len(os.fsencode(path)) > SUN_PATH:
        return f"{path} is too long for a UNIX socket"
    return None


def _spawn(entry: str, path: str) -> int:
    """The resident's process, started and left to itself: in its own session, its standard streams
    on ``/dev/null`` but for its errors (its log), the readiness pipe :func:`tackroom.resident.start`
    reads replaced by ``/dev/null``."""
    import _signal
    import json

    variables = {
        key: value
        for key, value in os.environb.items()
        if key in KEPT or key in LOCALE or key.startswith(KEPT_PREFIXES)
    }
    nothing = os.devnull
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, nothing, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, nothing, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, path + ".log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600),
        (os.POSIX_SPAWN_OPEN, 3, nothing, os.O_WRONLY, 0),
    ]
    code = f"import os; os.chdir('/'); {SERVE}"
    arguments = [json.dumps(sys.path), path, str(AUTO_IDLE_S), "3", entry, "auto", str(os.getpid())]
    return os.posix_spawn(
        sys.executable,
        [sys.executable, *interpreter_options(), "-c", code, *arguments],
        variables,
        file_actions=actions,
        setsid=True,
        setsigdef=(_signal.SIGPIPE, _signal.SIGXFSZ),
    )


def interpreter_options() -> list[str]:
    """The interpreter options that set ``sys.flags``, as this process was started with them (a
    resident with other flags than a command's would refuse it)."""
    given = [
        ("-I", sys.flags.isolated), ("-S", sys.flags.no_site), ("-s", sys.flags.no_user_site),
        ("-E", sys.flags.ignore_environment), ("-B", sys.flags.dont_write_bytecode),
        ("-P", sys.flags.safe_path), ("-X dev", sys.flags.dev_mode), ("-X utf8", sys.flags.utf8_mode),
    ]  # fmt: skip
    words = [word for option, on in given if on for word in option.split()]
    return words + ["-O"] * sys.flags.optimize + ["-b"] * sys.flags.bytes_warning


def interpreter() -> list[bytes]:
    """This interpreter, its flags and its ``sys.path``, as request fields."""
    flags = b",".join(b"%d" % flag for flag in sys.flags)
    return [os.fsencode(sys.executable), flags, b"%d" % len(sys.path), *(os.fsencode(p) for p in sys.path)]


def framed(fields: list[bytes]) -> bytes:
    """Fields joined by NUL (which no argument, variable or path holds), after the length of it all."""
    body = b"\0".join(fields)
    return len(body).to_bytes(4, "big") + body


class _Reply:
    """The resident's lines to a command, read off the socket as they come."""

    def __init__(self, sock: Any) -> None:
        self.sock, self.pending = sock, b""

    def line(self) -> bytes:
        """The next line without its newline; empty once the resident has closed the socket (or
        reset it, going away)."""
        while b"\n" not in self.pending:
            try:
                chunk = self.sock.recv(256)
            except OSError:
                return b""
            if not chunk:
                return b""
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        return line


def _follow(sock: Any, reply: _Reply) -> int:
    """Pass signals on to the child until it ends; its exit code (128 + N when signal N ended it)."""
    import _signal

    def relay(number: int, frame: object) -> None:
        try:  # noqa: SIM105 - contextlib is not loaded on this path
            sock.sendall(b"kill %d\n" % number)
        except OSError:  # the resident is gone: the end of the reply says so
            pass

    for name in RELAYED:
        number = getattr(_signal, name)
        if _signal.getsignal(number) != _signal.SIG_IGN:  # ignored here, ignored there (SIGINT)
            _signal.signal(number, relay)
    word, _, value = reply.line().partition(b" ")
    if word == b"exit" and value.isdigit():
        return int(value)
    if word == b"signal" and value.isdigit():
        return 128 + int(value)
    print("tackroom: error: the resident tackroom went away while it ran this command", file=sys.stderr)
    return 1


def start_variables(env: Mapping[bytes, bytes]) -> dict[bytes, bytes]:
    """The variables an interpreter reads as it starts: the resident's must be the command's."""
    return {k: v for k, v in env.items() if k.startswith(b"PYTHON") or k in LOCALE}
