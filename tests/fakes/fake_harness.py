#!/usr/bin/env python3
"""A scripted fake harness: the test double for the process layer and the runner.

It is run as a real subprocess, never patched in. Each option scripts one
behaviour of a real coding-agent CLI (a recorded stream, a hang, a leftover
MCP server, a process that ignores SIGTERM, a flood, bytes that are not
UTF-8), in this order: signals, pid announcement, environment, stdin, file,
stderr, flood, replay, emitted bytes, big output, child processes, hang, exit.

With ``--announce``, pids go to stderr as ``pid <n>`` (the leader, which also
names the process group) and ``child <n>`` (each forked child), so a test can
check afterwards that every one of them is gone; ``--pid-file`` appends the
same lines to a file, for a test that cannot read the fake's stderr live.

Every process that would sleep "forever" gives up after ``--lifetime``
seconds, so a broken process layer cannot leave these fakes running for long.
"""

from __future__ import annotations

import argparse
import codecs
import json
import os
import signal
import sys
import time
from pathlib import Path


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="fake_harness", description=__doc__.splitlines()[0])
    p.add_argument("--replay", type=Path, help="print this recorded stream to stdout, line by line")
    p.add_argument("--line-delay", type=float, default=0.0, help="seconds to sleep after each replayed line")
    p.add_argument(
        "--substitute",
        metavar="OLD",
        help="in replayed lines, replace OLD with the --prompt value (escaped as in a JSON string)",
    )
    p.add_argument(
        "--emit",
        action="append",
        default=[],
        metavar="TEXT",
        help=r"print TEXT as a stdout line, backslash escapes decoded to bytes (\xff: not UTF-8)",
    )
    p.add_argument(
        "--flood",
        metavar="LINE",
        help="print LINE over and over as fast as the pipe takes it (like `yes`), up to --lifetime",
    )
    p.add_argument("--flood-bytes", type=int, default=0, metavar="N", help="stop the flood after N bytes")
    p.add_argument("--stderr", help="print this text (and a newline) to stderr")
    p.add_argument("--exit-code", type=int, default=0)
    p.add_argument("--hang", action="store_true", help="sleep (up to --lifetime) after all output")
    p.add_argument("--ignore-sigterm", action="store_true", help="the leader ignores SIGTERM")
    p.add_argument(
        "--trap-sigterm",
        type=Path,
        metavar="PATH",
        help="on SIGTERM, take a moment to 'save the session' to PATH, then exit 143",
    )
    p.add_argument("--spawn-children", type=int, default=0, metavar="N", help="fork N sleeping children")
    p.add_argument("--children-ignore-sigterm", action="store_true", help="those children ignore SIGTERM")
    p.add_argument("--daemonize-child", action="store_true", help="fork a child that outlives the leader")
    p.add_argument(
        "--escape-child",
        action="store_true",
        help="fork a child that leaves the process group (setsid) but keeps stdout and stderr open",
    )
    p.add_argument(
        "--hide-child",
        action="store_true",
        help="fork a child that leaves the group (setsid), lets go of stdout and stderr, and execs a "
        "sleeper with an empty environment: no marker of the run is left on it",
    )
    p.add_argument("--echo-stdin", action="store_true", help='print {"stdin": ..., "fd0": ...} as JSON')
    p.add_argument("--print-env", nargs="+", default=[], metavar="NAME", help="print NAME=value if set")
    p.add_argument(
        "--dump-environ", action="store_true", help="print the exec-time environment as one JSON object"
    )
    p.add_argument("--big-output", type=int, default=0, metavar="BYTES", help="print BYTES of numbered lines")
    p.add_argument(
        "--write-file", nargs=2, metavar=("PATH", "TEXT"), help="write TEXT to PATH (cwd-relative)"
    )
    p.add_argument(
        "--try",
        dest="attempts",
        action="append",
        default=[],
        metavar="KIND:TARGET",
        help="try write:PATH, read:PATH, connect:HOST:PORT or http:URL; print how it went to stderr as JSON",
    )
    p.add_argument("--announce", action="store_true", help="print pids to stderr")
    p.add_argument("--pid-file", type=Path, metavar="PATH", help="append the announced pid lines to PATH")
    p.add_argument("--prompt", help="accepted and ignored, as a real harness would take its prompt")
    p.add_argument("--lifetime", type=float, default=60.0, help="upper bound on any sleep 'forever'")
    return p


