"""A real PostgreSQL server for the capture store's tests, started by the test session itself.

``initdb`` makes a cluster in a temp dir, ``postgres`` serves it on a unix
socket only (no TCP port), with fsync off; the session stops it at its end
and removes the dir. Run as root, the server runs as an unprivileged user
(``postgres`` if it exists, else ``nobody``): PostgreSQL refuses to run as root.

The binaries are found in ``$TACKROOM_TEST_POSTGRES_BIN``, else in
``/usr/lib/postgresql/<version>/bin``, else on PATH.
When they are missing the Postgres tests skip, saying why, unless
``TACKROOM_TEST_REQUIRE_POSTGRES=1`` (set by ``scripts/test``, so CI fails instead).

Each test gets its own database: :func:`backend` yields what ``--db`` takes
(a SQLite file path, or a ``postgresql://`` URL).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REQUIRE_ENV = "TACKROOM_TEST_REQUIRE_POSTGRES"
BIN_ENV = "TACKROOM_TEST_POSTGRES_BIN"
_START_S = 60.0
_names = itertools.count()


def pg_bin(name: str) -> str | None:
    """A PostgreSQL server binary: in $TACKROOM_TEST_POSTGRES_BIN if set, else the newest Debian one,
    else on PATH."""
    chosen = os.environ.get(BIN_ENV)
    if chosen is not None:
        path = Path(chosen) / name
        return str(path) if path.is_file() else None
    found = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"), key=_version)
    return str(found[-1]) if found else shutil.which(name)


def _version(binary: Path) -> int:
    name = binary.parent.parent.name
    return int(name) if name.isdigit() else 0


def _run_as() -> pwd.struct_passwd | None:
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            return pwd.getpwnam(name)
    raise RuntimeError("running as root and neither a 'postgres' nor a 'nobody' user exists")


@dataclass
class PostgresServer:
    socket_dir: Path
    port: int
    user: str = "tackroom"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.user}@/{database}?host={self.socket_dir}&port={self.port}"

    def new_database(self) -> str:
        """A fresh, empty database's URL."""
        import psycopg

        name = f"t{os.getpid()}_{next(_names)}"
        with psycopg.connect(self.url(), autocommit=True) as db:
            db.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def drop_database(self, url: str) -> None:
        import psycopg

        name = url.split("/")[3].split("?")[0]
        with psycopg.connect(self.url(), autocommit=True) as db:
            db.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def dump(self, url: str) -> str:
        """The whole database as SQL text (pg_dump: every row of every table)."""
        dump = pg_bin("pg_dump")
        assert dump is not None
        done = subprocess.run([dump, "--dbname", url], capture_output=True, timeout=60, check=False)
        assert done.returncode == 0, done.stderr.decode(errors="replace")
        return done.stdout.decode("utf-8", errors="replace")


def _unavailable(reason: str) -> None:
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"PostgreSQL is required here ({REQUIRE_ENV}=1) but {reason}")
    pytest.skip(f"PostgreSQL tests skipped: {reason} (scripts/test installs Debian's postgresql)")


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """The session's PostgreSQL server (without one: a skip, or a failure if one is required)."""
    initdb, postgres = pg_bin("initdb"), pg_bin("postgres")
    if initdb is None or postgres is None:
        _unavailable("initdb/postgres not found on PATH or in /usr/lib/postgresql/*/bin")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _unavailable("psycopg is not installed (pip install -e '.[test]')")
    assert initdb is not None and postgres is not None
    owner = _run_as()
    # In /tmp: a unix socket's path must stay under 108 bytes, whatever TMPDIR is.
    root = Path(tempfile.mkdtemp(prefix="tackroom-pg-", dir="/tmp" if Path("/tmp").is_dir() else None))
    root.chmod(0o755)
    data, sockets = root / "data", root / "run"
    sockets.mkdir()
    if owner is not None:
        os.chown(root, owner.pw_uid, owner.pw_gid)
        os.chown(sockets, owner.pw_uid, owner.pw_gid)
    as_owner: dict[str, object] = {} if owner is None else {"user": owner.pw_uid, "group": owner.pw_gid}
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "TZ": "UTC"}
    process: subprocess.Popen[bytes] | None = None
    log = (root / "postgres.log").open("wb")
    try:
        made = subprocess.run(
            [initdb, "-D", str(data), "-U", "tackroom", "--auth=trust", "-E", "UTF8", "--no-sync"],
            capture_output=True,
            timeout=120,
            check=False,
            cwd=root,
            env=env,
            **as_owner,  # type: ignore[call-overload]
        )
        if made.returncode != 0:
            pytest.fail(f"initdb failed: {made.stderr.decode(errors='replace')}")
        port = 50000 + os.getpid() % 10000
        # The server dies with this process even if it is killed (no stop below): setpriv sets the
        # parent-death signal, which postgres keeps (SIGINT: a fast shutdown).
        setpriv = shutil.which("setpriv")
        guard = [setpriv, "--pdeathsig", "INT"] if setpriv else []
        process = subprocess.Popen(
            [
                *guard,
                postgres,
                "-D", str(data),
                "-k", str(sockets),
                "-p", str(port),
                "-c", "listen_addresses=",
                "-c", "fsync=off",
                "-c", "synchronous_commit=off",
                "-c", "full_page_writes=off",
                "-c", "shared_buffers=16MB",
                "-c", "max_connections=50",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=root,
            env=env,
            **as_owner,  # type: ignore[call-overload]
        )  # fmt: skip
        server = PostgresServer(sockets, port)
        _wait_ready(server, process, root / "postgres.log")
        yield server
    finally:
        if process is not None:
            process.send_signal(signal.SIGINT)  # fast shutdown: ends the connections, then exits
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)
        log.close()
        shutil.rmtree(root, ignore_errors=True)


def _wait_ready(server: PostgresServer, process: subprocess.Popen[bytes], log: Path) -> None:
    import psycopg

    deadline = time.monotonic() + _START_S
    while True:
        if process.poll() is not None:
            pytest.fail(f"postgres exited at start: {log.read_text(errors='replace')[-2000:]}")
        try:
            with psycopg.connect(server.url(), connect_timeout=2):
                return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                pytest.fail(f"postgres did not accept connections in {_START_S:g}s")
            time.sleep(0.05)


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """What ``--db`` takes for a fresh, empty capture store of each backend."""
    if request.param == "sqlite":
        yield str(tmp_path / "capture.db")
        return
    server: PostgresServer = request.getfixturevalue("postgres_server")
    url = server.new_database()
    try:
        yield url
    finally:
        server.drop_database(url)
