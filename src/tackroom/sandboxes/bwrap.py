"""``bwrap``: the harness in bubblewrap, with the host's files read-only and nothing of the user's.

The harness sees the host's root filesystem read-only, with a private
``/tmp`` and the caller's real home (and ``/home``, ``/root``) hidden; its
run directory (its home and TMPDIR) and its workdir are the only places it can
write. It runs in its own PID namespace (``--die-with-parent``: if tackroom
goes, it goes; the run's timeout stops the whole namespace). Paths keep their
host names inside, so what the harness writes is read back where it is.

With ``network = "none"`` it gets a network namespace of its own, where only
loopback exists, and ``npm_config_offline=true``, so npm does not wait out its
retries there. The model endpoint is reached through a UNIX socket bound into
the sandbox: a relay inside (:mod:`tackroom.sandboxes.relay`) listens on the
endpoint's own loopback port and passes each connection to the socket, and
tackroom passes it on to the mock or the gateway. Nothing else is reachable:
no other port of the host, no other host, no UNIX socket under ``/run``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from tackroom.errors import RunSpecError
from tackroom.run.sandbox import Network, Places, SharedPlaces, spawn_on_host
from tackroom.sandboxes.relay import connect

if TYPE_CHECKING:
    from tackroom.run.process import Conversation, LineCallback, ProcessResult

HIDDEN = (Path("/home"), Path("/root"))
"""Other people's homes and root's: hidden as the caller's own is."""
SOCKETS = Path("/run/tackroom-model")
"""Where the model endpoint's sockets are inside an offline sandbox (a UNIX socket's path is short)."""
_RELAY = Path(__file__).with_name("relay.py")