def big_output(size: int) -> bytes:
    """Numbered 10-byte lines, cut to ``size`` bytes: every suffix is recognisable."""
    lines = b"".join(b"%09d\n" % i for i in range(size // 10 + 1))
    return lines[:size]


def _say(text: str, pid_file: Path | None = None) -> None:
    # os.write, not print: nothing may sit in a buffer that a fork would duplicate.
    os.write(2, f"{text}\n".encode())
    if pid_file is not None:
        with pid_file.open("a") as out:
            out.write(f"{text}\n")


def _exec_environ() -> dict[str, str]:
    # /proc/self/environ is what execve received, before Python's own locale
    # coercion (PEP 538) may add LC_CTYPE to os.environ.
    raw = Path("/proc/self/environ").read_bytes()
    pairs = (item.decode().partition("=") for item in raw.split(b"\0") if item)
    return {name: value for name, _, value in pairs}


def _trap_sigterm(path: Path) -> None:
    def save_and_exit(signum: int, frame: object) -> None:
        time.sleep(0.2)  # a real harness flushes its transcript; a zero grace would cut it off
        path.write_text("saved on SIGTERM\n")
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, save_and_exit)


def _fork_sleeper(*, ignore_sigterm: bool, new_session: bool, lifetime: float) -> int:
    """Fork a child that sleeps; return its pid once it has set itself up."""
    sys.stdout.flush()
    sys.stderr.flush()
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(ready_r)
            if new_session:
                os.setsid()
            signal.signal(signal.SIGTERM, signal.SIG_IGN if ignore_sigterm else signal.SIG_DFL)
            os.write(ready_w, b"!")
            os.close(ready_w)
            time.sleep(lifetime)
        finally:
            os._exit(0)
    os.close(ready_w)
    # Wait for the child's setup, so a test never races its setsid or SIG_IGN.
    os.read(ready_r, 1)
    os.close(ready_r)
    return pid


def _fork_hidden(lifetime: float) -> int:
    """Fork a child that hides: a session of its own, no pipes of the run, an empty environment."""
    sys.stdout.flush()
    sys.stderr.flush()
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(ready_r)
            os.setsid()
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            os.set_inheritable(ready_w, True)
            code = f"import os, time; os.write({ready_w}, b'!'); os.close({ready_w}); time.sleep({lifetime})"
            os.execve(sys.executable, [sys.executable, "-S", "-c", code], {})
        finally:
            os._exit(0)
    os.close(ready_w)
    os.read(ready_r, 1)  # once it runs as the new program, with nothing of the run's environment
    os.close(ready_r)
    return pid


def _spawn(args: argparse.Namespace) -> None:
    plans = [(args.children_ignore_sigterm, False)] * args.spawn_children
    plans += [(False, False)] * args.daemonize_child + [(False, True)] * args.escape_child
    for ignore_sigterm, new_session in plans:
        pid = _fork_sleeper(ignore_sigterm=ignore_sigterm, new_session=new_session, lifetime=args.lifetime)
        if args.announce:
            _say(f"child {pid}", args.pid_file)
    if args.hide_child:
        pid = _fork_hidden(args.lifetime)
        if args.announce:
            _say(f"child {pid}", args.pid_file)


def _attempt(kind: str, target: str) -> None:
    """What a sandbox must refuse or allow, tried for real; the outcome goes to stderr."""
    import socket
    import urllib.error
    import urllib.request

    try:
        if kind == "write":
            Path(target).write_text("written by the fake harness\n")
        elif kind == "read":
            Path(target).read_bytes()
        elif kind == "connect":
            host, _, port = target.rpartition(":")
            socket.create_connection((host, int(port)), timeout=3).close()
        elif kind == "http":
            with urllib.request.urlopen(target, timeout=5) as answer:
                answer.read()
        else:
            raise ValueError(f"no such attempt {kind!r}")
        outcome = {"try": kind, "target": target, "ok": True}
    except urllib.error.HTTPError as exc:  # an answer, if not a 200: the endpoint was reached
        outcome = {"try": kind, "target": target, "ok": True, "status": exc.code}
    except Exception as exc:  # the outcome is the point: any failure is reported, not raised
        outcome = {"try": kind, "target": target, "ok": False, "error": f"{type(exc).__name__}: {exc}"}
    print(json.dumps(outcome), file=sys.stderr, flush=True)


def _print_inputs(args: argparse.Namespace) -> None:
    for attempt in args.attempts:
        kind, _, target = attempt.partition(":")
        _attempt(kind, target)
    for name in args.print_env:
        if name in os.environ:
            print(f"{name}={os.environ[name]}", flush=True)
    if args.dump_environ:
        print(json.dumps(_exec_environ()), flush=True)
    if args.echo_stdin:
        data = sys.stdin.buffer.read()
        print(
            json.dumps({"stdin": data.decode(), "fd0": str(Path("/proc/self/fd/0").readlink())}), flush=True
        )


def _print_outputs(args: argparse.Namespace) -> None:
    if args.write_file:
        Path(args.write_file[0]).write_text(args.write_file[1])
    if args.stderr is not None:
        print(args.stderr, file=sys.stderr, flush=True)
    if args.flood is not None:
        _flood(args.flood.encode() + b"\n", args.flood_bytes, args.lifetime)
    if args.replay is not None:
        _replay(args)
    for text in args.emit:
        sys.stdout.buffer.write(codecs.escape_decode(text.encode())[0] + b"\n")
        sys.stdout.flush()
    if args.big_output:
        sys.stdout.buffer.write(big_output(args.big_output))
        sys.stdout.flush()


def _replay(args: argparse.Namespace) -> None:
    old = args.substitute.encode() if args.substitute else None
    new = json.dumps(args.prompt or "")[1:-1].encode()
    for line in args.replay.read_bytes().splitlines(keepends=True):
        sys.stdout.buffer.write(line.replace(old, new) if old else line)
        sys.stdout.flush()
        time.sleep(args.line_delay)


def _flood(line: bytes, limit: int, lifetime: float) -> None:
    """Write ``line`` in 64 KiB blocks until ``limit`` bytes (0: no limit) or ``lifetime`` seconds."""
    block = line * max(1, 65536 // len(line))
    deadline = time.monotonic() + lifetime
    written = 0
    while time.monotonic() < deadline and (not limit or written < limit):
        chunk = block if not limit else block[: limit - written]
        written += os.write(1, chunk)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.ignore_sigterm:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if args.trap_sigterm is not None:
        _trap_sigterm(args.trap_sigterm)
    if args.announce:
        _say(f"pid {os.getpid()}", args.pid_file)
    _print_inputs(args)
    _print_outputs(args)
    _spawn(args)
    if args.hang:
        time.sleep(args.lifetime)
    return int(args.exit_code)


if __name__ == "__main__":
    sys.exit(main())
