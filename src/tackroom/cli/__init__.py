"""The ``tackroom`` command line: parse, call the library, print. Nothing more.

Errors are shown once, here at the edge: a :class:`~tackroom.errors.TackroomError`
prints one message to stderr and exits 1; usage errors exit 2; Ctrl-C exits
130; a traceback only with ``--debug``.

The commands live in :mod:`tackroom.cli.app`. A usage report, the adapter
listing, a run and a profile render, the commands people and scripts run over and over, first try
:mod:`tackroom.cli.quick`, which takes their common forms without importing
the CLI framework; anything it does not handle exactly (help, a mistake, an
option it does not know) goes to the full application, which says what is
wrong.
"""

from __future__ import annotations

import io
import sys

TYPE_CHECKING = False  # not typing's: a usage report answered from the index should not load it
if TYPE_CHECKING:
    from typing import Any


def main() -> None:
    """Console-script entry point. It ends the process, once the command is done by :func:`os._exit`
    (see :func:`_end_now`), else by exit: call it as a command, not as a function to come back from."""
    debug = "--debug" in sys.argv[1:]
    for stream in (sys.stdout, sys.stderr):
        # A path or name from outside can hold a lone surrogate (undecodable bytes in argv or a
        # file name); printing it must show an escape, not crash the command.
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    try:
        if sys.argv[1:2] != ["resident"]:
            from tackroom.handover import hand_over

            code = hand_over(start="tackroom.cli:main")
            if code is not None:
                _end_now(code)
        if sys.argv[1:2] == ["usage"]:
            from tackroom.cli.quick import usage_quickly

            if usage_quickly(sys.argv[2:]):
                _end_now()
        elif sys.argv[1:2] == ["adapters"]:
            from tackroom.cli.quick import adapters_quickly

            if adapters_quickly(sys.argv[2:]):
                _end_now()
        elif sys.argv[1:2] == ["profile"]:
            from tackroom.cli.quick import render_quickly

            if render_quickly(sys.argv[2:]):
                _end_now()
        elif sys.argv[1:2] == ["run"]:
            from tackroom.cli.quick import run_quickly

            code = run_quickly(sys.argv[2:])
            if code is not None:
                _end_now(code)
        from tackroom.cli.app import app

        try:
            app(prog_name="tackroom")
        except SystemExit as done:
            _end_now(done.code)
    except KeyboardInterrupt:
        sys.exit(130)
    except BrokenPipeError:
        # The reader went away (`tackroom ... | head`): nothing more to say, and nowhere to say it.
        # Python would report the unflushed stdout at exit too, so it is pointed at /dev/null first.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)  # as Click ends every other command the pipe stops
    except Exception as exc:
        from tackroom.errors import TackroomError  # imported only now: the quickest commands skip it

        if not isinstance(exc, TackroomError):
            raise
        from tackroom.redact import redact_text

        if debug:
            import traceback

            traceback.print_exc()
        # An error may quote what the user typed, a URL with a password in it included.
        print(f"tackroom: error: {redact_text(str(exc))}", file=sys.stderr)
        sys.exit(1)


def _end_now(code: object = 0) -> None:
    """End the process with ``code``: the command is done. The output is flushed and the exit handlers
    run, but the interpreter does not take itself apart object by object on the way out: 45 ms of a
    run, whose command loads some 330 modules (after a first pass over 500 MB of logs, 20 to 35 ms;
    3 ms of a repeat). A thread still at work (a server's), or an exit that is a message, ends as
    Python ends it."""
    import atexit
    import os

    threading = sys.modules.get("threading")  # never imported: no thread was started with it
    if not (code is None or isinstance(code, int)) or (
        threading is not None
        and any(not t.daemon for t in threading.enumerate() if t is not threading.main_thread())
    ):
        raise SystemExit(code)
    sys.stdout.flush()  # a reader gone raises BrokenPipeError here, handled as for any command
    sys.stderr.flush()
    atexit._run_exitfuncs()  # what exit would run first (multiprocessing's, after a scan)
    os._exit(code or 0)


def __getattr__(name: str) -> Any:
    if name == "app":
        from tackroom.cli.app import app

        return app
    raise AttributeError(f"module 'tackroom.cli' has no attribute {name!r}")
