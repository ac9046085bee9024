"""Shared fixtures. Every test runs with its own HOME, XDG dirs and tackroom config dir."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from tackroom.mock import MockServer, Script

# CI (scripts/test) draws the same examples on every run, so a red run is reproducible and a
# session's work is never lost to a new random draw; `scripts/fuzz` explores fresh seeds.
settings.register_profile("ci", derandomize=True, database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

Serve = Callable[..., MockServer]

ROOT = Path(__file__).resolve().parent.parent

# A `tackroom` command starts a resident for the commands after it (tackroom.handover.start_for_next):
# not in a test, whose commands must each run as the test says and leave nothing running. A test of
# that start sets it to "" for its own commands; pytest_sessionfinish stops any resident left behind.
os.environ["TACKROOM_NO_RESIDENT_START"] = "1"


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Kill any resident tackroom still serving in this session's temporary directories, and fail
    the session naming it: a test must stop what it started."""
    if hasattr(session.config, "workerinput"):
        return  # a worker of pytest-xdist: the controller looks once every worker has ended
    import signal

    factory = getattr(session.config, "_tmp_path_factory", None)
    if factory is None:
        return
    from prockit import processes

    base = os.fsencode(factory.getbasetemp())
    left = []
    for pid, argv in processes(
        lambda argv: (
            any(b"tackroom.resident as r" in arg for arg in argv)
            and any(arg.startswith(base) for arg in argv)
        )
    ).items():
        socket = next(arg for arg in argv if arg.startswith(base))
        left.append(f"pid {pid}, at {os.fsdecode(socket)}")
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    if left:
        print("\nresident tackrooms left running by the tests (killed):\n" + "\n".join(left))
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="Rewrite golden files from the current code (review the diff).",
    )


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Point HOME, XDG dirs and TACKROOM_CONFIG_DIR into a temp dir: tests never touch the real home."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    for name, sub in (
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_DATA_HOME", ".local/share"),
        ("XDG_CACHE_HOME", ".cache"),
        ("XDG_STATE_HOME", ".local/state"),
    ):
        monkeypatch.setenv(name, str(home / sub))
    monkeypatch.setenv("TACKROOM_CONFIG_DIR", str(home / "tackroom-config"))
    monkeypatch.delenv("TACKROOM_NO_CACHE", raising=False)
    yield home


@pytest.fixture
def config_dir(isolated_home: Path) -> Path:
    """The operator config dir of this test (created)."""
    path = Path(os.environ["TACKROOM_CONFIG_DIR"])
    (path / "adapters.d").mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def serve() -> Iterator[Serve]:
    """Start mock servers for a test (``serve(script, tools=...)``); all stop at teardown."""
    servers: list[MockServer] = []

    def start(script: Script | None = None, **options: Any) -> MockServer:
        servers.append(MockServer(script, **options).start())
        return servers[-1]

    yield start
    for server in servers:
        server.stop()
