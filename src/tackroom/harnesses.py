"""Where a harness executable is, and which version it is.

The runner looks in tackroom's managed installs first
(``$XDG_DATA_HOME/tackroom/harnesses/<harness>/<version>/``), then on ``PATH``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tackroom._bounded import ask
from tackroom._files import cache_dir, read_json, write_json
from tackroom._files import data_dir as data_dir
from tackroom.adapters.versions import sort_key
from tackroom.errors import InstallError, TackroomError
from tackroom.paths import check_name, inside, read_inside, resolves_inside

if TYPE_CHECKING:
    from tackroom.adapters.adapter import Adapter

MARKER = ".tackroom-install.json"
_VERSION = re.compile(r"(\d+\.\d+(?:\.\d+)?(?:[-+.][0-9A-Za-z.-]+)?)")


@dataclass(frozen=True)
class Located:
    """An executable tackroom found for an adapter."""

    path: Path
    origin: str
    """``managed`` (installed by tackroom), ``path`` (on PATH) or ``configured`` (a path in the adapter)."""
    version: str | None
    """The version, when known without running it (managed installs record theirs)."""
    bin_dir: Path | None = None
    """A directory to put first on the child's PATH (a managed install's runtime, e.g. node or bun)."""


def harness_root(harness: str, env: Mapping[str, str] | None = None) -> Path:
    """The managed-install directory of one harness (one subdirectory per version).

    ``harnesses/`` itself may be a link (a user who keeps installs on another
    disk); nothing below it is followed through one.
    """
    return inside(data_dir(env) / "harnesses", check_name(harness, "harness name"))


def install_prefix(harness: str, version: str, env: Mapping[str, str] | None = None) -> Path:
    """Where one version of a harness is installed, proven inside the harness's directory."""
    return inside(harness_root(harness, env), check_name(version, "version"))


def managed_installs(harness: str, env: Mapping[str, str] | None = None) -> dict[str, Path]:
    """Installed version -> prefix, for the installs of ``harness`` that left a marker.

    Entries that are links, or whose names could not have been made by an
    install, are not installs (a link could point a prefix anywhere).
    """
    root = harness_root(harness, env)
    if not root.is_dir():
        return {}
    found = {}
    for entry in root.iterdir():
        marker = entry / MARKER
        if _safe(entry.name) and not entry.is_symlink() and marker.is_file() and not marker.is_symlink():
            found[entry.name] = entry
    return found


def _safe(name: str) -> bool:
    try:
        check_name(name, "version")
    except TackroomError:
        return False
    return True


def read_marker(prefix: Path) -> dict[str, str]:
    """The record a completed install left in its prefix, checked.

    The marker is outside input (anything can write the data directory): its
    ``executable`` and ``bin_dir`` must lie inside the prefix, or it is refused
    with :class:`InstallError`, so a marker can never point a run at another program.
    """
    fix = f"reinstall it (`tackroom install NAME --version {prefix.name}`) or delete {str(prefix)!r}"
    try:
        raw = read_inside(prefix, MARKER)
        data = json.loads(raw.decode("utf-8")) if raw is not None else None
    except (TackroomError, ValueError, RecursionError) as exc:
        raise InstallError(f"{prefix / MARKER}: not an install marker tackroom wrote ({exc}); {fix}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("executable"), str):
        raise InstallError(f"{prefix / MARKER}: not an install marker tackroom wrote; {fix}")
    marker = {str(k): str(v) for k, v in data.items()}
    for key in ("executable", "bin_dir"):
        if marker.get(key):
            try:
                # npm's bin entries are links into node_modules: where they lead is what must stay inside.
                resolves_inside(prefix, marker[key])
            except TackroomError as exc:
                raise InstallError(
                    f"{prefix / MARKER}: {key} {marker[key]!r} is outside the install ({exc}); {fix}"
                ) from exc
    return marker


def locate(
    adapter: Adapter, env: Mapping[str, str] | None = None, *, version: str | None = None
) -> Located | None:
    """Find the executable of ``adapter``: a configured path, a managed install, then PATH.

    Of several managed installs the verified version wins, then the newest.
    With ``version``, only the managed install of exactly that version will do.
    """
    env = os.environ if env is None else env
    executable = adapter.executable
    if version is not None:
        return _managed(managed_installs(adapter.harness, env), [check_name(version, "version")])
    if "/" in executable:
        path = Path(executable).expanduser()
        return Located(path, "configured", None) if path.exists() else None
    installs = managed_installs(adapter.harness, env)
    preferred = adapter.verified_with
    ordered = sorted(installs, key=lambda v: (v == preferred, sort_key(v)), reverse=True)
    found = _managed(installs, ordered)
    if found is not None:
        return found
    on_path = shutil.which(executable, path=env.get("PATH"))
    return Located(Path(on_path), "path", None) if on_path else None


def _managed(installs: Mapping[str, Path], versions: list[str]) -> Located | None:
    """The first of ``versions`` that is installed and whose executable is there."""
    for version in versions:
        if version not in installs:
            continue
        marker = read_marker(installs[version])
        path = Path(marker["executable"])
        if path.exists():
            bin_dir = Path(marker["bin_dir"]) if marker.get("bin_dir") else path.parent
            return Located(path, "managed", version, bin_dir)
    return None


def probe_version(adapter: Adapter, located: Located, timeout_s: float = 15.0) -> str | None:
    """The executable's version: recorded, cached for this exact file, or read by running ``version_argv``.

    The cache (``$XDG_CACHE_HOME/tackroom/versions.json``) is keyed on the
    executable's path, size and modification time, so a harness is asked once
    per binary rather than once per run.
    """
    if located.version is not None:
        return located.version
    try:
        stat = located.path.resolve().stat()
    except OSError:
        return None
    key = f"{located.path.resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}\0{' '.join(adapter.version_argv)}"
    cache_file = cache_dir() / "versions.json"
    cache = read_json(cache_file)
    if isinstance(cache.get(key), str):
        return str(cache[key])
    version = _run_version(adapter, located, timeout_s)
    if version is not None:
        cache[key] = version
        write_json(cache_file, cache)
    return version


def _run_version(adapter: Adapter, located: Located, timeout_s: float) -> str | None:
    """Ask the executable its version; a flood or a hang costs nothing (:mod:`tackroom._bounded`)."""
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    try:
        done = ask([str(located.path), *adapter.version_argv], env=env, timeout_s=timeout_s)
    except OSError:
        return None
    stdout, stderr = (stream.decode("utf-8", "replace") for stream in (done.stdout, done.stderr))
    match = _VERSION.search(stdout) or _VERSION.search(stderr)
    return match.group(1).rstrip(".") if match else None
