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
serving = False
"""True in a child of the resident: its command runs here, it is not handed over again."""


def socket_path(env: Mapping[str, str] | None = None) -> str:
    """``$XDG_CACHE_HOME/tackroom/resident.sock`` (default ``~/.cache/tackroom/resident.sock``)."""
    env = os.environ if env is None else env
    cache = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "tackroom", "resident.sock")


def hand_over() -> int | None:
    """Run this process's command in the resident and return its exit code; None when there is
    no resident to take it, or it would not run the command exactly as this process would (then
    the command runs here, as it always did)."""
    if serving or os.environ.get("TACKROOM_NO_RESIDENT"):
        return None
    path = socket_path()
    if not os.path.exists(path):
        return None
    # The C modules under socket.py and signal.py: those make enums of every constant they load,
    # a few milliseconds of a command the resident runs in twenty.
    import _socket

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        try:
            sock.connect(path)
            cwd = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
        except OSError:  # a resident gone (a stale socket), or a working directory deleted
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