@cache
def _namespaces() -> str | None:
    """None when bwrap can make the namespaces a run needs here; else what it said, and the fix."""
    try:
        done = subprocess.run(
            ["bwrap", "--ro-bind", "/", "/", "--unshare-pid", "--unshare-net", "--", "true"],
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap did not run: {exc}"
    if done.returncode == 0:
        return None
    said = done.stderr.decode("utf-8", "replace").strip()[:300]
    return (
        f"bwrap cannot create namespaces here ({said}): allow unprivileged user namespaces "
        "(sysctl kernel.unprivileged_userns_clone=1 and user.max_user_namespaces > 0; on Ubuntu 24.04 "
        "also kernel.apparmor_restrict_unprivileged_userns=0)"
    )


class BwrapSandbox(SharedPlaces):
    """The harness in bubblewrap: host read-only, the user's homes hidden, its places writable."""

    name = "bwrap"
    isolates_network = True
    reaches_host_loopback = True
    persistent = True
    binds_paths = True
    requires = "bubblewrap (Debian and Ubuntu: apt-get install bubblewrap)"

    def __init__(self, places: Places, network: Network = "host", image: str | None = None) -> None:
        super().__init__(places, network, image)
        self._ports: dict[int, tuple[str, int]] = {}
        self._relays: list[_HostRelay] = []
        self._sockets: Path | None = None

    @classmethod
    def available(cls) -> str | None:
        if shutil.which("bwrap") is None:
            return f"no bwrap on PATH: install {cls.requires}"
        return _namespaces()

    def visible_url(self, url: str) -> str:
        """The same URL: with a network of its own, the relay listens on the endpoint's own port."""
        if self.network == "none":
            parts = urlsplit(url)
            host, port = parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80)
            if host not in ("127.0.0.1", "localhost", "::1"):
                raise RunSpecError(
                    f"a bwrap run with network = 'none' reaches only a model endpoint on this host's "
                    f"loopback (the mock, a gateway), not {url!r}: start a gateway in front of it (--capture)"
                )
            self._ports[port] = ("127.0.0.1" if host == "localhost" else host, port)
        return url

    def argv(self, argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> list[str]:
        """The bwrap command line that runs ``argv`` in this sandbox (its relay in front, offline)."""
        places = self.places
        hidden = [*HIDDEN, *([places.real_home] if places.real_home is not None else [])]
        if self.network == "none":
            hidden.append(Path("/run"))  # UNIX sockets of the host's services (dbus, docker)
        wrapped = ["bwrap", "--die-with-parent", "--unshare-pid"]
        wrapped += _fresh_root(hidden) if places.binds else ["--ro-bind", "/", "/"]
        wrapped += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
        if self.network == "none":
            # npm, and what the harness starts with it (opencode's plugin dependencies, an npx MCP
            # server), is told the network is not there: it uses its cache or fails at once, where it
            # would wait out its retries (opencode acp 1.18.33 then never answered initialize).
            wrapped += ["--unshare-net", "--setenv", "npm_config_offline", "true"]
        for directory in hidden:
            if directory.is_dir() and directory != Path("/"):
                wrapped += ["--tmpfs", str(directory)]
        for path in self._readable(env):
            wrapped += ["--ro-bind", str(path), str(path)]
        for path in dict.fromkeys((places.run_dir, places.workdir, *places.writable)):
            wrapped += ["--bind", str(path), str(path)]
        for inside, path in sorted(places.binds, key=lambda bind: len(Path(bind[0]).parts)):
            wrapped += ["--bind", str(path), inside]
        if self.network == "none" and self._ports:
            wrapped += ["--bind", str(self._socket_dir()), str(SOCKETS)]
        wrapped += ["--chdir", str(self.visible_path(cwd))]
        if self.network == "none" and self._ports:
            relay = [f"{port}={SOCKETS / f'{port}.sock'}" for port in sorted(self._ports)]
            wrapped += ["--", sys.executable, "-I", "-S", str(self._relay_file()), *relay, "--"]
        else:
            wrapped.append("--")
        return [*wrapped, *argv]

    async def spawn(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: Path,
        timeout_s: float,
        stdin: bytes | Conversation | None,
        on_stdout_line: LineCallback | None,
        escape_marker: str | None,
    ) -> ProcessResult:
        command = self.argv(argv, cwd, env)
        if self.network == "none":
            for port, target in sorted(self._ports.items()):
                self._relays.append(_HostRelay(self._socket_dir() / f"{port}.sock", target))
        try:
            return await spawn_on_host(
                command, env, cwd, timeout_s, stdin, on_stdout_line, escape_marker, wrapper=self.name
            )
        finally:
            self.stop()

    def stop(self) -> None:
        """The namespace ends with the process group run_process stops; the host relays end here."""
        relays, self._relays = self._relays, []
        for relay in relays:
            relay.close()
        sockets, self._sockets = self._sockets, None
        if sockets is not None:
            shutil.rmtree(sockets, ignore_errors=True)

    def _socket_dir(self) -> Path:
        """A short host directory for the relay sockets (a run directory's path may pass the 108
        bytes a UNIX socket's name can have), private to this run."""
        if self._sockets is None:
            self._sockets = Path(tempfile.mkdtemp(prefix="tackroom-model-"))
        return self._sockets

    def _relay_file(self) -> Path:
        target = self.places.run_dir / "sandbox" / "relay.py"
        target.parent.mkdir(exist_ok=True)
        shutil.copyfile(_RELAY, target)
        return target

    def _readable(self, env: Mapping[str, str]) -> list[Path]:
        """What a hidden directory holds that the harness must read: its install, its runtime, the
        Python the relay runs on (each bound back read-only, only where it was hidden)."""
        hidden = [*HIDDEN, Path("/tmp"), *([self.places.real_home] if self.places.real_home else [])]
        # The probe's MCP server and hooks run tackroom's own scripts on this Python.
        package = Path(__file__).resolve().parents[1]
        wanted = [*self.places.read_only, Path(sys.prefix), Path(sys.base_prefix), package]
        for entry in (Path(p) for p in env.get("PATH", "").split(os.pathsep) if p):
            # A tool manager's bin dir (~/.pyenv/shims, ~/.nvm/versions/node/v22/bin) needs the
            # tree it is in; never a hidden directory itself (~/bin: only ~/bin), nor ~/.local
            # (~/.local/bin: only that), whose share/ holds the user's data (tackroom's own too).
            parent = entry.parent
            shared = parent in hidden or parent.name == ".local"
            wanted.append(entry if shared else parent)
        found: list[Path] = []
        for path in wanted:
            real = Path(os.path.realpath(path))
            for candidate in (path, real):
                if candidate.is_absolute() and candidate.exists() and _under_any(candidate, hidden):
                    found.append(candidate)
        return list(dict.fromkeys(found))


def _fresh_root(hidden: Sequence[Path]) -> list[str]:
    """A tmpfs root with the host's top-level directories bound in read-only (its links made again),
    so a path the host lacks (``/app``, ``/tests``) can be made inside: bubblewrap has no overlay."""
    made = ["--tmpfs", "/"]
    for path in sorted(Path("/").iterdir()):
        if path.name in ("proc", "dev", "tmp") or path in hidden:
            continue
        if path.is_symlink():
            made += ["--symlink", str(path.readlink()), str(path)]
        elif path.is_dir():
            made += ["--ro-bind", str(path), str(path)]
    return made


def _under_any(path: Path, roots: Sequence[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)


class _HostRelay:
    """A UNIX socket in the run directory whose connections go on to the model endpoint on loopback."""

    def __init__(self, path: Path, target: tuple[str, int]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        self._path, self._target = path, target
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(str(path))
        self._listener.listen(64)
        self._thread = threading.Thread(target=self._serve, name="tackroom-bwrap-relay", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self._target, timeout=10)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            threading.Thread(target=connect, args=(client, upstream), daemon=True).start()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        self._thread.join(timeout=2)
        with contextlib.suppress(OSError):
            self._path.unlink()
