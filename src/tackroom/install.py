"""``tackroom install``: harnesses from their adapter's npm or pip recipe, into a managed prefix.

Each install lands in ``$XDG_DATA_HOME/tackroom/harnesses/<harness>/<version>/``,
is checked (the executable must run ``version_argv``), and only then gets its
marker file: a prefix without a marker is incomplete and is redone, one with a
marker makes installing again a no-op.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tackroom.errors import InstallError
from tackroom.harnesses import MARKER, install_prefix, managed_installs, read_marker
from tackroom.paths import Transaction, inside

if TYPE_CHECKING:
    from tackroom.adapters.adapter import Adapter
    from tackroom.adapters.spec import Install

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Installed:
    """The outcome of one install."""

    adapter: str
    harness: str
    version: str
    prefix: Path
    executable: Path
    already: bool
    """True when it was installed before and nothing was done."""
    seconds: float

    def to_json(self) -> dict[str, object]:
        return {
            "adapter": self.adapter,
            "harness": self.harness,
            "version": self.version,
            "prefix": str(self.prefix),
            "executable": str(self.executable),
            "already_installed": self.already,
            "seconds": round(self.seconds, 2),
        }


def install(
    adapter: Adapter,
    version: str | None = None,
    *,
    env: Mapping[str, str] | None = None,
    progress: Progress | None = None,
) -> Installed:
    """Install ``adapter``'s harness at ``version`` (default: the version it was verified with).

    Another version installs beside the verified one (each has its own prefix),
    with the install recipe and version check of the adapter's data for that
    version (its ``since`` entries). The newest release a registry offers is
    :func:`tackroom.registry.latest_version`.
    """
    env = os.environ if env is None else env
    if adapter.spec.install is None:
        raise InstallError(
            f"adapter {adapter.name!r} has no install recipe: install {adapter.spec.executable!r} yourself "
            "and put it on PATH, or set the adapter's executable to its path"
        )
    version = version or adapter.spec.verified_with
    if not version:
        raise InstallError(
            f"adapter {adapter.name!r} was never verified with a harness version, so there is no pinned "
            "version to install: pass --version"
        )
    adapter = adapter.at(version)
    recipe = adapter.spec.install
    if recipe is None:  # a since entry cannot remove it, but a type checker cannot know that
        raise InstallError(f"adapter {adapter.name!r} has no install recipe for {version}")
    started = time.monotonic()
    # The version becomes a directory that a failed install deletes: proven one safe name first.
    prefix = install_prefix(adapter.harness, version, env)
    done = _already(adapter, version, prefix, env)
    if done is not None:
        return done
    # Two installs of one version at once (two runs, two test workers) would delete each
    # other's half-made prefix: the second waits for the first, then finds it done.
    with _locked(prefix):
        done = _already(adapter, version, prefix, env)
        if done is not None:
            return done
        return _install_into(adapter, recipe, version, prefix, env, progress, started)


def _install_into(
    adapter: Adapter,
    recipe: Install,
    version: str,
    prefix: Path,
    env: Mapping[str, str],
    progress: Progress | None,
    started: float,
) -> Installed:
    report = progress or (lambda _line: None)
    # Installed straight into its prefix (a virtualenv cannot be moved after it is made); the
    # marker, written last, is what makes a prefix count as installed, so a failed or
    # interrupted install (or a marker that does not check out) is simply redone.
    _remove(prefix)
    prefix.mkdir(parents=True)
    try:
        bin_dir = (
            _npm(adapter, version, prefix, env, report)
            if recipe.npm
            else _pip(adapter, version, prefix, env, report)
        )
        name = recipe.bin or adapter.spec.executable
        _check_runs(adapter, prefix / bin_dir / name, version, env)
        marker = {
            "adapter": adapter.name,
            "package": recipe.npm or recipe.pip or "",
            "version": version,
            "executable": str(prefix / bin_dir / name),
            "bin_dir": str(prefix / bin_dir),
        }
        files = Transaction(prefix)
        files.put(MARKER, json.dumps(marker, indent=2).encode("utf-8"))
        files.commit()
    except BaseException:
        _remove(prefix)
        raise
    executable = prefix / bin_dir / name
    return Installed(
        adapter.name, adapter.harness, version, prefix, executable, False, time.monotonic() - started
    )


def _already(adapter: Adapter, version: str, prefix: Path, env: Mapping[str, str]) -> Installed | None:
    """The install already in ``prefix``, when its marker checks out and its executable is there."""
    if version not in managed_installs(adapter.harness, env):
        return None
    try:
        executable = Path(read_marker(prefix)["executable"])
    except InstallError:
        return None
    if not executable.exists():
        return None
    return Installed(adapter.name, adapter.harness, version, prefix, executable, True, 0.0)


@contextlib.contextmanager
def _locked(prefix: Path) -> Iterator[None]:
    """Hold an exclusive lock on installing ``prefix``.

    The lock file is ``harnesses/.locks/<harness>@<version>.lock``: kept apart, so a harness's
    own directory holds only its installs, and a failed install leaves nothing in it.
    """
    locks = inside(prefix.parent.parent, ".locks")
    locks.mkdir(parents=True, exist_ok=True)
    lock = inside(locks, f"{prefix.parent.name}@{prefix.name}.lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _remove(prefix: Path) -> None:
    """Delete an install prefix, re-proving it inside its root (never through a link)."""
    checked = inside(prefix.parent, prefix.name)
    shutil.rmtree(checked, ignore_errors=True)


def _npm(adapter: Adapter, version: str, prefix: Path, env: Mapping[str, str], report: Progress) -> Path:
    recipe = adapter.spec.install
    assert recipe is not None and recipe.npm is not None
    npm = shutil.which("npm", path=env.get("PATH"))
    if npm is None:
        raise InstallError(f"installing {adapter.name!r} needs npm (Node.js), which is not on PATH")
    packages = [f"{recipe.npm}@{version}", *recipe.extra]
    argv = [
        npm,
        "install",
        "--prefix",
        str(prefix),
        "--no-audit",
        "--no-fund",
        "--loglevel",
        "error",
        *packages,
    ]
    _stream(argv, report, adapter, " ".join(packages), {**env, **recipe.env})
    return Path("node_modules/.bin")


def _pip(adapter: Adapter, version: str, prefix: Path, env: Mapping[str, str], report: Progress) -> Path:
    recipe = adapter.spec.install
    assert recipe is not None and recipe.pip is not None
    python = find_python(recipe.python, env) if recipe.python else sys.executable
    if python is None:
        raise InstallError(_no_python(adapter, recipe.python, env))
    report(f"creating a virtual environment for {recipe.pip} with {python}")
    _stream([python, "-m", "venv", str(prefix)], report, adapter, "venv", os.environ)
    pip = [str(prefix / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check"]
    _stream([*pip, f"{recipe.pip}=={version}"], report, adapter, f"{recipe.pip}=={version}", os.environ)
    return Path("bin")


def find_python(versions: Sequence[str], env: Mapping[str, str]) -> str | None:
    """The first interpreter on this machine that runs one of ``versions`` (``3.13``), best first.

    For each version in turn: the Python running tackroom, ``python3.X`` on
    ``env``'s PATH, then pyenv's ``$PYENV_ROOT/versions/3.X*`` (default
    ``~/.pyenv``). A candidate counts only once it has run and said its
    version (a pyenv shim for a version not selected fails, a link may lie).
    """
    for wanted in versions:
        for candidate in _candidates(wanted, env):
            if _python_version(candidate) == wanted:
                return candidate
    return None


def _candidates(version: str, env: Mapping[str, str]) -> list[str]:
    found = []
    if f"{sys.version_info.major}.{sys.version_info.minor}" == version:
        found.append(sys.executable)
    on_path = shutil.which(f"python{version}", path=env.get("PATH", ""))
    if on_path:
        found.append(on_path)
    root = _pyenv_root(env)
    if root is not None:
        try:
            installs = sorted(root.glob(f"{version}*/bin/python{version}"), reverse=True)
        except OSError:
            installs = []
        # 3.1 must not take 3.13's directory: the name is the version or the version and a dot.
        found += [
            str(p)
            for p in installs
            if p.parents[1].name == version or p.parents[1].name.startswith(f"{version}.")
        ]
    return list(dict.fromkeys(found))


def _pyenv_root(env: Mapping[str, str]) -> Path | None:
    if env.get("PYENV_ROOT"):
        return Path(env["PYENV_ROOT"]) / "versions"
    if env.get("HOME"):
        return Path(env["HOME"]) / ".pyenv" / "versions"
    return None


def _python_version(python: str) -> str | None:
    """What ``python`` says its major.minor is, when it runs and has venv; None otherwise."""
    probe = "import sys, venv; print('%d.%d' % sys.version_info[:2])"
    try:
        done = subprocess.run(
            [python, "-I", "-c", probe],
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _no_python(adapter: Adapter, versions: Sequence[str], env: Mapping[str, str]) -> str:
    names = " or ".join(f"python{v}" for v in versions)
    root = _pyenv_root(env)
    where = f"on PATH or under {root}" if root is not None else "on PATH"
    return (
        f"installing {adapter.name!r} needs Python {' or '.join(versions)}, and none runs here: looked for "
        f"{names} {where}; install one (e.g. `pyenv install {versions[0]}`) and try again"
    )


def _stream(argv: list[str], report: Progress, adapter: Adapter, what: str, env: Mapping[str, str]) -> None:
    """Run an installer, reporting each output line; a failure keeps the tail for the error."""
    tail: list[str] = []
    with subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        env=dict(env),
    ) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            line = line.rstrip()
            if line:
                tail = [*tail[-30:], line]
                report(line)
        code = proc.wait()
    if code != 0:
        raise InstallError(_explain(adapter, what, tail))


def _explain(adapter: Adapter, what: str, tail: list[str]) -> str:
    text = "\n".join(tail)
    if any(code in text for code in ("E404", "ETARGET", "No matching distribution", "404 Not Found")):
        reason = "the registry refused it (no such package or version)"
    elif any(code in text for code in ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "Network is unreachable")):
        reason = "a network fetch failed (only the package registries are reachable here)"
    else:
        reason = "the installer failed"
    last = "\n  ".join(tail[-8:])
    return f"could not install {adapter.name!r} ({what}): {reason}\n  {last}"


def _check_runs(adapter: Adapter, executable: Path, version: str, env: Mapping[str, str]) -> None:
    if not executable.exists():
        raise InstallError(
            f"installed {adapter.name!r} {version} but {executable.name!r} is missing from its prefix: the "
            "package's install script most likely downloads the real binary from the internet, which "
            "this machine cannot reach (npm 11 also skips install scripts by default)"
        )
    path = f"{executable.parent}{os.pathsep}{env.get('PATH', '')}"
    try:
        with tempfile.TemporaryDirectory(prefix="tackroom-check-") as home:
            done = subprocess.run(
                [str(executable), *adapter.spec.version_argv],
                capture_output=True,
                text=True,
                timeout=60,
                stdin=subprocess.DEVNULL,
                env={"PATH": path, "HOME": home, "TMPDIR": home, "LANG": "C.UTF-8"},
                check=False,
            )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InstallError(f"installed {adapter.name!r} {version} but it does not run: {exc}") from exc
    if done.returncode != 0:
        output = (done.stderr or done.stdout).strip()[-500:]
        raise InstallError(
            f"installed {adapter.name!r} {version} but `{executable.name} "
            f"{' '.join(adapter.spec.version_argv)}` exits {done.returncode}: {output}"
        )
