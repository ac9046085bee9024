"""The model endpoint's way into a sandbox with no network: run inside it, in front of the harness.

``python relay.py PORT=SOCKET ... -- ARGV...`` listens on ``127.0.0.1:PORT``
inside the sandbox's own network namespace (where nothing else is), relays each
connection to the UNIX socket ``SOCKET`` bound in from the host (behind which
tackroom reaches the mock or the gateway), runs ``ARGV`` and exits with its
status. A signal it gets is passed on to the harness.

Standard library only, and no import of tackroom: it runs on the host's
Python with nothing else of the host visible.
"""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import sys
import threading


def pump(source: socket.socket, sink: socket.socket) -> None:
    """Copy ``source`` to ``sink`` until it ends, then end ``sink``'s writing side."""
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            sink.sendall(data)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)


def connect(one: socket.socket, other: socket.socket) -> None:
    """Pass bytes both ways until both sides are done, then close both."""
    back = threading.Thread(target=pump, args=(other, one), daemon=True)
    back.start()
    pump(one, other)
    back.join()
    one.close()
    other.close()


def _serve(listener: socket.socket, path: str) -> None:
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(path)
        except OSError:
            client.close()
            upstream.close()
            continue
        threading.Thread(target=connect, args=(client, upstream), daemon=True).start()


def main(args: list[str]) -> int:
    split = args.index("--")
    for pair in args[:split]:
        port, _, path = pair.partition("=")
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", int(port)))
        listener.listen(64)
        threading.Thread(target=_serve, args=(listener, path), daemon=True).start()
    child = subprocess.Popen(args[split + 1 :])
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(number, lambda sig, _frame: child.send_signal(sig))
    code = child.wait()
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
